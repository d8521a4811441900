/*
 * cmx_platform.h - the only interface between the cmx-gen runner and an app's platform layer.
 *
 * The runner (cmx_runner.cpp) is the same for every app kind; each app kind (bare-metal,
 * Zephyr) implements these five functions in its own thin platform layer. Keep this header
 * small and stable: it is a contract between templates owned by different people.
 *
 * All functions are C linkage so a platform layer may be written in C.
 */
#ifndef CMX_PLATFORM_H
#define CMX_PLATFORM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Called once, first thing in cmx_run() or the application: bring up the console, enable the counter.
 * Returns 0 on success; non-zero makes the runner exit with that status. */
int cmx_platform_init(void);

/* Write a NUL-terminated string to the console as-is (the runner adds "\n" itself).
 * Must work before and after cmx_platform_init and must not allocate. */
void cmx_platform_puts(const char* text);

/* A free-running 64-bit counter for timing one inference.
 * Bare metal: SysTick scaled to the core clock; under QEMU with -icount shift=0 that counts
 * instructions repeatably ("instr"). Zephyr: k_cycle_get_64() ("cycles"). */
uint64_t cmx_platform_counter(void);

/* Name of the unit of cmx_platform_counter(), used as the key in the result line:
 * "instr" or "cycles". */
const char* cmx_platform_counter_name(void);

/* Stop the program with `status` (0 = PASS). Bare metal: semihosting SYS_EXIT (the QEMU/FVP exit
 * code; on hardware the debugger sees it); Zephyr: print and halt (k_panic on FAIL). Never returns. */
void cmx_platform_exit(int status) __attribute__((noreturn));

/* OPTIONAL (weak; a platform may leave it out): the stack's high-water mark since boot and its
 * size, in bytes. Return 0 and fill both to have the runner add `stack=used/size` to the result
 * line (the bare-metal platform paints the stack at reset). */
int cmx_platform_stack(uint32_t* used, uint32_t* size) __attribute__((weak));

/* OPTIONAL (weak): the next `nbytes` of input the host sends, for the application's default input
 * hook (cmx/app/cmx_app.h). Returns nbytes when a whole sample arrived, 0 when the host sends
 * nothing (the application then uses the embedded reference input), -1 when the host's stream
 * has ended. Bare metal: a file named on the semihosting command line (`cmx-input=PATH`, what
 * `cmx-gen run --data` passes), or a `CMX1` frame on the UART; Zephyr: a frame on the console. */
int cmx_platform_read(void* buffer, uint32_t nbytes) __attribute__((weak));

/* The check's entry point: loads the embedded program, runs forward on the reference input,
 * compares, prints the one result line and returns 0 (PASS) or non-zero (FAIL / error).
 * The check's main() (cmx_check_main.c) calls cmx_platform_exit(cmx_run()). */
int cmx_run(void);

#ifdef __cplusplus
}
#endif

#endif /* CMX_PLATFORM_H */
