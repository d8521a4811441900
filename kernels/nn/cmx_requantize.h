/* The requantization cmx-gen's kernels share: arm_nn_requantize's result, in fewer instructions
 * where the layer allows (kernels/nn/). Internal to kernels/nn/. */
#pragma once

#include <stdint.h>

#include "arm_nnsupportfunctions.h"

/* arm_nn_divide_by_power_of_two(hi, right_shift) + addend (right_shift >= 1; hi never INT32_MIN: a
 * product's high half with multiplier > 0): the shift's last bit out rounds half up, after a negative value
 * is moved down by one (ties away from zero), in the ADC that adds the addend (an output offset: an
 * instruction less than adding it after; a constant 0 an immediate). */
static inline __attribute__((always_inline)) int32_t cmx_rounding_divide(int32_t hi, int32_t right_shift,
                                                                         int32_t addend) {
#if defined(__GNUC__) && defined(__thumb2__)
  int32_t t = hi + (hi >> 31); /* shifted in place: no register apart from the addend's for the result */
  __asm("asrs\t%0, %0, %1\n\t"
        "adc\t%0, %0, %2"
        : "+r"(t)
        : "r"(right_shift), "rI"(addend)
        : "cc");
  return t;
#else
  return arm_nn_divide_by_power_of_two(hi, right_shift) + addend;
#endif
}

/* arm_nn_doubling_high_mult_no_sat of an accumulator inside (-2^30, 2^30) (cmx_accumulators_small
 * says when every one is): (acc * m + 2^30) >> 31 is SMMULR's rounded high half of 2 * acc * m, one
 * instruction where CMSIS-NN's inline-assembly form takes three. */
static inline int32_t cmx_doubling_high_small(int32_t acc, int32_t multiplier) {
#if defined(__GNUC__) && defined(__thumb2__)
  int32_t hi; /* |hi| < 2^30 (|acc| < 2^30, multiplier < 2^31) */
  __asm("smmulr\t%0, %1, %2" : "=r"(hi) : "r"((int32_t)((uint32_t)acc << 1)), "r"(multiplier));
  return hi;
#else
  return arm_nn_doubling_high_mult_no_sat(acc, multiplier);
#endif
}

/* arm_nn_doubling_high_mult_no_sat of any accumulator: CMSIS-NN's inline-assembly form (three
 * instructions). */
static inline int32_t cmx_doubling_high_any(int32_t acc, int32_t multiplier) {
#if defined(__GNUC__) && defined(__thumb2__)
  int32_t lo, hi;
  __asm("smull\t%0, %1, %2, %3\n\t"
        "lsrs\t%0, %0, #31\n\t"
        "adc\t%1, %0, %1, lsl #1"
        : "=&r"(lo), "=&r"(hi)
        : "r"(acc), "r"(multiplier)
        : "cc");
  return hi;
#else
  return arm_nn_doubling_high_mult_no_sat(acc, multiplier);
#endif
}

/* arm_nn_requantize for a right shift (shift <= -1) of an accumulator inside (-2^30, 2^30): the same
 * result for every such input. */
static inline int32_t cmx_requantize_right(int32_t acc, int32_t multiplier, int32_t right_shift) {
  return cmx_rounding_divide(cmx_doubling_high_small(acc, multiplier), right_shift, 0);
}

/* arm_nn_requantize for a right shift (shift <= -1) of any accumulator. For a layer whose outputs are too
 * few to pay for cmx_accumulators_small's look at every bias (a fully connected layer of one row: a bias
 * an output). */
static inline int32_t cmx_requantize_right_any(int32_t acc, int32_t multiplier, int32_t right_shift) {
  return cmx_rounding_divide(cmx_doubling_high_any(acc, multiplier), right_shift, 0);
}

/* The quantization and clamping of one output, with the layer's constants in registers. fast: 1,
 * cmx_requantize_right (every shift right, every accumulator inside +-2^30); CMX_RIGHT_ANY,
 * cmx_requantize_right_any (every shift right); 0, arm_nn_requantize. The fast forms add the output offset
 * in their rounding divide. */
#define CMX_RIGHT_ANY 2
typedef struct {
  int32_t offset, min, max;
} cmx_out_range;

