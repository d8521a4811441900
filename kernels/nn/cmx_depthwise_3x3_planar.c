/* cmx_depthwise_3x3_s8's planar path (cmx_depthwise_3x3_s8.c says when). */
#include <string.h>

#include "cmx_depthwise_3x3.h"

#if defined(ARM_MATH_DSP) && !defined(ARM_MATH_MVEI)
/* The planar path (stride 1, rows of CMX_DW_PLANAR_WIDTH outputs or more, or of CMX_DW_PLANAR_NARROW or
 * CMX_DW_PLANAR_THREE where fast and full; the plan gives scratch: cmx_depthwise_3x3_s8_scratch_bytes). A depthwise output
 * reads one channel, so that channel's input rows of a band of CMX_DW_BAND output rows are copied into a plane of int16 (band + 2 rows
 * of CMX_DW_PLANE_ROW values, padding as the input's zero point, -input_offset; the padding written
 * once a band) and four horizontally adjacent outputs take each kernel row as four SMLADs and four
 * SMLAxBs over three words of the plane (fast, full: cmx_dw_plane_row4, 88 cycles for four
 * outputs on the M4), else two outputs in C (21 instructions for 18 MACs); the input offset
 * times the weights' sum joins the bias once per channel (int32 wraparound, as the sum it stands
 * for). Fast and full, a row of an even width runs its four-output blocks and (4n + 2) a block of two,
 * every row of a channel's band in one loop (cmx_dw_plane_rows, rows_band), the band's rows filled in
 * one loop too; rows of six and of three (a MobileNet's 6 x 6 and 3 x 3 maps, fill_six, fill_three) run
 * blocks of three outputs (cmx_dw_plane_rows3): VWW's 6 x 6 x 128 layers ~136 K cycles, where the
 * four-channel walk took 215 K (its taps load weights for every pixel, 2.5 cycles a MAC; the plane's
 * SMLADs ~1) and blocks of four and two 145 K; its 3 x 3 x 256 layer 108 K where the walk took 129 K
 * (a third of it each channel's weight pairs and start, made for nine outputs).
 * TinyEngine's HWC -> CHW depthwise, a band at a time. A band writes every channel of its
 * rows while later channels' rows are still to be read: the overlap walk
 * (cmx_gen/lower/delegate/overlap.py) takes a band as one direct block. */
#if defined(__GNUC__) && defined(__thumb2__)
#define CMX_PLANE_ROW4 /* cmx_dw_plane_row4 (cmx_dsp.h) reads plane rows 128 bytes apart */
_Static_assert(CMX_DW_PLANE_ROW * sizeof(int16_t) == 128, "cmx_dw_plane_row4's row offsets");
#endif

/* two weights doubled, as int16 halves (lo, hi) */
static inline uint32_t pair2(int32_t lo, int32_t hi) { /* PKHBT and SADD16: no doubling a weight */
  const uint32_t p = PKHBT((uint32_t)lo, (uint32_t)hi, 16);
  return SADD16(p, p);
}

static inline __attribute__((always_inline)) uint32_t word_at(const int16_t* p) {
  uint32_t v;
  memcpy(&v, p, 4); /* two int16 values; unaligned for odd columns (M4/M7/M33 allow it) */
  return v;
}

/* A band's plane, what every channel shares: rows [top, top + rows) of the input that lie outside it,
 * and the padding columns of the others ([0, x0) and [x0 + inside, width)), as the zero point
 * (-input_offset: zero once the offset is added). Written once a band; fill_channel writes the rest. */
static void fill_edges(const cmsis_nn_dims* in_d, int16_t zero, int32_t top, int32_t rows, int32_t width,
                       int32_t x0, int32_t inside, int16_t* plane) {
  for (int32_t r = 0; r < rows; ++r, plane += CMX_DW_PLANE_ROW) {
    const int32_t y = top + r;
    const int outside = y < 0 || y >= in_d->h;
    for (int32_t j = 0; j < width; ++j) {
      if (outside || j < x0 || j >= x0 + inside) plane[j] = zero;
    }
  }
}

/* Channel c's values of the band's rows inside the input: input columns [0, inside) at plane
 * columns [x0, x0 + inside). */
static void fill_channel(const cmsis_nn_dims* in_d, const int8_t* input, int32_t c, int32_t top, int32_t rows,
                         int32_t x0, int32_t inside, int16_t* plane) {
  const int32_t ch = in_d->c, in_w = in_d->w;
  const int32_t first = top < 0 ? -top : 0, last = in_d->h - top < rows ? in_d->h - top : rows;
  for (int32_t r = first; r < last; ++r) {
    const int8_t* in = input + ((top + r) * in_w) * ch + c;
    int16_t* to = plane + r * CMX_DW_PLANE_ROW + x0;
    int32_t k = 0;
    if ((x0 & 1) && inside > 0) { /* one value, so the words below are aligned (a plane row is) */
      *to++ = *in;
      in += ch;
      k = 1;
    }
#if defined(CMX_PLANE_ROW4)
    const int32_t pairs = (inside - k) >> 1;
    if (pairs > 0) {
      in = cmx_plane_fill(in, ch, to, pairs);
      to += 2 * pairs;
      k += 2 * pairs;
    }
#endif
    for (; k < inside; ++k, in += ch) *to++ = *in;
  }
}

