/* cmx_fully_connected_s8: an int8 fully connected layer (per-tensor quantization, symmetric
 * weights), for the DSP cores (M4/M7/M33). Replaces arm_fully_connected_s8 there.
 *
 * CMSIS-NN's DSP path multiplies two weight rows at a time by the input: each group of four
 * inputs is loaded and widened once per two rows, and each output is requantized in ~20
 * instructions. Here four rows share each widened group (their words laid out side by side by the
 * plan, two LDRDs), 23 instructions per 16 MACs against CMSIS-NN's ~14 per 8, and the
 * requantization is CMSIS-NN's inline-assembly sequence (cmx_requantize.h). */
#include "arm_nnfunctions.h"
#include "arm_nnsupportfunctions.h"
#include "cmx_dsp.h"
#include "cmx_nn.h"
#include "cmx_requantize.h"

void cmx_fully_connected_s8_weights(int32_t rows, int32_t cols, const int8_t* filter, int8_t* out) {
  const int32_t blocks = rows / 4;
  for (int32_t r = 0; r < rows; ++r) {
    for (int32_t i = 0; i < cols; ++i) {
      const int32_t at = r < blocks * 4 ? ((r / 4) * cols + (i & ~3)) * 4 + (r % 4) * 4 + (i & 3) : r * cols + i;
      out[at] = filter[r * cols + i];
    }
  }
}

#if defined(ARM_MATH_DSP)
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
    for (int32_t g = groups; g > 0; --g) {
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
                                           const int32_t* bias, const cmsis_nn_dims* output_dims, int8_t* output) {
#if !defined(ARM_MATH_DSP)
  (void)params, (void)quant, (void)input_dims, (void)input, (void)filter_dims, (void)weights, (void)bias;
  (void)output_dims, (void)output;
  return ARM_CMSIS_NN_NO_IMPL_ERROR; /* the plan chooses this kernel only for a core with DSP */
#else
  const int32_t cols = filter_dims->n, rows = output_dims->c;
  if (params->filter_offset != 0 || cols % 4 != 0 || ((uintptr_t)weights & 3) != 0) return ARM_CMSIS_NN_ARG_ERROR;
  const int fast = quant->shift <= -1 && quant->multiplier > 0;
  const int full = params->activation.min == -128 && params->activation.max == 127;
  const cmx_out_range r = {params->output_offset, params->activation.min, params->activation.max};
  for (int32_t n = 0; n < input_dims->n; ++n, input += cols, output += rows) {
    if (fast && full) {
      row(input, weights, bias, rows, cols, params->input_offset, quant->multiplier, quant->shift, r, output, 1, 1);
    } else {
      row(input, weights, bias, rows, cols, params->input_offset, quant->multiplier, quant->shift, r, output, 0, 0);
    }
  }
  return ARM_CMSIS_NN_SUCCESS;
#endif
}