static inline __attribute__((always_inline)) int8_t cmx_finish(int32_t acc, int32_t multiplier, int32_t shift,
                                                           cmx_out_range r, const int fast, const int full) {
  int32_t v = fast == CMX_RIGHT_ANY ? cmx_rounding_divide(cmx_doubling_high_any(acc, multiplier), -shift, r.offset)
             : fast                  ? cmx_rounding_divide(cmx_doubling_high_small(acc, multiplier), -shift, r.offset)
                                     : arm_nn_requantize(acc, multiplier, shift) + r.offset;
  if (full) return (int8_t)__ssat(v, 8); /* the range is all of int8: one SSAT */
  v = v < r.min ? r.min : v;
  v = v > r.max ? r.max : v;
  return (int8_t)v;
}


/* Whether a layer is floored: its output offset at or below the least output it keeps (a ReLU's output, zero
 * point -128), so every value the rounding divide leaves below zero ends at that least output (SSAT's or
 * the clamp's) after the offset, however the divide rounded it. The divide then needs no move of a negative
 * value (ties away from zero) first: an instruction an output less (CMX_ASM_FINISH_FLOORED). */
static inline int cmx_floored(int32_t output_offset, int32_t act_min) { return output_offset <= act_min; }

/* Whether every channel shifts right: shift <= -1 and multiplier > 0 (cmx_requantize_mve's fast form). */
static inline int cmx_all_right_shifts(const int32_t* multiplier, const int32_t* shift, int32_t channels) {
  int fast = 1;
  for (int32_t c = 0; c < channels; ++c) fast &= shift[c] <= -1 && multiplier[c] > 0;
  return fast;
}

/* Whether every accumulator of a layer stays inside (-2^30, 2^30) whatever the input, as
 * cmx_requantize_right needs: a channel's bias plus `terms` products of an input value with the
 * offset added (|x + offset| <= 128 + |offset|) and an int8 weight (|w| <= 128). */
static inline int64_t cmx_bias_room(int32_t terms, int32_t input_offset) { /* the largest |bias| allowed, or < 0 */
  const int64_t value = 128 + (input_offset < 0 ? -(int64_t)input_offset : (int64_t)input_offset);
  return ((int64_t)1 << 30) - 1 - (int64_t)terms * value * 128;
}
/* |bias| <= room (cmx_bias_room, >= 0) as one unsigned compare in 32 bits (room < 2^30) */
static inline int cmx_bias_small(int32_t bias, int64_t room) {
  return (uint32_t)bias + (uint32_t)room <= 2 * (uint32_t)room;
}
static inline int cmx_accumulators_small(const int32_t* bias, int32_t channels, int32_t terms, int32_t input_offset) {
  const int64_t room = cmx_bias_room(terms, input_offset);
  if (room < 0) return 0;
  int small = 1; /* a scan of every channel per call */
  for (int32_t c = 0; bias && c < channels; ++c) small &= cmx_bias_small(bias[c], room);
  return small;
}

#if defined(ARM_MATH_MVEI)
#include <arm_mve.h>

/* arm_divide_by_power_of_two_mve_32x4 where every lane's shift is right (shift <= -1), written out
 * with the shift as it comes (called with the shift negated, GCC 12 keeps the double negation and a
 * larger frame), and its fixup `(v & shift) >> 31` as `v >> 31`: every lane's shift has its sign bit
 * set, so the AND keeps v's (one instruction less of the M55's integer pipe). */
static inline __attribute__((always_inline)) int32x4_t cmx_divide_right_mve(int32x4_t v, int32x4_t shift) {
  return vrshlq_s32(vqaddq_s32(v, vshrq_n_s32(v, 31)), shift);
}

/* arm_requantize_mve_32x4, per lane; `fast` where every shift is a right shift (cmx_all_right_shifts:
 * shift <= -1, its left shift 0): the doubling high multiply, then cmx_divide_right_mve. */
static inline __attribute__((always_inline)) int32x4_t cmx_requantize_mve(int32x4_t acc, int32x4_t mult,
                                                                          int32x4_t shift, const int fast) {
  if (!fast) return arm_requantize_mve_32x4(acc, mult, shift);
  return cmx_divide_right_mve(vqrdmulhq_s32(acc, mult), shift);
}
#endif
