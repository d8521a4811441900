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
 * therefore not restrict. */
#include "arm_nnfunctions.h"
#include "arm_nnsupportfunctions.h"
#include "cmx_dsp.h"
#include "cmx_nn.h"
#include "cmx_requantize.h"

#include <string.h>

typedef struct {
  int32_t a0, a1, a2, a3;
} acc4;

/* Four channels of one tap: x and w are four int8 values each. */
static inline __attribute__((always_inline)) acc4 tap4(acc4 a, uint32_t x, uint32_t w, uint32_t offset2) {
#if defined(ARM_MATH_DSP)
  const uint32_t x02 = __sxtab16(offset2, x), x13 = SXTAB16_RORn(offset2, x, 8);
  const uint32_t w02 = SXTB16(w), w13 = SXTB16_RORn(w, 8);
  a.a0 = __smlabb(x02, w02, a.a0);
  a.a2 = __smlatt(x02, w02, a.a2);
  a.a1 = __smlabb(x13, w13, a.a1);
  a.a3 = __smlatt(x13, w13, a.a3);
#else
  const int32_t off = (int16_t)offset2;
  a.a0 += ((int8_t)x + off) * (int8_t)w;
  a.a1 += ((int8_t)(x >> 8) + off) * (int8_t)(w >> 8);
  a.a2 += ((int8_t)(x >> 16) + off) * (int8_t)(w >> 16);
  a.a3 += ((int8_t)(x >> 24) + off) * (int8_t)(w >> 24);
#endif
  return a;
}

#if defined(ARM_MATH_MVEI)
#include <arm_mve.h>

/* Helium: eight channels a tap in int16 lanes. One widening load of the input (offset added) and one
 * of the weights, then VMULLB/VMULLT: the even channels' products into one int32x4 accumulator, the
 * odd channels' into another (7 instructions for 8 MACs; CMSIS-NN's MVE kernel first copies every
 * 3 x 3 x C field). The requantization is CMSIS-NN's own (arm_requantize_mve_32x4) on each half,
 * and VMOVNB/VMOVNT put the halves back in channel order for one narrowing store. */
typedef struct {
  int32x4_t even, odd;
} acc8;

static inline __attribute__((always_inline)) acc8 tap8(acc8 a, const int8_t* x, const int8_t* w, int16_t offset) {
  const int16x8_t xv = vaddq_n_s16(vldrbq_s16(x), offset), wv = vldrbq_s16(w);
  a.even = vaddq_s32(a.even, vmullbq_int_s16(xv, wv));
  a.odd = vaddq_s32(a.odd, vmulltq_int_s16(xv, wv));
  return a;
}

/* The nine taps of a pixel inside the input, each tap's two loads issued before the multiplies of the
 * tap before it: on the M55 a tap alone is a chain (load, offset, two multiplies in one pipe, two
 * adds in another) that leaves the pipes idle between its steps; interleaved, one tap's loads run in
 * the load/store pipe while the other's multiplies run in the multiply pipe (docs/cycles.md). The
 * same sums in the same order as tap8's. */
static inline __attribute__((always_inline)) acc8 taps9(acc8 a, const int8_t* x, const int8_t* w, int32_t ch,
                                                        int32_t row, int16_t offset) {
  int16x8_t xv = vaddq_n_s16(vldrbq_s16(x), offset), wv = vldrbq_s16(w);
#pragma GCC unroll 8
  for (int32_t k = 1; k < 9; ++k) {
    const int32_t ky = k / 3, kx = k % 3;
    const int16x8_t xn = vldrbq_s16(x + ky * row + kx * ch), wn = vldrbq_s16(w + (3 * ky + kx) * ch);
    a.even = vaddq_s32(a.even, vmullbq_int_s16(xv, wv));
    a.odd = vaddq_s32(a.odd, vmulltq_int_s16(xv, wv));
    xv = vaddq_n_s16(xn, offset);
    wv = wn;
    /* keeps GCC from loading all nine taps ahead, or multiplying them all before adding (and spilling) */
    __asm volatile("" : "+w"(a.even), "+w"(a.odd), "+w"(xv), "+w"(wv)::"memory");
  }
  a.even = vaddq_s32(a.even, vmullbq_int_s16(xv, wv));
  a.odd = vaddq_s32(a.odd, vmulltq_int_s16(xv, wv));
  return a;
}

