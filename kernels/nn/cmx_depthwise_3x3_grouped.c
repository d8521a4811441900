/* cmx_depthwise_3x3_s8's grouped path (cmx_depthwise_3x3_s8.c says when). */
#include <string.h>

#include "cmx_depthwise_3x3.h"

#if defined(ARM_MATH_DSP) && !defined(ARM_MATH_MVEI)
/* The grouped path (the shapes the planar path does not take: any stride, narrow rows; channels a
 * multiple of four; the plan gives scratch). For a band of CMX_DW_GROUP_BAND output rows and four
 * channels at a time, the input rows the band reads, padding included, are widened once into the
 * scratch with the input offset added (SXTAB16: words (x0, x2), (x1, x3) a position, padding 0),
 * the four channels' nine weights widened the same way, and every output of the band takes each
 * tap as two LDRDs and four 16 x 16 multiply-accumulates (the walk widens each input value again
 * for every tap that reads it: 10 instructions a tap where this takes 6). Bands and channel
 * groups in the planar path's order: the overlap walk takes a band as one direct block. */
/* Channels [c, c + 4) of input rows [top, top + rows), columns [-padding.w, width - padding.w):
 * two words a position. */
static void fill_group(const cmsis_nn_dw_conv_params* p, const cmsis_nn_dims* in_d, const int8_t* input, int32_t c,
                       int32_t top, int32_t rows, int32_t width, uint32_t* buf) {
  const int32_t ch = in_d->c, in_w = in_d->w;
  const uint32_t offset2 = ((uint32_t)(uint16_t)p->input_offset << 16) | (uint16_t)p->input_offset;
  const int32_t x0 = p->padding.w < width ? p->padding.w : width; /* position of input column 0 */
  const int32_t inside = in_w < width - x0 ? in_w : width - x0;
  for (int32_t r = 0; r < rows; ++r, buf += 2 * width) {
    const int32_t y = top + r;
    if (y < 0 || y >= in_d->h) {
      memset(buf, 0, (size_t)width * 8);
      continue;
    }
    uint32_t* to = buf;
    for (int32_t j = 0; j < x0; ++j, to += 2) to[0] = to[1] = 0;
    const int8_t* in = input + (y * in_w) * ch + c;
    for (int32_t k = 0; k < inside; ++k, in += ch, to += 2) {
      const uint32_t v = (uint32_t)arm_nn_read_s8x4(in);
      to[0] = __sxtab16(offset2, v);
      to[1] = SXTAB16_RORn(offset2, v, 8);
    }
    for (int32_t j = x0 + inside; j < width; ++j, to += 2) to[0] = to[1] = 0;
  }
}

static inline __attribute__((always_inline)) void grouped_body(const cmsis_nn_dw_conv_params* p, const int32_t* mult,
                                                               const int32_t* shift, const cmsis_nn_dims* in_d,
                                                               const int8_t* input, const int8_t* filter,
                                                               const int32_t* bias, const cmsis_nn_dims* out_d,
                                                               int8_t* output, uint32_t* buf, const int fast,
                                                               const int full) {
  const int32_t ch = in_d->c, out_w = out_d->w, width = grouped_width(p, out_d);
  const int32_t step = 2 * p->stride.w, row_step = 2 * p->stride.h * width, w2 = 2 * width;
  const cmx_out_range r = {p->output_offset, p->activation.min, p->activation.max};
  uint32_t weights[18]; /* a group's nine taps: (w0, w2), (w1, w3) */
  for (int32_t oy0 = 0; oy0 < out_d->h; oy0 += CMX_DW_GROUP_BAND) {
    const int32_t band = out_d->h - oy0 < CMX_DW_GROUP_BAND ? out_d->h - oy0 : CMX_DW_GROUP_BAND;
    const int32_t top = oy0 * p->stride.h - p->padding.h;
    for (int32_t c = 0; c < ch; c += 4) {
      fill_group(p, in_d, input, c, top, (band - 1) * p->stride.h + 3, width, buf);
      for (int32_t k = 0; k < 9; ++k) {
        const uint32_t v = (uint32_t)arm_nn_read_s8x4(filter + k * ch + c);
        weights[2 * k] = SXTB16(v);
        weights[2 * k + 1] = SXTB16_RORn(v, 8);
      }
      const int32_t b0 = bias ? bias[c] : 0, b1 = bias ? bias[c + 1] : 0;
      const int32_t b2 = bias ? bias[c + 2] : 0, b3 = bias ? bias[c + 3] : 0;
      const uint32_t* row = buf;
      for (int32_t oy = 0; oy < band; ++oy, row += row_step) {
        int8_t* out = output + ((oy0 + oy) * out_w) * ch + c;
        const uint32_t* q = row;
        for (int32_t ox = 0; ox < out_w; ++ox, q += step, out += ch) {
          int32_t a0 = b0, a1 = b1, a2 = b2, a3 = b3;
          cmx_dw_nine_taps(&a0, &a1, &a2, &a3, q, weights, w2 * 4);
          out[0] = cmx_finish(a0, mult[c], shift[c], r, fast, full);
          out[1] = cmx_finish(a1, mult[c + 1], shift[c + 1], r, fast, full);
          out[2] = cmx_finish(a2, mult[c + 2], shift[c + 2], r, fast, full);
          out[3] = cmx_finish(a3, mult[c + 3], shift[c + 3], r, fast, full);
        }
      }
    }
  }
}

__attribute__((noinline)) void cmx_dw3x3_grouped_fast_full(CMX_DW_ARGS) { grouped_body(p, mult, shift, in_d, input, filter, bias, out_d, output, buf, 1, 1); }
__attribute__((noinline)) void cmx_dw3x3_grouped_any(CMX_DW_ARGS) { grouped_body(p, mult, shift, in_d, input, filter, bias, out_d, output, buf, 0, 0); }
#endif
