/* cmx_depthwise_3x3_s8: a 3x3 depthwise convolution (one output channel per input channel, any
 * stride and padding, dilation 1), NHWC int8, for the DSP cores (M4/M7/M33). Replaces
 * arm_depthwise_conv_wrapper_s8 there.
 *
 * A 3x3 depthwise output sums only nine products, so its requantization is half its cost: CMSIS-NN
 * spends ~20 instructions on each output's, here it is CMSIS-NN's inline-assembly sequence (7, the
 * same result for every input) and SSAT where the range is all of int8 (cmx_requantize.h). The
 * products are four channels at a time: one word of input and one of weights per tap, widened in
 * pairs with the input offset added (SXTAB16), one 16 x 16 multiply-accumulate per channel. Pixels
 * whose 3x3 window lies inside the input take an unrolled path with no bounds tests; border pixels
 * (on DS-CNN's 25 x 5 maps 56 of 125) walk only their rows and columns inside the input the same
 * way. (Pairing two taps per SMLAD with PKHBT/PKHTB and int16 weights was measured slower: the
 * packing and the pointer spills cost what the dual multiply saves.)
 *
 * The output may share the input's bytes: pixels are written in raster order, four channels after
 * those four channels' taps are read, so an output starting far enough below the input
 * (cmx_gen/lower/delegate/overlap.py) only overwrites input no later step reads; `output` is
 * therefore not restrict.
 *
 * This file: the entry point, which checks the arguments and picks a path; each path is a file of its
 * own (cmx_depthwise_3x3_walk.c, _planar.c, _grouped.c; cmx_depthwise_3x3.h what they share). */
#include "cmx_depthwise_3x3.h"

int32_t cmx_depthwise_3x3_s8_scratch_bytes(const cmsis_nn_dw_conv_params* params, const cmsis_nn_dims* input_dims,
                                           const cmsis_nn_dims* output_dims) {
#if defined(ARM_MATH_DSP) && !defined(ARM_MATH_MVEI)
  if (params->ch_mult != 1 || input_dims->c != output_dims->c) return 0;
  return cmx_dw3x3_band_scratch_bytes(input_dims->c, output_dims->h, output_dims->w, params->stride.h,
                                      params->stride.w);
#else
  (void)params, (void)input_dims, (void)output_dims;
  return 0; /* Helium runs its own path, a core without DSP the portable one: neither takes scratch */
#endif
}

arm_cmsis_nn_status cmx_depthwise_3x3_s8(const cmsis_nn_context* ctx, const cmsis_nn_dw_conv_params* params,
                                         const cmsis_nn_per_channel_quant_params* quant, const cmsis_nn_dims* input_dims,
                                         const int8_t* input, const cmsis_nn_dims* filter_dims, const int8_t* filter,
                                         const int32_t* bias, const cmsis_nn_dims* output_dims, int8_t* output) {
  if (params->ch_mult != 1 || input_dims->c != output_dims->c || filter_dims->h != 3 || filter_dims->w != 3 ||
      params->dilation.h != 1 || params->dilation.w != 1) {
    return ARM_CMSIS_NN_ARG_ERROR;
  }
  int fast = cmx_all_right_shifts(quant->multiplier, quant->shift, output_dims->c);
#if defined(ARM_MATH_MVEI)
  /* Helium's fast form needs only the right shifts; the last c % 8 channels take cmx_requantize_right */
  if (output_dims->c % 8) fast = fast && cmx_accumulators_small(bias, output_dims->c, 9, params->input_offset);
#else
  fast = fast && cmx_accumulators_small(bias, output_dims->c, 9, params->input_offset);
#endif
  const int full = params->activation.min == -128 && params->activation.max == 127;
  const int32_t in_batch = input_dims->h * input_dims->w * input_dims->c;
  const int32_t out_batch = output_dims->h * output_dims->w * output_dims->c;
  const int32_t need = cmx_depthwise_3x3_s8_scratch_bytes(params, input_dims, output_dims);
  /* the plan gave the scratch: the planar or the grouped path (a band of rows at a time) */
  const int banded = need > 0 && ctx && ctx->buf && ctx->size >= need && ((uintptr_t)ctx->buf & 3) == 0;
  void (*run)(CMX_DW_ARGS) = fast && full ? cmx_dw3x3_walk_fast_full : fast ? cmx_dw3x3_walk_fast : cmx_dw3x3_walk_any;
#if defined(ARM_MATH_DSP) && !defined(ARM_MATH_MVEI)
  /* a narrow planar shape (rows of six) runs the plane only fast and full, else as any other shape */
  const int narrow = cmx_dw3x3_planar_narrow(params->stride.h, params->stride.w, output_dims->w);
  if (banded && planar_shape(params, output_dims) && (!narrow || (fast && full))) {
    run = fast && full ? cmx_dw3x3_planar_fast_full : cmx_dw3x3_planar_any;
  } else if (banded && cmx_dw3x3_grouped(input_dims->c, output_dims->w) &&
             !(fast && full && cmx_dw3x3_walk_in_assembly(input_dims, output_dims, input, output))) {
    run = fast && full ? cmx_dw3x3_grouped_fast_full : cmx_dw3x3_grouped_any;
  }
#endif
  for (int32_t n = 0; n < input_dims->n; ++n) {
    run(params, quant->multiplier, quant->shift, input_dims, input + n * in_batch, filter, bias, output_dims,
        output + n * out_batch, banded ? ctx->buf : NULL);
  }
  return ARM_CMSIS_NN_SUCCESS;
}