/* Channels [0, ch & ~7) of one output pixel whose window rows [0, rows) and columns [0, cols) from
 * `x0` lie inside the input (`w0`: their weights). The per-channel constants come de-interleaved
 * by VLD2 (even channels, odd channels); the result is narrowed with saturation to int16, the
 * output offset added with saturation and clamped there: the same bytes as clamping in int32, as
 * the activation range lies inside int8. */
static inline __attribute__((always_inline)) void pixel8(const cmsis_nn_dw_conv_params* p, const int32_t* mult,
                                                         const int32_t* shift, const int32_t* bias, int32_t ch,
                                                         int32_t row, const int8_t* x0, const int8_t* w0,
                                                         int32_t rows, int32_t cols, int8_t* out, const int fast) {
  const int16_t offset = (int16_t)p->input_offset;
  const int16x8_t lo = vdupq_n_s16((int16_t)p->activation.min), hi = vdupq_n_s16((int16_t)p->activation.max);
  const int32_t w_row = 3 * ch;
  const int32_t blocks = ch >> 3;
  for (int32_t k = 0; k < blocks; ++k, x0 += 8, w0 += 8, mult += 8, shift += 8, out += 8) {
    acc8 a;
    if (bias) {
      const int32x4x2_t b = vld2q_s32(bias + 8 * k);
      a.even = b.val[0];
      a.odd = b.val[1];
    } else {
      a.even = a.odd = vdupq_n_s32(0);
    }
    if (rows == 3 && cols == 3) {
      a = taps9(a, x0, w0, ch, row, offset);
    } else {
      /* a loop over the rows, not unrolled: unrolled, GCC loads all nine taps ahead and spills them */
      const int8_t* x = x0;
      const int8_t* w = w0;
#pragma GCC unroll 1
      for (int32_t ky = 0; ky < rows; ++ky, x += row, w += w_row) {
        a = tap8(a, x, w, offset);
        if (cols > 1) a = tap8(a, x + ch, w + ch, offset);
        if (cols > 2) a = tap8(a, x + 2 * ch, w + 2 * ch, offset);
      }
    }
    const int32x4x2_t m = vld2q_s32(mult), s = vld2q_s32(shift);
    const int32x4_t even = cmx_requantize_mve(a.even, m.val[0], s.val[0], fast);
    const int32x4_t odd = cmx_requantize_mve(a.odd, m.val[1], s.val[1], fast);
    int16x8_t v = vqmovntq_s32(vqmovnbq_s32(vuninitializedq_s16(), even), odd);
    v = vqaddq_n_s16(v, (int16_t)p->output_offset);
    vstrbq_s16(out, vminq_s16(vmaxq_s16(v, lo), hi));
  }
}
#endif

#if defined(ARM_MATH_DSP) && !defined(ARM_MATH_MVEI) && defined(__GNUC__) && defined(__thumb2__)
#define CMX_DW_WALK_CH 64 /* the most channels whose widened weights the walk keeps on the stack (1,152 B) */

/* The walk's inside pixel, four channels: the nine taps with the weights widened once per call
 * (`w`: a group's nine taps, (w0, w2), (w1, w3) each) and the input offset times the weights' sum
 * already in the accumulators, 8 instructions a tap where the C loop widens the weights at every
 * pixel and spilled (12 a tap). `x` is the window's first input, rows `row` bytes apart, taps
 * `ch` bytes apart. */
