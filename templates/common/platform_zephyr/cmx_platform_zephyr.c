/*
 * cmx_platform_zephyr.c - cmx_platform.h for Zephyr: console through printk, counter from the
 * kernel's hardware cycle counter, exit by parking the main thread.
 *
 * The runner itself (cmx/runner/cmx_runner.cpp) is the same source as in the bare-metal app;
 * this file is all that differs. Samples from the host (cmx_platform_read) come as frames on the
 * console UART: "CMX1", the byte count (u32, little-endian), the bytes; a count of 0 ends them.
 */
#include <stdint.h>

#include <zephyr/device.h>
#include <zephyr/kernel.h>
#include <zephyr/sys/printk.h>
#if DT_HAS_CHOSEN(zephyr_console) && defined(CONFIG_SERIAL)
#include <zephyr/drivers/uart.h>
#endif

#include "cmx_platform.h"

/* The core clock from the cmx-gen board database (CMakeLists.txt passes it). */
#ifndef CMX_CPU_CLOCK_HZ
#define CMX_CPU_CLOCK_HZ 0
#endif

int cmx_platform_init(void)
{
	return 0; /* Zephyr brought up the console and the system timer before main() */
}

void cmx_platform_puts(const char *text)
{
	printk("%s", text);
}

/* Timer cycles, extended to 64 bits where the timer has only 32. */
static uint64_t timer_cycles(void)
{
#if defined(CONFIG_TIMER_HAS_64BIT_CYCLE_COUNTER)
	return k_cycle_get_64();
#else
	static uint32_t last;
	static uint64_t high;
	uint32_t now = k_cycle_get_32();

	if (now < last) {
		high += (uint64_t)1 << 32;
	}
	last = now;
	return high | now;
#endif
}

/* CPU cycles. Where the system timer is the core's SysTick the two are the same; where it runs
 * slower (e.g. the 32 kHz RTC on nRF) timer cycles are scaled to the core clock, so the result
 * keeps the unit "cycles" at the timer's resolution. */
uint64_t cmx_platform_counter(void)
{
	uint64_t t = timer_cycles();
#if CMX_CPU_CLOCK_HZ > 0
	uint64_t hz = (uint64_t)sys_clock_hw_cycles_per_sec();

	if (hz != 0 && hz != (uint64_t)CMX_CPU_CLOCK_HZ) {
		t = (t / hz) * CMX_CPU_CLOCK_HZ + ((t % hz) * CMX_CPU_CLOCK_HZ) / hz;
	}
#endif
	return t;
}

/* Stack high-water mark of the main thread, which runs the model: Zephyr paints thread stacks
 * at creation with CONFIG_INIT_STACKS and measures them with CONFIG_THREAD_STACK_INFO (both in
 * prj.conf). Without them the runner leaves stack= out of the result line. */
#if defined(CONFIG_INIT_STACKS) && defined(CONFIG_THREAD_STACK_INFO)
int cmx_platform_stack(uint32_t *used, uint32_t *size)
{
	struct k_thread *self = k_current_get();
	size_t unused = 0;

	if (k_thread_stack_space_get(self, &unused) != 0) {
		return -1;
	}
	*size = (uint32_t)self->stack_info.size;
	*used = (uint32_t)(self->stack_info.size - unused);
	return 0;
}
#endif

const char *cmx_platform_counter_name(void)
{
	return "cycles";
}

void cmx_platform_exit(int status)
{
	/* Nothing to return to on Zephyr: the result line is out (Twister's console harness and
	 * `cmx-gen run` read it). On failure, stop with a kernel panic: its "ZEPHYR FATAL ERROR"
	 * line makes Twister fail the test at once instead of waiting for its timeout. On success,
	 * park the main thread and let the idle thread run. */
	if (status != 0) {
		k_panic();
	}
	for (;;) {
		k_sleep(K_FOREVER);
	}
}

#if DT_HAS_CHOSEN(zephyr_console) && defined(CONFIG_SERIAL)
static const struct device *const console_uart = DEVICE_DT_GET(DT_CHOSEN(zephyr_console));

/* The next byte on the console, or -1 when none came within timeout_ms (-1: wait for ever). */
static int console_getc(int64_t timeout_ms)
{
	const int64_t end = k_uptime_get() + timeout_ms;
	unsigned char c;

	while (uart_poll_in(console_uart, &c) != 0) {
		if (timeout_ms >= 0 && k_uptime_get() >= end) {
			return -1;
		}
		k_yield();
	}
	return c;
}

int cmx_platform_read(void *buffer, uint32_t nbytes)
{
	static const char magic[4] = {'C', 'M', 'X', '1'};
	uint32_t count = 0;

	if (!device_is_ready(console_uart)) {
		return 0;
	}
	for (int i = 0; i < 4; ++i) {
		int c = console_getc(i == 0 ? 20 : 1000);

		if (c != magic[i]) {
			return 0; /* the host sends nothing: the application takes the reference input */
		}
	}
	for (int i = 0; i < 4; ++i) {
		int c = console_getc(1000);

		if (c < 0) {
			return -1;
		}
		count |= (uint32_t)c << (8 * i);
	}
	if (count != nbytes) {
		return -1;
	}
	for (uint32_t i = 0; i < nbytes; ++i) {
		int c = console_getc(1000);

		if (c < 0) {
			return -1;
		}
		((uint8_t *)buffer)[i] = (uint8_t)c;
	}
	return (int)nbytes;
}
#endif
