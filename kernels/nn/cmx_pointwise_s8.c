/* cmx_pointwise_s8: a 1x1 convolution (stride 1, no padding, one group), NHWC int8, per-channel
 * quantization, on Helium (M55). Replaces arm_convolve_wrapper_s8 there for these layers (the DSP
 * cores run cmx_conv_row_s8).
 *
 * CMSIS-NN's MVE path (arm_nn_mat_mult_nt_t_s8) takes four positions against one output channel:
 * four row pointers and a weight pointer, and it sums the channel's weights again (VADDVA) in every
 * group of 16 columns for every four positions, then requantizes and scatters four bytes a
 * channel apart. Here one position against four output channels: the plan lays the four channels'
 * 16 columns side by side (cmx_fully_connected_s8_weights' layout, each row padded with zeros to 16),
 * so one pointer with post-increment feeds the four VMLADAVAs; the weight sums and the input offset
 * are in the plan's kernel sums (bias + input offset x the channel's weight sum, CMSIS-NN's
 * arm_vector_sum_s8), where the accumulators start; the four outputs are requantized as one vector
 * with their channels' multipliers and shifts (CMSIS-NN's arm_requantize_mve_32x4) and stored as
 * four contiguous bytes. The same int32 sums and the same requantization: the same bytes.
 *
 * The output may share the input's bytes: a position's outputs are written after the channels
 * before them, while its input is still read for the channels after, so the output must end below
 * the position's input (cmx_gen/lower/delegate/overlap.py: one position a block, direct). */
#include "arm_nnfunctions.h"
#include "arm_nnsupportfunctions.h"
#include "cmx_nn.h"
#include "cmx_requantize.h"

#if defined(ARM_MATH_MVEI)
/* The layer's output constants, in registers for the whole call. */
typedef struct {
  int32x4_t offset, lo, hi;
} out_range;

/* Four output channels of one position: their accumulators start at their kernel sums; `cols`
 * inputs, 16 a step, the last step tail-predicated by the loop (WLSTP/LETP, as CMSIS-NN's
 * arm_nn_mat_mult_nt_t_s8): predicated lanes load zeros and add nothing. w: the four rows' laid-out
 * weights (16 columns of each row in turn, each row padded to 16). Inline assembly for the loop:
 * with intrinsics GCC 12 re-derives the weight pointer every step and spills a counter around it
 * (11 instructions a step and 2 more a block, against these 9). */
static inline __attribute__((always_inline)) int32x4_t block4(const int8_t* x, const int8_t** wp, const int32_t* sums,
                                                              int32_t cols) {
  const int8_t* w = *wp;
  int32_t a0 = sums[0], a1 = sums[1], a2 = sums[2], a3 = sums[3];
  __asm volatile(
      "   wlstp.8         lr, %[cnt], 1f      \n"
      "2:                                     \n"
      "   vldrb.8         q0, [%[x]], #16     \n"
      "   vldrb.8         q1, [%[w]], #16     \n"
      "   vmladava.s8     %[a0], q0, q1       \n"
      "   vldrb.8         q2, [%[w]], #16     \n"
      "   vmladava.s8     %[a1], q0, q2       \n"
      "   vldrb.8         q3, [%[w]], #16     \n"
      "   vmladava.s8     %[a2], q0, q3       \n"
      "   vldrb.8         q4, [%[w]], #16     \n"
      "   vmladava.s8     %[a3], q0, q4       \n"
      "   letp            lr, 2b              \n"
      "1:                                     \n"
      : [x] "+r"(x), [w] "+r"(w), [a0] "+Te"(a0), [a1] "+Te"(a1), [a2] "+Te"(a2), [a3] "+Te"(a3)
      : [cnt] "r"(cols)
      : "q0", "q1", "q2", "q3", "q4", "memory", "r14");
  *wp = w; /* past the four rows: the next block's */
  int32x4_t acc = vdupq_n_s32(a0);
  acc = vsetq_lane_s32(a1, acc, 1);
  acc = vsetq_lane_s32(a2, acc, 2);
  return vsetq_lane_s32(a3, acc, 3);
}

