/* cmx_fully_connected_s8: an int8 fully connected layer (per-tensor quantization, symmetric
 * weights). Replaces arm_fully_connected_s8 on the DSP cores (M4/M7/M33) and on Helium (M55).
 *
 * DSP: CMSIS-NN multiplies two weight rows at a time by the input: each group of four inputs is
 * loaded and widened once per two rows, and each output is requantized in ~20 instructions. Here
 * four rows share each widened group (their words laid out side by side by the plan; single loads
 * in runs, cmx_dsp.h's cmx_fc_quads4), and the requantization is CMSIS-NN's
 * inline-assembly sequence (cmx_requantize.h).
 *
 * Helium: CMSIS-NN walks four row pointers with a predicated load of every 16 columns. Here the
 * plan lays the four rows' 16 columns side by side (each row padded with zeros to 16), so one
 * pointer with post-increment feeds the four VMLADAVs and only the last group is predicated; the
 * accumulation (the plan's kernel sums, which hold the bias and the input offset's share) and the
 * requantization (arm_requantize_mve) are CMSIS-NN's. */
#include "arm_nnfunctions.h"
#include "arm_nnsupportfunctions.h"
#include "cmx_dsp.h"
#include "cmx_nn.h"
#include "cmx_requantize.h"

/* The column counts it takes: a multiple of CMX_FC_COLS (the plan reads the two plain defines:
 * cmx_gen's kernel_facts.py). */
#define CMX_FC_COLS_MVE 1 /* any column count (the last group predicated) */
#define CMX_FC_COLS_DSP 4
#if defined(ARM_MATH_MVEI)
#define CMX_FC_COLS CMX_FC_COLS_MVE
#else
#define CMX_FC_COLS CMX_FC_COLS_DSP
#endif

#if defined(ARM_MATH_MVEI)
static void rows_mve(const int8_t* input, const int8_t* weights, const int32_t* kernel_sum, int32_t rows,
                     int32_t cols, const cmsis_nn_per_tensor_quant_params* quant, const cmsis_nn_fc_params* p,
                     int8_t* output) {
  const int32_t full = cols / 16, tail = cols % 16;
  const int8_t* w = weights;
  int32_t at = 0;
  for (; at + 3 < rows; at += 4) {
    int32_t a0 = kernel_sum[at], a1 = kernel_sum[at + 1], a2 = kernel_sum[at + 2], a3 = kernel_sum[at + 3];
    const int8_t* x = input;
    for (int32_t g = full; g > 0; --g) {
      const int8x16_t v = vldrbq_s8(x);
      x += 16;
      a0 = vmladavaq_s8(a0, vldrbq_s8(w), v);
      a1 = vmladavaq_s8(a1, vldrbq_s8(w + 16), v);
      a2 = vmladavaq_s8(a2, vldrbq_s8(w + 32), v);
      a3 = vmladavaq_s8(a3, vldrbq_s8(w + 48), v);
      w += 64;
    }
    if (tail) { /* the weights past the last column are zeros; the input is not read past its end */
      const int8x16_t v = vldrbq_z_s8(x, vctp8q((uint32_t)tail));
      a0 = vmladavaq_s8(a0, vldrbq_s8(w), v);
      a1 = vmladavaq_s8(a1, vldrbq_s8(w + 16), v);
      a2 = vmladavaq_s8(a2, vldrbq_s8(w + 32), v);
      a3 = vmladavaq_s8(a3, vldrbq_s8(w + 48), v);
      w += 64;
    }
    int32x4_t acc = {a0, a1, a2, a3};
    acc = arm_requantize_mve(acc, quant->multiplier, quant->shift);
    acc = vaddq_n_s32(acc, p->output_offset);
    acc = vmaxq_s32(acc, vdupq_n_s32(p->activation.min));
    acc = vminq_s32(acc, vdupq_n_s32(p->activation.max));
    vstrbq_s32(output + at, acc);
  }
  for (; at < rows; ++at) { /* the last rows % 4 rows, each padded to a multiple of 16 */
    int32_t a = kernel_sum[at];
    const int8_t* x = input;
    for (int32_t g = full; g > 0; --g, x += 16, w += 16) a = vmladavaq_s8(a, vldrbq_s8(w), vldrbq_s8(x));
    if (tail) {
      a = vmladavaq_s8(a, vldrbq_s8(w), vldrbq_z_s8(x, vctp8q((uint32_t)tail)));
      w += 16;
    }
    a = arm_nn_requantize(a, quant->multiplier, quant->shift) + p->output_offset;
    a = a < p->activation.min ? p->activation.min : a;
    output[at] = (int8_t)(a > p->activation.max ? p->activation.max : a);
  }
}
#endif

#if defined(ARM_MATH_DSP) && !defined(ARM_MATH_MVEI)