static inline __attribute__((always_inline)) acc4 walk_taps(acc4 a, const int8_t* x, const uint32_t* w, int32_t ch,
                                                            int32_t row) {
  uint32_t v, v13, w02, w13;
  const int32_t down = row - ch; /* from a row's second tap to the next row's first */
#define CMX_WALK_TAP(load, wo)                          \
  load                                                  \
  "sxtb16 %[v13], %[v], ror #8\n\t"                     \
  "sxtb16 %[v], %[v]\n\t"                               \
  "ldrd %[w02], %[w13], [%[w], #" #wo "]\n\t"           \
  "smlabb %[a0], %[v], %[w02], %[a0]\n\t"               \
  "smlatt %[a2], %[v], %[w02], %[a2]\n\t"               \
  "smlabb %[a1], %[v13], %[w13], %[a1]\n\t"             \
  "smlatt %[a3], %[v13], %[w13], %[a3]\n\t"
#define CMX_WALK_ROW(w0, w1, w2)                                                     \
  CMX_WALK_TAP("ldr %[v], [%[x]]\n\t", w0)                                            \
  CMX_WALK_TAP("ldr %[v], [%[x], %[ch]]\n\t", w1)                                     \
  "add %[x], %[x], %[ch]\n\t"                                                         \
  CMX_WALK_TAP("ldr %[v], [%[x], %[ch]]\n\t", w2)
  __asm(CMX_WALK_ROW(0, 8, 16) "add %[x], %[x], %[down]\n\t" CMX_WALK_ROW(24, 32, 40)
        "add %[x], %[x], %[down]\n\t" CMX_WALK_ROW(48, 56, 64)
        : [a0] "+r"(a.a0), [a1] "+r"(a.a1), [a2] "+r"(a.a2), [a3] "+r"(a.a3), [x] "+r"(x), [v] "=&r"(v),
          [v13] "=&r"(v13), [w02] "=&r"(w02), [w13] "=&r"(w13)
        : [w] "r"(w), [ch] "r"(ch), [down] "r"(down)
        : "memory");
#undef CMX_WALK_ROW
#undef CMX_WALK_TAP
  return a;
}
#endif