#if defined(CMX_PLANE_ROW4)
/* Rows of six values inside the input from plane column 1 (padding of one column each side): channel c's
 * value, two pairs and a value a row, from `in` (the first row's), rows in_row bytes apart. */
static inline __attribute__((always_inline)) void fill_six(const int8_t* in, int32_t ch, int32_t in_row, int16_t* to,
                                                          int32_t rows) {
  const int32_t ch2 = 2 * ch, ch3 = 3 * ch, ch4 = 4 * ch, ch5 = 5 * ch;
  for (; rows > 0; --rows, in += in_row, to += CMX_DW_PLANE_ROW) {
    const uint32_t a = PKHBT((uint32_t)(int32_t)in[ch], (uint32_t)(int32_t)in[ch2], 16);
    const uint32_t b = PKHBT((uint32_t)(int32_t)in[ch3], (uint32_t)(int32_t)in[ch4], 16);
    to[1] = in[0];
    memcpy(to + 2, &a, 4);
    memcpy(to + 4, &b, 4);
    to[6] = in[ch5];
  }
}

/* Rows of three values inside the input from plane column 1: channel c's value and a pair a row. */
static inline __attribute__((always_inline)) void fill_three(const int8_t* in, int32_t ch, int32_t in_row, int16_t* to,
                                                            int32_t rows) {
  for (; rows > 0; --rows, in += in_row, to += CMX_DW_PLANE_ROW) {
    const uint32_t a = PKHBT((uint32_t)(int32_t)in[ch], (uint32_t)(int32_t)in[2 * ch], 16);
    to[1] = in[0];
    memcpy(to + 2, &a, 4);
  }
}

/* A band of rows of an even number of outputs, or of three, fast and full: each channel's plane (its rows inside the
 * input in one loop, cmx_plane_fill_rows), its doubled weight pairs and start, then all its rows in one loop
 * (cmx_dw_plane_rows: four-output blocks, and two outputs more where the width is 4n + 2; cmx_dw_plane_rows3: rows
 * of six or three, blocks of three). */
static void rows_band(const cmsis_nn_dw_conv_params* p, const int32_t* mult, const int32_t* shift,
                      const cmsis_nn_dims* in_d, const int8_t* input, const int8_t* filter, const int32_t* bias,
                      int8_t* output, int32_t out_w, int16_t* plane, int32_t oy0, int32_t band, int32_t x0,
                      int32_t inside) {
  const int32_t ch = in_d->c, in_w = in_d->w, top = oy0 - p->padding.h;
  const int32_t first = top < 0 ? -top : 0, last = in_d->h - top < band + 2 ? in_d->h - top : band + 2;
  const int32_t blocks = out_w & ~3; /* the outputs of a row's four-output blocks */
  const int lead = x0 & 1, tail = (inside - lead) & 1; /* a value before the pairs, and after them */
  const cmx_fill_rows fill = {ch, (in_w - inside) * ch, (inside - lead) / 2, 2 * (CMX_DW_PLANE_ROW - inside)};
  /* cmx_plane_fill_rows takes a value at both ends or at neither (the same padding each side); else fill_channel */
  const int rows = last > first && fill.pairs > 0 && lead == tail;
  const int six = rows && out_w == 6 && x0 == 1; /* fill_six: straight code, where the loop took twice as long */
  const int three = last > first && out_w == 3 && x0 == 1 && inside == 3; /* fill_three */
  /* rows of six or three: blocks of three outputs (cmx_dw_plane_rows3); else of four, and two */
  const int by_three = out_w == CMX_DW_PLANAR_NARROW || out_w == CMX_DW_PLANAR_THREE;
  cmx_plane_consts k = {0, 0, 0, ch, NULL, NULL, out_w * ch, 2 * (CMX_DW_PLANE_ROW - blocks)};
  const int floored = cmx_floored(p->output_offset, p->activation.min);
  int8_t* out = output + oy0 * out_w * ch;
  for (int32_t c = 0; c < ch; ++c, ++out) {
    if (six) {
      fill_six(input + (top + first) * in_w * ch + c, ch, in_w * ch, plane + first * CMX_DW_PLANE_ROW, last - first);
    } else if (three) {
      fill_three(input + (top + first) * in_w * ch + c, ch, in_w * ch, plane + first * CMX_DW_PLANE_ROW, last - first);
    } else if (rows) {
      cmx_plane_fill_rows(input + (top + first) * in_w * ch + c, plane + first * CMX_DW_PLANE_ROW + x0, last - first,
                          &fill, lead);
    } else {
      fill_channel(in_d, input, c, top, band + 2, x0, inside, plane);
    }
    const int8_t* f = filter + c;
    __asm__("" : "+r"(f)); /* no pointer per tap carried across channels (GCC spilled nine of them) */
    /* the rows' pairs (w0, w1), (w1, w2) two int16 halves a word, each weight doubled (SADD16) */
    const int32_t f0 = f[0], f1 = f[ch], f2 = f[2 * ch], f3 = f[3 * ch], f4 = f[4 * ch], f5 = f[5 * ch];
    const int32_t f6 = f[6 * ch], f7 = f[7 * ch], f8 = f[8 * ch];
    const int32_t sum = f0 + f1 + f2 + f3 + f4 + f5 + f6 + f7 + f8;
    const uint32_t w2x[6] = {pair2(f0, f1), pair2(f1, f2), pair2(f3, f4),
                             pair2(f4, f5), pair2(f6, f7), pair2(f7, f8)};
    /* 2 x (bias + input offset x the weights' sum), int32 wraparound as CMSIS-NN's sum */
    k.start2 = (int32_t)(((uint32_t)(bias ? bias[c] : 0) + (uint32_t)p->input_offset * (uint32_t)sum) << 1);
    k.multiplier = mult[c];
    k.right_and_offset = cmx_right_and_offset(-shift[c], p->output_offset);
    k.end = out + band * out_w * ch;
    k.row_end = out + blocks * ch;
    if (by_three) {
      cmx_dw_plane_rows3(plane, out, w2x, &k, out_w == CMX_DW_PLANAR_NARROW, floored);
    } else {
      cmx_dw_plane_rows(plane, out, w2x, &k, out_w & 2, floored);
    }
  }
}
#endif

