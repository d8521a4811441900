/* cmx_add_s8: arm_elementwise_add_s8's result (cmx_nn.h), for the DSP cores in about a third of its
 * cycles (issue 51: it was 5.5 % of the four MLPerf Tiny networks' M4 cycles, 11 % of ResNet-8's, at
 * ~100 cycles an element). CMSIS-NN's DSP loop calls arm_nn_requantize three times an element in C
 * and spills; here, where no shift is left (TFLite's adds: the inputs' 0 or right, the output's
 * right), each of the three is one SMMULR where the terms stay inside 2^30 (small_terms), else
 * CMSIS-NN's exact three-instruction form, with the rounding divide where the shift is right; an
 * element at a time. On Helium, four elements a step as CMSIS-NN's MVE loop computes them, in fewer
 * instructions of the integer pipe (which bounds it on the M55): the offset and the left shift as one
 * VMLAS (x * 2^left + offset * 2^left, the same word as (x + offset) << left), a shift of 0 without its
 * rounding divide (an identity), and a right shift's fixup without its VAND (x >> 31 is the fixup when
 * every lane's shift is right). A left shift takes CMSIS-NN's function itself.
 *
 * Element for element as CMSIS-NN computes it: the first block_size & ~3 elements take their input
 * plus offset as the low half of an SADD16 lane, `(x + offset) & 0xFFFF`, shifted left; the last
 * block_size & 3 take `(x + offset) << left_shift` (its scalar loop). Elements are read and written
 * in order, one at a time: an output may lie over its input (lower/delegate/overlap.py). */
#include "arm_nnfunctions.h"
#include "cmx_nn.h"
#include "cmx_requantize.h"

#if defined(ARM_MATH_DSP) && !defined(ARM_MATH_MVEI)
/* arm_nn_requantize(acc, multiplier, -right) for right >= 0: its doubling high multiply alone where
 * the shift is 0 (TFLite gives the input of the larger scale multiplier 2^30, shift 0), else with the
 * rounding divide; `small`: |acc| < 2^30, SMMULR's one instruction. */
static inline __attribute__((always_inline)) int32_t requantize(int32_t acc, int32_t multiplier, int32_t right,
                                                                int zero, int small) {
  if (zero) {
    return small ? cmx_doubling_high_small(acc, multiplier) : arm_nn_doubling_high_mult_no_sat(acc, multiplier);
  }
  return small ? cmx_requantize_right(acc, multiplier, right) : cmx_requantize_right_any(acc, multiplier, right);
}

/* Whether every shifted input, and the sum of the two requantized, lies inside +-2^30 (add_run's
 * small): |x + offset| <= 128 + |offset|, a doubling high multiply and a rounding divide each add at
 * most one to the magnitude of the exact quotient. */
static int small_terms(int32_t off1, int32_t m1, int32_t r1, int32_t off2, int32_t m2, int32_t r2, int32_t left_shift) {
  const int64_t v1 = (int64_t)(128 + (off1 < 0 ? -(int64_t)off1 : off1)) << left_shift;
  const int64_t v2 = (int64_t)(128 + (off2 < 0 ? -(int64_t)off2 : off2)) << left_shift;
  const int64_t a1 = (((v1 * m1) >> 31) >> r1) + 2, a2 = (((v2 * m2) >> 31) >> r2) + 2;
  const int64_t limit = (int64_t)1 << 30;
  return v1 < limit && v2 < limit && a1 + a2 < limit;
}

/* n elements. small: a left shift of 16 to 22 (TFLite's adds take 20) where small_terms holds: the low
 * half's bits above 16 leave the word, so every element is `(x + offset) << left_shift`, and each
 * multiply is SMMULR's. Else each element as CMSIS-NN takes it: the first
 * n & ~3 as the low half of an SADD16 lane, `(x + offset) & 0xFFFF`, the last n & 3 as
 * `(x + offset)`, shifted left. z1, z2: input 1's, input 2's shift is 0. */
static inline __attribute__((always_inline)) void add_run(const int8_t* in1, const int8_t* in2, int32_t off1,
                                                          int32_t off2, int32_t left_shift, int8_t* out,
                                                          const int32_t* q, int32_t n, int small, int z1, int z2,
                                                          int full) {
  const int32_t paired = small ? 0 : n & ~3;
  for (int32_t i = 0; i < n; ++i) {
    const uint32_t mask = i < paired ? 0xFFFFu : 0xFFFFFFFFu;
    const int32_t a = requantize((int32_t)(((uint32_t)(in1[i] + off1) & mask) << left_shift), q[0], q[1], z1, small);
    const int32_t b = requantize((int32_t)(((uint32_t)(in2[i] + off2) & mask) << left_shift), q[2], q[3], z2, small);
    int32_t sum = requantize(a + b, q[4], q[5], 0, small) + q[6];
    if (full) {
      out[i] = (int8_t)__ssat(sum, 8);
    } else {
      sum = sum < q[7] ? q[7] : sum;
      out[i] = (int8_t)(sum > q[8] ? q[8] : sum);
    }
  }
}
#endif

#if defined(ARM_MATH_MVEI)
#include <arm_mve.h>

/* arm_requantize_mve(v, multiplier, shift) for shift <= 0: the doubling high multiply (by a scalar:
 * no Q register held for it), then cmx_divide_right_mve where the shift is right. `zero`: the shift
 * is 0, the divide an identity. */
static inline __attribute__((always_inline)) int32x4_t requantize4(int32x4_t v, int32_t multiplier, int32x4_t shift,
                                                                   int zero) {
  v = vqrdmulhq_n_s32(v, multiplier);
  return zero ? v : cmx_divide_right_mve(v, shift);
}