static inline __attribute__((always_inline)) void body(const cmsis_nn_dw_conv_params* p, const int32_t* mult,
                                                       const int32_t* shift, const cmsis_nn_dims* in_d,
                                                       const int8_t* input, const int8_t* filter, const int32_t* bias,
                                                       const cmsis_nn_dims* out_d, int8_t* output,
                                                       const int fast, const int full) {
  const int32_t ch = in_d->c, in_w = in_d->w, in_h = in_d->h;
  const int32_t row = in_w * ch, ch4 = ch & ~3;
  const uint32_t offset2 = ((uint32_t)(uint16_t)p->input_offset << 16) | (uint16_t)p->input_offset;
  const cmx_out_range r = {p->output_offset, p->activation.min, p->activation.max};
#if defined(CMX_DW_WALK_CH)
  uint32_t wide[9 * 2 * (CMX_DW_WALK_CH / 4)]; /* [group][tap]: (w0, w2), (w1, w3) */
  int32_t start[CMX_DW_WALK_CH]; /* bias + input offset x the weights' sum (int32 wraparound, as CMSIS-NN's) */
  const int widened = ch <= CMX_DW_WALK_CH;
  for (int32_t g = 0; widened && g < ch4 / 4; ++g) {
    for (int32_t k = 0; k < 9; ++k) {
      const uint32_t v = (uint32_t)arm_nn_read_s8x4(filter + k * ch + 4 * g);
      wide[18 * g + 2 * k] = SXTB16(v);
      wide[18 * g + 2 * k + 1] = SXTB16_RORn(v, 8);
    }
  }
  for (int32_t c = 0; widened && c < ch4; ++c) {
    uint32_t sum = 0;
    for (int32_t k = 0; k < 9; ++k) sum += (uint32_t)(int32_t)filter[k * ch + c];
    start[c] = (int32_t)((uint32_t)(bias ? bias[c] : 0) + (uint32_t)p->input_offset * sum);
  }
#endif
  for (int32_t oy = 0; oy < out_d->h; ++oy) {
    const int32_t iy = oy * p->stride.h - p->padding.h;
    const int32_t ky0 = iy < 0 ? -iy : 0, ky1 = in_h - iy < 3 ? in_h - iy : 3;
    for (int32_t ox = 0; ox < out_d->w; ++ox) {
      const int32_t ix = ox * p->stride.w - p->padding.w;
      const int32_t kx0 = ix < 0 ? -ix : 0, kx1 = in_w - ix < 3 ? in_w - ix : 3;
      int8_t* out = output + (oy * out_d->w + ox) * ch;
      const int inside = ky0 == 0 && ky1 == 3 && kx0 == 0 && kx1 == 3;
      const int32_t cols = kx1 - kx0;
      int32_t c = 0;
#if defined(ARM_MATH_MVEI)
      if (cols > 0 && ky1 > ky0) {
        pixel8(p, mult, shift, bias, ch, row, input + ((iy + ky0) * in_w + ix + kx0) * ch,
               filter + (ky0 * 3 + kx0) * ch, ky1 - ky0, cols, out, fast);
        c = ch & ~7;
      }
#endif
      for (; c < ch4; c += 4) {
        acc4 a = {0, 0, 0, 0};
        if (bias) a = (acc4){bias[c], bias[c + 1], bias[c + 2], bias[c + 3]};
#if defined(CMX_DW_WALK_CH)
        if (inside && widened) {
          a = (acc4){start[c], start[c + 1], start[c + 2], start[c + 3]};
          a = walk_taps(a, input + (iy * in_w + ix) * ch + c, wide + 18 * (c / 4), ch, row);
        } else
#endif
        if (inside) {
          const int8_t* x = input + (iy * in_w + ix) * ch + c;
          const int8_t* w = filter + c;
          for (int32_t ky = 0; ky < 3; ++ky, x += row, w += 3 * ch) {
            a = tap4(a, (uint32_t)arm_nn_read_s8x4(x), (uint32_t)arm_nn_read_s8x4(w), offset2);
            a = tap4(a, (uint32_t)arm_nn_read_s8x4(x + ch), (uint32_t)arm_nn_read_s8x4(w + ch), offset2);
            a = tap4(a, (uint32_t)arm_nn_read_s8x4(x + 2 * ch), (uint32_t)arm_nn_read_s8x4(w + 2 * ch), offset2);
          }
        } else if (cols > 0) { /* a border pixel: only its taps inside the input, walked as inside */
          const int8_t* x = input + ((iy + ky0) * in_w + ix + kx0) * ch + c;
          const int8_t* w = filter + (ky0 * 3 + kx0) * ch + c;
          for (int32_t ky = ky0; ky < ky1; ++ky, x += row, w += 3 * ch) {
            a = tap4(a, (uint32_t)arm_nn_read_s8x4(x), (uint32_t)arm_nn_read_s8x4(w), offset2);
            if (cols > 1) a = tap4(a, (uint32_t)arm_nn_read_s8x4(x + ch), (uint32_t)arm_nn_read_s8x4(w + ch), offset2);
            if (cols > 2) {
              a = tap4(a, (uint32_t)arm_nn_read_s8x4(x + 2 * ch), (uint32_t)arm_nn_read_s8x4(w + 2 * ch), offset2);
            }
          }
        }
        out[c] = cmx_finish(a.a0, mult[c], shift[c], r, fast, full);
        out[c + 1] = cmx_finish(a.a1, mult[c + 1], shift[c + 1], r, fast, full);
        out[c + 2] = cmx_finish(a.a2, mult[c + 2], shift[c + 2], r, fast, full);
        out[c + 3] = cmx_finish(a.a3, mult[c + 3], shift[c + 3], r, fast, full);
      }
      for (; c < ch; ++c) { /* the last ch % 4 channels */
        int32_t a = bias ? bias[c] : 0;
        for (int32_t ky = ky0; ky < ky1; ++ky) {
          for (int32_t kx = kx0; kx < kx1; ++kx) {
            a += (input[((iy + ky) * in_w + ix + kx) * ch + c] + p->input_offset) * filter[(ky * 3 + kx) * ch + c];
          }
        }
        out[c] = cmx_finish(a, mult[c], shift[c], r, fast, full);
      }
    }
  }
}

/* The planar and grouped paths' shapes and scratch. The plan reads these defines (cmx_gen's
 * kernel_facts.py): keep each a plain integer. */
#define CMX_DW_BAND 8        /* output rows a band of the planar path */
#define CMX_DW_GROUP_BAND 2  /* ... and of the grouped path: its lead is a band's rows */
#define CMX_DW_PLANAR_WIDTH 8 /* the fewest output columns it takes: narrower rows pay the plane per row */

#define CMX_DW_GROUPED_WIDTH 4 /* the fewest output columns the grouped path takes: on rows of 3 its band's padding costs more */
#define CMX_DW_GROUP 4       /* channels a group of the grouped path (its code is written for four) */
#define CMX_DW_PLANE_ROW 64 /* int16 values a plane row holds: a constant, so a row is an immediate offset */

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

