/*
 * cmx_app.h - what an application around the model API needs on this platform: the console, the
 * counter, samples sent by the host, and the lines `cmx-gen run --app` / `--data` read.
 *
 * Plain C over cmx.h and cmx_platform.h. Your main() (user/main.c, Zephyr src/main.c) calls these;
 * replace any of them with your own code (a sensor driver instead of cmx_app_default_input()).
 */
#ifndef CMX_APP_H
#define CMX_APP_H

#include <stdint.h>

#include "cmx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where an input came from (cmx_app_default_input's result). */
typedef enum {
  CMX_APP_INPUT_END = -1,      /* the host's samples have ended: stop */
  CMX_APP_INPUT_REFERENCE = 0, /* the host sent nothing: the embedded reference input */
  CMX_APP_INPUT_HOST = 1       /* a sample the host sent (`cmx-gen run --data`) */
} cmx_app_input;

/* Bring up the console and the counter (once, before anything else). 0 on success. */
int cmx_app_init(void);

/* Fill every input of `model`: the raw bytes of the next sample when the host sends them (all
 * inputs in order, each in its memory order), else the reference input cmx-gen embedded. */
cmx_app_input cmx_app_default_input(cmx_model* model);

/* The platform counter ("instr" under QEMU, "cycles" elsewhere) and its name. */
uint64_t cmx_app_counter(void);
const char* cmx_app_counter_name(void);

/* One line per call, e.g.
 *   cmx-gen: call 0 input=reference instr=107156 method=6156/6352 planned=1856/1856 temp=212/448 top=3:0.996,8:0.004,5:0
 * top-k (k = 3) for a classifier (one output of 2..1000 values), else min/max/mean of output 0;
 * values dequantized. With `bytes` set, each output's raw bytes follow as
 * `cmx-gen: out <output> <offset> <hex>` lines (what `cmx-gen run` compares bit for bit). */
void cmx_app_print_call(cmx_model* model, uint32_t call, cmx_app_input input, uint64_t count, int bytes);

/* `cmx-gen: FAIL error=<status>:0x<detail> at=<what>` for a failed call. */
void cmx_app_print_error(cmx_model* model, const char* what, cmx_status status);

/* `cmx-gen: done calls=<n>`: the application's loop has ended. */
void cmx_app_print_done(uint32_t calls);

/* Print a line of your own on the cmx-gen console (a newline is added). */
void cmx_app_puts(const char* text);

/* Stop (bare metal: semihosting exit under QEMU/FVP, sleep on a board; Zephyr: park the thread). */
void cmx_app_exit(int status);

#ifdef __cplusplus
}
#endif

#endif /* CMX_APP_H */