/* n elements, four a step, the last step predicated (as CMSIS-NN's loop). q as add_run's. */
static inline __attribute__((always_inline)) void add_run4(const int8_t* in1, const int8_t* in2, int32_t off1,
                                                           int32_t off2, int32_t left_shift, int8_t* out,
                                                           const int32_t* q, int32_t n, int z1, int z2) {
  const int32_t base1 = (int32_t)((uint32_t)off1 << left_shift), base2 = (int32_t)((uint32_t)off2 << left_shift);
  const int32x4_t scale = vdupq_n_s32((int32_t)(1u << left_shift));
  const int32x4_t r1 = vdupq_n_s32(-q[1]), r2 = vdupq_n_s32(-q[3]), r3 = vdupq_n_s32(-q[5]);
  const int32x4_t lo = vdupq_n_s32(q[7]), hi = vdupq_n_s32(q[8]);
  for (; n > 0; n -= 4, in1 += 4, in2 += 4, out += 4) {
    const mve_pred16_t p = vctp32q((uint32_t)n);
    const int32x4_t a = requantize4(vmlasq_n_s32(vldrbq_z_s32(in1, p), scale, base1), q[0], r1, z1);
    const int32x4_t b = requantize4(vmlasq_n_s32(vldrbq_z_s32(in2, p), scale, base2), q[2], r2, z2);
    const int32x4_t sum = vaddq_n_s32(requantize4(vaddq_s32(a, b), q[4], r3, 0), q[6]);
    vstrbq_p_s32(out, vminq_s32(vmaxq_s32(sum, lo), hi), p);
  }
}
#endif

arm_cmsis_nn_status cmx_add_s8(const int8_t* input_1, const int8_t* input_2, int32_t input_1_offset,
                               int32_t input_1_mult, int32_t input_1_shift, int32_t input_2_offset,
                               int32_t input_2_mult, int32_t input_2_shift, int32_t left_shift, int8_t* output,
                               int32_t out_offset, int32_t out_mult, int32_t out_shift, int32_t out_activation_min,
                               int32_t out_activation_max, int32_t block_size) {
#if defined(ARM_MATH_DSP) && !defined(ARM_MATH_MVEI)
  const int right = input_1_shift <= 0 && input_2_shift <= 0 && out_shift <= -1 && input_1_mult > 0 &&
                    input_2_mult > 0 && out_mult > 0 && left_shift >= 0 && left_shift < 32;
  if (right) {
    /* the constants in the order add_run reads them: multipliers, right shifts, output offset, range */
    const int32_t q[9] = {input_1_mult,  -input_1_shift, input_2_mult,       -input_2_shift,    out_mult,
                          -out_shift,    out_offset,     out_activation_min, out_activation_max};
    const int small = left_shift >= 16 && left_shift <= 22 &&
                      small_terms(input_1_offset, input_1_mult, -input_1_shift, input_2_offset, input_2_mult,
                                  -input_2_shift, left_shift);
    const int z1 = input_1_shift == 0, z2 = input_2_shift == 0;
    const int full = out_activation_min == -128 && out_activation_max == 127;
#define CMX_ADD_RUN(z1, z2) \
  add_run(input_1, input_2, input_1_offset, input_2_offset, left_shift, output, q, block_size, 1, z1, z2, 1)
    if (small && full && z1 && !z2) {
      CMX_ADD_RUN(1, 0); /* the common add: the input of the larger scale first */
    } else if (small && full && !z1 && z2) {
      CMX_ADD_RUN(0, 1);
    } else if (small && full && !z1 && !z2) {
      CMX_ADD_RUN(0, 0);
    } else if (small && full) {
      CMX_ADD_RUN(1, 1);
    } else { /* any other (an activation range, a left shift outside 16-22): one loop, its choices per element */
      add_run(input_1, input_2, input_1_offset, input_2_offset, left_shift, output, q, block_size, small, z1, z2, full);
    }
#undef CMX_ADD_RUN
    return ARM_CMSIS_NN_SUCCESS;
  }
#elif defined(ARM_MATH_MVEI)
  if (input_1_shift <= 0 && input_2_shift <= 0 && out_shift <= -1 && left_shift >= 0 && left_shift < 32) {
    const int32_t q[9] = {input_1_mult,  -input_1_shift, input_2_mult,       -input_2_shift,    out_mult,
                          -out_shift,    out_offset,     out_activation_min, out_activation_max};
    const int z1 = input_1_shift == 0, z2 = input_2_shift == 0;
#define CMX_ADD_RUN4(z1, z2) add_run4(input_1, input_2, input_1_offset, input_2_offset, left_shift, output, q, \
                                      block_size, z1, z2)
    if (z1 && !z2) {
      CMX_ADD_RUN4(1, 0); /* the common add: the input of the larger scale first */
    } else if (!z1 && z2) {
      CMX_ADD_RUN4(0, 1);
    } else if (!z1 && !z2) {
      CMX_ADD_RUN4(0, 0);
    } else {
      CMX_ADD_RUN4(1, 1);
    }
#undef CMX_ADD_RUN4
    return ARM_CMSIS_NN_SUCCESS;
  }
#endif
  return arm_elementwise_add_s8(input_1, input_2, input_1_offset, input_1_mult, input_1_shift, input_2_offset,
                                input_2_mult, input_2_shift, left_shift, output, out_offset, out_mult, out_shift,
                                out_activation_min, out_activation_max, block_size);
}