/* One input row: out[r] for every r, fast / full as in cmx_finish. */
static inline __attribute__((always_inline)) void row(const int8_t* input, const int8_t* weights, const int32_t* bias,
                                                      int32_t rows, int32_t cols, int32_t input_offset,
                                                      int32_t multiplier, int32_t shift, cmx_out_range r,
                                                      int8_t* output, const int fast, const int full) {
  const uint32_t offset2 = ((uint32_t)(uint16_t)input_offset << 16) | (uint16_t)input_offset;
  const int32_t groups = cols / 4;
  const void* wp = weights;
  int32_t at = 0;
  for (; at + 3 < rows; at += 4) {
    int32_t a0 = bias ? bias[at] : 0, a1 = bias ? bias[at + 1] : 0;
    int32_t a2 = bias ? bias[at + 2] : 0, a3 = bias ? bias[at + 3] : 0;
    const int8_t* x = input;
    int32_t left = groups;
#if defined(__GNUC__) && defined(__thumb2__)
    if (groups >= 4) {
      const cmx_acc4 sum = cmx_fc_quads4((cmx_acc4){a0, a1, a2, a3}, &x, &wp, groups / 4, offset2);
      a0 = sum.a0, a1 = sum.a1, a2 = sum.a2, a3 = sum.a3;
      left = groups % 4;
    }
#endif
    for (int32_t g = left; g > 0; --g) {
      const uint32_t v = (uint32_t)arm_nn_read_s8x4_ia(&x);
      const uint32_t x02 = SXTAB16(offset2, v), x13 = SXTAB16_RORn(offset2, v, 8);
      word_pair w = load_pair(&wp, 1); /* rows at, at + 1: four weights each */
      a0 = SMLAD(SXTB16(w.lo), x02, a0);
      a0 = SMLAD(SXTB16_RORn(w.lo, 8), x13, a0);
      a1 = SMLAD(SXTB16(w.hi), x02, a1);
      a1 = SMLAD(SXTB16_RORn(w.hi, 8), x13, a1);
      w = load_pair(&wp, 1); /* rows at + 2, at + 3 */
      a2 = SMLAD(SXTB16(w.lo), x02, a2);
      a2 = SMLAD(SXTB16_RORn(w.lo, 8), x13, a2);
      a3 = SMLAD(SXTB16(w.hi), x02, a3);
      a3 = SMLAD(SXTB16_RORn(w.hi, 8), x13, a3);
    }
    output[at] = cmx_finish(a0, multiplier, shift, r, fast, full);
    output[at + 1] = cmx_finish(a1, multiplier, shift, r, fast, full);
    output[at + 2] = cmx_finish(a2, multiplier, shift, r, fast, full);
    output[at + 3] = cmx_finish(a3, multiplier, shift, r, fast, full);
  }
  const int8_t* w = (const int8_t*)wp;
  for (; at < rows; ++at) { /* the last rows % 4 rows, each in order */
    int32_t a = bias ? bias[at] : 0;
    const int8_t* x = input;
    for (int32_t g = groups; g > 0; --g) {
      const uint32_t v = (uint32_t)arm_nn_read_s8x4_ia(&x);
      const uint32_t k = (uint32_t)arm_nn_read_s8x4_ia(&w);
      a = SMLAD(SXTB16(k), SXTAB16(offset2, v), a);
      a = SMLAD(SXTB16_RORn(k, 8), SXTAB16_RORn(offset2, v, 8), a);
    }
    output[at] = cmx_finish(a, multiplier, shift, r, fast, full);
  }
}
#endif

arm_cmsis_nn_status cmx_fully_connected_s8(const cmsis_nn_fc_params* params,
                                           const cmsis_nn_per_tensor_quant_params* quant,
                                           const cmsis_nn_dims* input_dims, const int8_t* input,
                                           const cmsis_nn_dims* filter_dims, const int8_t* weights,
                                           const int32_t* bias, const int32_t* kernel_sum,
                                           const cmsis_nn_dims* output_dims, int8_t* output) {
  const int32_t cols = filter_dims->n, rows = output_dims->c;
  if (params->filter_offset != 0 || cols % CMX_FC_COLS != 0 || ((uintptr_t)weights & 3) != 0) {
    return ARM_CMSIS_NN_ARG_ERROR;
  }
#if defined(ARM_MATH_MVEI)
  (void)bias; /* in the kernel sums, as CMSIS-NN's MVE path reads it */
  if (kernel_sum == NULL) return ARM_CMSIS_NN_ARG_ERROR;
  for (int32_t n = 0; n < input_dims->n; ++n, input += cols, output += rows) {
    rows_mve(input, weights, kernel_sum, rows, cols, quant, params, output);
  }
  return ARM_CMSIS_NN_SUCCESS;
#elif defined(ARM_MATH_DSP)
  (void)kernel_sum;
  const int fast = quant->shift <= -1 && quant->multiplier > 0; /* cmx_requantize_right_any: no look at the biases */
  const int full = params->activation.min == -128 && params->activation.max == 127;
  const cmx_out_range r = {params->output_offset, params->activation.min, params->activation.max};
  for (int32_t n = 0; n < input_dims->n; ++n, input += cols, output += rows) {
    if (fast && full) {
      row(input, weights, bias, rows, cols, params->input_offset, quant->multiplier, quant->shift, r, output,
          CMX_RIGHT_ANY, 1);
    } else {
      row(input, weights, bias, rows, cols, params->input_offset, quant->multiplier, quant->shift, r, output, 0, 0);
    }
  }
  return ARM_CMSIS_NN_SUCCESS;
#else
  (void)input_dims, (void)input, (void)bias, (void)kernel_sum, (void)output;
  return ARM_CMSIS_NN_NO_IMPL_ERROR; /* the plan chooses this kernel only for a core with DSP or MVE */
#endif
}
