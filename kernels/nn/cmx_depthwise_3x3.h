/* cmx_depthwise_3x3_s8's paths (kernels/nn/cmx_depthwise_3x3_*.c) and what they share: the paths'
 * shapes and scratch, and each path's entry for each combination of fast and full it is called with.
 * Internal to kernels/nn/. */
#pragma once

#include "arm_nnfunctions.h"
#include "arm_nnsupportfunctions.h"
#include "cmx_dsp.h"
#include "cmx_nn.h"
#include "cmx_requantize.h"

/* The planar and grouped paths' shapes and scratch (their constants and functions on integers:
 * cmx_nn_layout.h). */
#if defined(ARM_MATH_DSP) && !defined(ARM_MATH_MVEI)
static inline int32_t grouped_width(const cmsis_nn_dw_conv_params* p, const cmsis_nn_dims* out_d) {
  return cmx_dw3x3_grouped_width(out_d->w, p->stride.w);
}

static inline int planar_shape(const cmsis_nn_dw_conv_params* p, const cmsis_nn_dims* out_d) {
  return cmx_dw3x3_planar(p->stride.h, p->stride.w, out_d->w);
}
#endif

/* Each path and each combination of fast and full it is called with is a function of its own:
 * GCC allocates registers per function, and the paths inlined into one measured slower (VWW's
 * planar layers +7 %). */
#define CMX_DW_ARGS                                                                                           \
  const cmsis_nn_dw_conv_params *p, const int32_t *mult, const int32_t *shift, const cmsis_nn_dims *in_d,       \
      const int8_t *input, const int8_t *filter, const int32_t *bias, const cmsis_nn_dims *out_d, int8_t *output, \
      void *buf

/* the walk (cmx_depthwise_3x3_walk.c): every core, four channels a pixel (Helium: eight) */
void cmx_dw3x3_walk_fast_full(CMX_DW_ARGS);
void cmx_dw3x3_walk_fast(CMX_DW_ARGS);
void cmx_dw3x3_walk_any(CMX_DW_ARGS);
/* Whether cmx_dw3x3_walk_fast_full runs in assembly (the channels in fours; more than a chunk only
 * where the output does not overlap the input or lies whole pixels from it): faster than the
 * grouped path, and safe wherever the plan placed a band (its lead is longer than the walk's). */
int cmx_dw3x3_walk_in_assembly(const cmsis_nn_dims* in_d, const cmsis_nn_dims* out_d, const int8_t* input,
                               const int8_t* output);
#if defined(ARM_MATH_DSP) && !defined(ARM_MATH_MVEI)
/* the planar path (cmx_depthwise_3x3_planar.c) and the grouped one (cmx_depthwise_3x3_grouped.c) */
void cmx_dw3x3_planar_fast_full(CMX_DW_ARGS);
void cmx_dw3x3_planar_any(CMX_DW_ARGS);
void cmx_dw3x3_grouped_fast_full(CMX_DW_ARGS);
void cmx_dw3x3_grouped_any(CMX_DW_ARGS);
#endif