/* The grouped path (the shapes the planar path does not take: any stride, narrow rows; channels a
 * multiple of four; the plan gives scratch). For a band of CMX_DW_GROUP_BAND output rows and four
 * channels at a time, the input rows the band reads, padding included, are widened once into the
 * scratch with the input offset added (SXTAB16: words (x0, x2), (x1, x3) a position, padding 0),
 * the four channels' nine weights widened the same way, and every output of the band takes each
 * tap as two LDRDs and four 16 x 16 multiply-accumulates (the walk widens each input value again
 * for every tap that reads it: 10 instructions a tap where this takes 6). Bands and channel
 * groups in the planar path's order: the overlap walk takes a band as one direct block. */
static int32_t grouped_rows(const cmsis_nn_dw_conv_params* p, const cmsis_nn_dims* out_d) {
  const int32_t band = out_d->h < CMX_DW_GROUP_BAND ? out_d->h : CMX_DW_GROUP_BAND;
  return (band - 1) * p->stride.h + 3;
}

static int32_t grouped_width(const cmsis_nn_dw_conv_params* p, const cmsis_nn_dims* out_d) {
  return (out_d->w - 1) * p->stride.w + 3;
}

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

/* The nine taps of four channels' output at q (two words a position, rows row_bytes apart) with
 * the group's widened weights: an LDRD of input and one of weights, four 16 x 16 multiply-
 * accumulates a tap (GCC's allocation of the C loop spilled the row pointers and the biases). */
static inline __attribute__((always_inline)) void nine_taps(int32_t* a0, int32_t* a1, int32_t* a2, int32_t* a3,
                                                            const uint32_t* q, const uint32_t* w, int32_t row_bytes) {
#if defined(__GNUC__) && defined(__thumb2__)
  uint32_t x0, x1, w0, w1;
  const uint32_t* row = q;
#define CMX_TAP(xo, wo)                          \
  "ldrd %[x0], %[x1], [%[row], #" #xo "]\n\t"    \
  "ldrd %[w0], %[w1], [%[w], #" #wo "]\n\t"      \
  "smlabb %[a0], %[x0], %[w0], %[a0]\n\t"        \
  "smlatt %[a2], %[x0], %[w0], %[a2]\n\t"        \
  "smlabb %[a1], %[x1], %[w1], %[a1]\n\t"        \
  "smlatt %[a3], %[x1], %[w1], %[a3]\n\t"
  __asm(CMX_TAP(0, 0) CMX_TAP(8, 8) CMX_TAP(16, 16)
        "add %[row], %[row], %[rb]\n\t"
        CMX_TAP(0, 24) CMX_TAP(8, 32) CMX_TAP(16, 40)
        "add %[row], %[row], %[rb]\n\t"
        CMX_TAP(0, 48) CMX_TAP(8, 56) CMX_TAP(16, 64)
        : [a0] "+r"(*a0), [a1] "+r"(*a1), [a2] "+r"(*a2), [a3] "+r"(*a3), [x0] "=&r"(x0), [x1] "=&r"(x1),
          [w0] "=&r"(w0), [w1] "=&r"(w1), [row] "+&r"(row)
        : [w] "r"(w), [rb] "r"(row_bytes), "m"(*(const uint32_t(*)[18])w)
        : "memory");
#undef CMX_TAP
#else
  for (int32_t k = 0; k < 9; ++k) {
    const uint32_t* x = q + (k / 3) * (row_bytes / 4) + 2 * (k % 3);
    *a0 = __smlabb((int32_t)x[0], (int32_t)w[2 * k], *a0);
    *a2 = __smlatt((int32_t)x[0], (int32_t)w[2 * k], *a2);
    *a1 = __smlabb((int32_t)x[1], (int32_t)w[2 * k + 1], *a1);
    *a3 = __smlatt((int32_t)x[1], (int32_t)w[2 * k + 1], *a3);
  }
#endif
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
          nine_taps(&a0, &a1, &a2, &a3, q, weights, w2 * 4);
          out[0] = cmx_finish(a0, mult[c], shift[c], r, fast, full);
          out[1] = cmx_finish(a1, mult[c + 1], shift[c + 1], r, fast, full);
          out[2] = cmx_finish(a2, mult[c + 2], shift[c + 2], r, fast, full);
          out[3] = cmx_finish(a3, mult[c + 3], shift[c + 3], r, fast, full);
        }
      }
    }
  }
}