/* Every position: `rows` channels from `cols` inputs each; `fast` as cmx_requantize_mve. */
static inline __attribute__((always_inline)) void positions(const cmsis_nn_conv_params* p, const int32_t* mult,
                                                            const int32_t* shift, const int8_t* input,
                                                            const int8_t* weights, const int32_t* sums, int32_t count,
                                                            int32_t cols, int32_t rows, int8_t* output,
                                                            const int fast) {
  const out_range r = {vdupq_n_s32(p->output_offset), vdupq_n_s32(p->activation.min),
                       vdupq_n_s32(p->activation.max)};
  const int32_t full = cols / 16, tail = cols % 16, padded = (full + (tail != 0)) * 16;
  const int32_t blocks = rows / 4;
  for (int32_t n = 0; n < count; ++n, input += cols, output += rows) {
    const int8_t* w = weights;
    const int32_t *s = sums, *m = mult, *sh = shift;
    int8_t* out = output;
    for (const int32_t* end = sums + 4 * blocks; s != end; s += 4, m += 4, sh += 4, out += 4) {
      int32x4_t acc = block4(input, &w, s, cols);
      acc = cmx_requantize_mve(acc, vldrwq_s32(m), vldrwq_s32(sh), fast);
      vstrbq_s32(out, vminq_s32(vmaxq_s32(vaddq_s32(acc, r.offset), r.lo), r.hi));
    }
    for (int32_t at = 4 * blocks; at < rows; ++at, w += padded) { /* the last rows % 4 channels, each on its own */
      int32_t a = sums[at];
      const int8_t* x = input;
      const int8_t* wr = w;
      for (int32_t g = full; g > 0; --g, x += 16, wr += 16) a = vmladavaq_s8(a, vldrbq_s8(wr), vldrbq_s8(x));
      if (tail) a = vmladavaq_s8(a, vldrbq_s8(wr), vldrbq_z_s8(x, vctp8q((uint32_t)tail)));
      a = arm_nn_requantize(a, mult[at], shift[at]) + p->output_offset;
      a = a < p->activation.min ? p->activation.min : a;
      output[at] = (int8_t)(a > p->activation.max ? p->activation.max : a);
    }
  }
}
#endif

arm_cmsis_nn_status cmx_pointwise_s8(const cmsis_nn_conv_params* params, const cmsis_nn_per_channel_quant_params* quant,
                                     const cmsis_nn_dims* input_dims, const int8_t* input,
                                     const cmsis_nn_dims* filter_dims, const int8_t* weights, const int32_t* kernel_sum,
                                     const cmsis_nn_dims* output_dims, int8_t* output) {
  if (filter_dims->h != 1 || filter_dims->w != 1 || filter_dims->c != input_dims->c || params->stride.h != 1 ||
      params->stride.w != 1 || params->padding.h != 0 || params->padding.w != 0 || input_dims->h != output_dims->h ||
      input_dims->w != output_dims->w || filter_dims->n != output_dims->c) {
    return ARM_CMSIS_NN_ARG_ERROR;
  }
#if defined(ARM_MATH_MVEI)
  const int32_t count = input_dims->n * input_dims->h * input_dims->w;
  const int32_t cols = input_dims->c, rows = output_dims->c;
  if (cmx_all_right_shifts(quant->multiplier, quant->shift, rows)) {
    positions(params, quant->multiplier, quant->shift, input, weights, kernel_sum, count, cols, rows, output, 1);
  } else {
    positions(params, quant->multiplier, quant->shift, input, weights, kernel_sum, count, cols, rows, output, 0);
  }
  return ARM_CMSIS_NN_SUCCESS;
#else
  (void)quant, (void)input, (void)weights, (void)kernel_sum, (void)output;
  return ARM_CMSIS_NN_NO_IMPL_ERROR; /* the plan chooses this kernel only for a Helium core */
#endif
}
