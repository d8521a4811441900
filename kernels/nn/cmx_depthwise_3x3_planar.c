/* cmx_depthwise_3x3_s8's planar path (cmx_depthwise_3x3_s8.c says when). */
#include <string.h>

#include "cmx_depthwise_3x3.h"

#if defined(ARM_MATH_DSP) && !defined(ARM_MATH_MVEI)
/* The planar path (stride 1, rows of CMX_DW_PLANAR_WIDTH outputs or more, the plan gives scratch:
 * cmx_depthwise_3x3_s8_scratch_bytes). A depthwise output reads one channel, so that channel's
 * input rows of a band of CMX_DW_BAND output rows are copied into a plane of int16 (band + 2 rows
 * of CMX_DW_PLANE_ROW values, padding as the input's zero point, -input_offset) and two horizontally
 * adjacent outputs take each kernel row as two SMLADs and two SMLAxBs over three words of the plane
 * (21 instructions for 18 MACs), the channel's nine weights in six registers; the input offset
 * times the weights' sum joins the bias once per channel (int32 wraparound, as the sum it stands
 * for). TinyEngine's HWC -> CHW depthwise, a band at a time. A band writes every channel of its
 * rows while later channels' rows are still to be read: the overlap walk
 * (cmx_gen/lower/delegate/overlap.py) takes a band as one direct block. */
static inline __attribute__((always_inline)) uint32_t word_at(const int16_t* p) {
  uint32_t v;
  memcpy(&v, p, 4); /* two int16 values; unaligned for odd columns (M4/M7/M33 allow it) */
  return v;
}

/* Channel c's rows [top, top + rows) of the input, columns [-padding.w, width - padding.w), as the
 * first `width` values of plane rows. */
static void fill_plane(const cmsis_nn_dw_conv_params* p, const cmsis_nn_dims* in_d, const int8_t* input, int32_t c,
                       int32_t top, int32_t rows, int32_t width, int16_t* plane) {
  const int32_t ch = in_d->c, in_w = in_d->w;
  const int16_t zero = (int16_t)-p->input_offset;
  const int32_t x0 = p->padding.w < width ? p->padding.w : width; /* plane column of input column 0 */
  const int32_t inside = in_w < width - x0 ? in_w : width - x0;
  for (int32_t r = 0; r < rows; ++r, plane += CMX_DW_PLANE_ROW) {
    const int32_t y = top + r;
    if (y < 0 || y >= in_d->h) {
      for (int32_t j = 0; j < width; ++j) plane[j] = zero;
      continue;
    }
    int32_t j = 0;
    for (; j < x0; ++j) plane[j] = zero;
    const int8_t* in = input + (y * in_w) * ch + c;
    int16_t* to = plane + x0;
    int32_t k = 0;
    for (; k + 3 < inside; k += 4, in += 4 * ch, to += 4) { /* two words of two values: PKHBT, STR */
      const uint32_t lo = (uint32_t)(uint16_t)in[0] | ((uint32_t)in[ch] << 16);
      const uint32_t hi = (uint32_t)(uint16_t)in[2 * ch] | ((uint32_t)in[3 * ch] << 16);
      memcpy(to, &lo, 4);
      memcpy(to + 2, &hi, 4);
    }
    for (; k < inside; ++k, in += ch) *to++ = *in;
    for (j = x0 + inside; j < width; ++j) plane[j] = zero;
  }
}