/* Whether the planar path takes this shape (stride 1, rows of CMX_DW_PLANAR_WIDTH to
 * CMX_DW_PLANE_ROW - 3 outputs); else the grouped path, where the channels come in fours. */
static int planar_shape(const cmsis_nn_dw_conv_params* p, const cmsis_nn_dims* out_d) {
  return p->stride.w == 1 && p->stride.h == 1 && out_d->w >= CMX_DW_PLANAR_WIDTH && out_d->w + 3 <= CMX_DW_PLANE_ROW;
}
#endif

int32_t cmx_depthwise_3x3_s8_scratch_bytes(const cmsis_nn_dw_conv_params* params, const cmsis_nn_dims* input_dims,
                                           const cmsis_nn_dims* output_dims) {
#if defined(ARM_MATH_DSP) && !defined(ARM_MATH_MVEI)
  if (params->ch_mult != 1 || input_dims->c != output_dims->c) return 0;
  if (planar_shape(params, output_dims)) {
    const int32_t band = output_dims->h < CMX_DW_BAND ? output_dims->h : CMX_DW_BAND;
    return (band + 2) * CMX_DW_PLANE_ROW * (int32_t)sizeof(int16_t);
  }
  if (input_dims->c % CMX_DW_GROUP != 0 || output_dims->w < CMX_DW_GROUPED_WIDTH) return 0;
  return grouped_rows(params, output_dims) * grouped_width(params, output_dims) * CMX_DW_GROUP *
         (int32_t)sizeof(int16_t);
#else
  (void)params, (void)input_dims, (void)output_dims;
  return 0; /* Helium runs its own path, a core without DSP the portable one: neither takes scratch */
#endif
}

/* Each path and each combination of fast and full it is called with is a function of its own:
 * GCC allocates registers per function, and the paths inlined into one measured slower (VWW's
 * planar layers +7 %). */
#define CMX_DW_ARGS                                                                                           \
  const cmsis_nn_dw_conv_params *p, const int32_t *mult, const int32_t *shift, const cmsis_nn_dims *in_d,       \
      const int8_t *input, const int8_t *filter, const int32_t *bias, const cmsis_nn_dims *out_d, int8_t *output, \
      void *buf
#define CMX_DW_VARIANT(name, call)                                  \
  static __attribute__((noinline)) void name(CMX_DW_ARGS) { call; }
CMX_DW_VARIANT(walk_fast_full, (void)buf; body(p, mult, shift, in_d, input, filter, bias, out_d, output, 1, 1))
CMX_DW_VARIANT(walk_fast, (void)buf; body(p, mult, shift, in_d, input, filter, bias, out_d, output, 1, 0))
CMX_DW_VARIANT(walk_any, (void)buf; body(p, mult, shift, in_d, input, filter, bias, out_d, output, 0, 0))
#if defined(ARM_MATH_DSP) && !defined(ARM_MATH_MVEI)
CMX_DW_VARIANT(planar_fast_full, planar_body(p, mult, shift, in_d, input, filter, bias, out_d, output, buf, 1, 1))
CMX_DW_VARIANT(planar_any, planar_body(p, mult, shift, in_d, input, filter, bias, out_d, output, buf, 0, 0))
CMX_DW_VARIANT(grouped_fast_full, grouped_body(p, mult, shift, in_d, input, filter, bias, out_d, output, buf, 1, 1))
CMX_DW_VARIANT(grouped_any, grouped_body(p, mult, shift, in_d, input, filter, bias, out_d, output, buf, 0, 0))
#endif

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
  void (*run)(CMX_DW_ARGS) = fast && full ? walk_fast_full : fast ? walk_fast : walk_any;
#if defined(ARM_MATH_DSP) && !defined(ARM_MATH_MVEI)
  if (banded && planar_shape(params, output_dims)) run = fast && full ? planar_fast_full : planar_any;
  else if (banded) run = fast && full ? grouped_fast_full : grouped_any;
#endif
  for (int32_t n = 0; n < input_dims->n; ++n) {
    run(params, quant->multiplier, quant->shift, input_dims, input + n * in_batch, filter, bias, output_dims,
        output + n * out_batch, banded ? ctx->buf : NULL);
  }
  return ARM_CMSIS_NN_SUCCESS;
}
