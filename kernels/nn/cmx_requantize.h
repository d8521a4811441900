/* The requantization cmx-gen's kernels share: arm_nn_requantize's result, in fewer instructions
 * where the layer allows (kernels/nn/). Internal to kernels/nn/. */
#pragma once

#include <stdint.h>

#include "arm_nnsupportfunctions.h"

/* arm_nn_requantize for a right shift (shift <= -1): CMSIS-NN's inline-assembly form of its
 * doubling high multiply and rounding divide, which equal the C forms for every input. */
static inline int32_t cmx_requantize_right(int32_t acc, int32_t multiplier, int32_t right_shift) {
#if defined(__GNUC__) && defined(__thumb2__)
  int32_t lo, hi;
  __asm("smull\t%0, %1, %2, %3\n\t"
        "lsrs\t%0, %0, #31\n\t"
        "adc\t%1, %0, %1, lsl #1"
        : "=&r"(lo), "=&r"(hi)
        : "r"(acc), "r"(multiplier)
        : "cc");
  /* hi is never INT32_MIN here (a product's high half, multiplier > 0), so no test for it */
  int32_t t = hi + (hi >> 31);
  int32_t r;
  __asm("asrs\t%0, %1, %2\n\t"
        "adc\t%0, %0, #0"
        : "=r"(r)
        : "r"(t), "r"(right_shift)
        : "cc");
  return r;
#else
  return arm_nn_requantize(acc, multiplier, -right_shift);
#endif
}

/* The quantization and clamping of one output, with the layer's constants in registers. */
typedef struct {
  int32_t offset, min, max;
} cmx_out_range;

static inline __attribute__((always_inline)) int8_t cmx_finish(int32_t acc, int32_t multiplier, int32_t shift,
                                                           cmx_out_range r, const int fast, const int full) {
  int32_t v = fast ? cmx_requantize_right(acc, multiplier, -shift) : arm_nn_requantize(acc, multiplier, shift);
  v += r.offset;
  if (full) return (int8_t)__ssat(v, 8); /* the range is all of int8: one SSAT */
  v = v < r.min ? r.min : v;
  v = v > r.max ? r.max : v;
  return (int8_t)v;
}


/* Whether every channel takes cmx_requantize_right: shift <= -1 and multiplier > 0. */
static inline int cmx_all_right_shifts(const int32_t* multiplier, const int32_t* shift, int32_t channels) {
  int fast = 1;
  for (int32_t c = 0; c < channels; ++c) fast &= shift[c] <= -1 && multiplier[c] > 0;
  return fast;
}