static inline __attribute__((always_inline)) void planar_body(const cmsis_nn_dw_conv_params* p, const int32_t* mult,
                                                              const int32_t* shift, const cmsis_nn_dims* in_d,
                                                              const int8_t* input, const int8_t* filter,
                                                              const int32_t* bias, const cmsis_nn_dims* out_d,
                                                              int8_t* output, int16_t* plane, const int fast,
                                                              const int full) {
  const int32_t ch = in_d->c, out_w = out_d->w, width = out_w + 3; /* the columns the outputs read */
  const int32_t blocks = out_w / 4; /* four-output blocks a row (fast, full: cmx_dw_plane_row4) */
  const int16_t zero = (int16_t)-p->input_offset;
  const int32_t x0 = p->padding.w < width ? p->padding.w : width; /* plane column of input column 0 */
  const int32_t inside = in_d->w < width - x0 ? in_d->w : width - x0;
  (void)blocks;
  const cmx_out_range r = {p->output_offset, p->activation.min, p->activation.max};
  for (int32_t oy0 = 0; oy0 < out_d->h; oy0 += CMX_DW_BAND) {
    const int32_t band = out_d->h - oy0 < CMX_DW_BAND ? out_d->h - oy0 : CMX_DW_BAND;
    const int32_t top = oy0 - p->padding.h;
    fill_edges(in_d, zero, top, band + 2, width, x0, inside, plane);
#if defined(CMX_PLANE_ROW4)
    if (fast && full && ((out_w & 1) == 0 || out_w == CMX_DW_PLANAR_THREE)) {
      rows_band(p, mult, shift, in_d, input, filter, bias, output, out_w, plane, oy0, band, x0, inside);
      continue;
    }
#endif
    for (int32_t c = 0; c < ch; ++c) {
      fill_channel(in_d, input, c, top, band + 2, x0, inside, plane);
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
#if defined(CMX_PLANE_ROW4)
      /* the rows' weight pairs (w0, w1), (w1, w2), doubled, for the four-output blocks */
      const uint32_t w2x[6] = {pair2(f0, f1), pair2(f1, f2), pair2(f3, f4), pair2(f4, f5), pair2(f6, f7), pair2(f7, f8)};
      cmx_plane_consts k = {(int32_t)((uint32_t)start << 1), m, cmx_right_and_offset(-s, p->output_offset), ch, NULL};
#endif
      for (int32_t oy = 0; oy < band; ++oy) {
        const int16_t* q0 = plane + oy * CMX_DW_PLANE_ROW;
#define q1 (q0 + CMX_DW_PLANE_ROW)
#define q2 (q0 + 2 * CMX_DW_PLANE_ROW)
        int8_t* out = output + ((oy0 + oy) * out_w) * ch + c;
        int32_t x = 0;
#if defined(CMX_PLANE_ROW4)
        if (fast && full && blocks > 0) {
          k.end = out + blocks * 4 * ch;
          q0 = cmx_dw_plane_row4(q0, out, w2x, &k);
          out += blocks * 4 * ch;
          x = blocks * 4;
        }
#endif
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