static inline __attribute__((always_inline)) void planar_body(const cmsis_nn_dw_conv_params* p, const int32_t* mult,
                                                              const int32_t* shift, const cmsis_nn_dims* in_d,
                                                              const int8_t* input, const int8_t* filter,
                                                              const int32_t* bias, const cmsis_nn_dims* out_d,
                                                              int8_t* output, int16_t* plane, const int fast,
                                                              const int full) {
  const int32_t ch = in_d->c, out_w = out_d->w, width = out_w + 3; /* the columns the outputs read */
  const cmx_out_range r = {p->output_offset, p->activation.min, p->activation.max};
  for (int32_t oy0 = 0; oy0 < out_d->h; oy0 += CMX_DW_BAND) {
    const int32_t band = out_d->h - oy0 < CMX_DW_BAND ? out_d->h - oy0 : CMX_DW_BAND;
    const int32_t top = oy0 - p->padding.h;
    for (int32_t c = 0; c < ch; ++c) {
      fill_plane(p, in_d, input, c, top, band + 2, width, plane);
      const int8_t* f = filter + c;
      const int32_t f0 = f[0], f1 = f[ch], f2 = f[2 * ch], f3 = f[3 * ch], f4 = f[4 * ch], f5 = f[5 * ch];
      const int32_t f6 = f[6 * ch], f7 = f[7 * ch], f8 = f[8 * ch];
      const uint32_t w01_0 = (uint32_t)(uint16_t)f0 | ((uint32_t)f1 << 16);
      const uint32_t w01_1 = (uint32_t)(uint16_t)f3 | ((uint32_t)f4 << 16);
      const uint32_t w01_2 = (uint32_t)(uint16_t)f6 | ((uint32_t)f7 << 16), w2_2 = (uint32_t)f8;
      /* the first two rows' third weights in one register (SMLAxB takes the bottom, SMLAxT the top) */
      const uint32_t w2_01 = (uint32_t)(uint16_t)f2 | ((uint32_t)f5 << 16);
      const int32_t sum = f0 + f1 + f2 + f3 + f4 + f5 + f6 + f7 + f8;
      /* int32 wraparound, as CMSIS-NN's sum of (x + offset) * w */
      const int32_t start = (int32_t)((uint32_t)(bias ? bias[c] : 0) + (uint32_t)p->input_offset * (uint32_t)sum);
      const int32_t m = mult[c], s = shift[c];
      for (int32_t oy = 0; oy < band; ++oy) {
        const int16_t* q0 = plane + oy * CMX_DW_PLANE_ROW;
#define q1 (q0 + CMX_DW_PLANE_ROW)
#define q2 (q0 + 2 * CMX_DW_PLANE_ROW)
        int8_t* out = output + ((oy0 + oy) * out_w) * ch + c;
        int32_t x = 0;
        for (; x + 1 < out_w; x += 2, q0 += 2, out += 2 * ch) {
          int32_t a0 = start, a1 = start;
          uint32_t C = word_at(q0 + 2); /* columns x + 2, x + 3: the third tap of both outputs */
          a0 = (int32_t)__smlad(word_at(q0), w01_0, (uint32_t)a0);
          a1 = (int32_t)__smlad(word_at(q0 + 1), w01_0, (uint32_t)a1);
          a0 = __smlabb((int32_t)C, (int32_t)w2_01, a0);
          a1 = __smlatb((int32_t)C, (int32_t)w2_01, a1);
          C = word_at(q1 + 2);
          a0 = (int32_t)__smlad(word_at(q1), w01_1, (uint32_t)a0);
          a1 = (int32_t)__smlad(word_at(q1 + 1), w01_1, (uint32_t)a1);
          a0 = __smlabt((int32_t)C, (int32_t)w2_01, a0);
          a1 = __smlatt((int32_t)C, (int32_t)w2_01, a1);
          C = word_at(q2 + 2);
          a0 = (int32_t)__smlad(word_at(q2), w01_2, (uint32_t)a0);
          a1 = (int32_t)__smlad(word_at(q2 + 1), w01_2, (uint32_t)a1);
          a0 = __smlabb((int32_t)C, (int32_t)w2_2, a0);
          a1 = __smlatb((int32_t)C, (int32_t)w2_2, a1);
          out[0] = cmx_finish(a0, m, s, r, fast, full);
          out[ch] = cmx_finish(a1, m, s, r, fast, full);
        }
        if (x < out_w) { /* an odd last column */
          int32_t a0 = start;
          a0 = (int32_t)__smlad(word_at(q0), w01_0, (uint32_t)a0);
          a0 = __smlabb((int32_t)word_at(q0 + 2), (int32_t)w2_01, a0);
          a0 = (int32_t)__smlad(word_at(q1), w01_1, (uint32_t)a0);
          a0 = __smlabt((int32_t)word_at(q1 + 2), (int32_t)w2_01, a0);
          a0 = (int32_t)__smlad(word_at(q2), w01_2, (uint32_t)a0);
          a0 = __smlabb((int32_t)word_at(q2 + 2), (int32_t)w2_2, a0);
          out[0] = cmx_finish(a0, m, s, r, fast, full);
        }
#undef q1
#undef q2
      }
    }
  }
}

__attribute__((noinline)) void cmx_dw3x3_planar_fast_full(CMX_DW_ARGS) { planar_body(p, mult, shift, in_d, input, filter, bias, out_d, output, buf, 1, 1); }
__attribute__((noinline)) void cmx_dw3x3_planar_any(CMX_DW_ARGS) { planar_body(p, mult, shift, in_d, input, filter, bias, out_d, output, buf, 0, 0); }
#endif
