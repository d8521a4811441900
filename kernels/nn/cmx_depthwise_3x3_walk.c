/* cmx_depthwise_3x3_s8's walk (cmx_depthwise_3x3_s8.c says when): every pixel's taps inside the input,
 * four channels at a time (Helium: eight), for any stride and padding and without scratch. */
#include <stddef.h>
#include <string.h>

#include "cmx_depthwise_3x3.h"
#include "cmx_mve.h"

/* Four channels of one tap: x and w are four int8 values each. */
static inline __attribute__((always_inline)) cmx_acc4 tap4(cmx_acc4 a, uint32_t x, uint32_t w, uint32_t offset2) {
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
    cmx_acc8 a;
    if (bias) {
      const int32x4x2_t b = vld2q_s32(bias + 8 * k);
      a.even = b.val[0];
      a.odd = b.val[1];
    } else {
      a.even = a.odd = vdupq_n_s32(0);
    }
    if (rows == 3 && cols == 3) {
      a = cmx_dw_taps9(a, x0, w0, ch, row, offset);
    } else {
      /* a loop over the rows, not unrolled: unrolled, GCC loads all nine taps ahead and spills them */
      const int8_t* x = x0;
      const int8_t* w = w0;
#pragma GCC unroll 1
      for (int32_t ky = 0; ky < rows; ++ky, x += row, w += w_row) {
        a = cmx_dw_tap8(a, x, w, offset);
        if (cols > 1) a = cmx_dw_tap8(a, x + ch, w + ch, offset);
        if (cols > 2) a = cmx_dw_tap8(a, x + 2 * ch, w + 2 * ch, offset);
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
#define CMX_DW_WALK_CH 64 /* channels a chunk of the walk in assembly: its records (2,944 B) and window (576 B) on the stack */
_Static_assert(sizeof(cmx_walk_group) == CMX_WALK_RECORD * 4 && CMX_WALK_RECORD * 4 == 184 &&
                   offsetof(cmx_walk_group, start2) == 72 && offsetof(cmx_walk_group, multiplier) == 88 &&
                   offsetof(cmx_walk_group, right_and_offset) == 104 && offsetof(cmx_walk_group, start2_left) == 120 &&
                   offsetof(cmx_walk_group, start2_right) == 136 && offsetof(cmx_walk_group, start2_top) == 152 &&
                   offsetof(cmx_walk_group, start2_bottom) == 168,
               "cmx_dw_walk_pixels' offsets");

#endif

#if defined(CMX_DW_WALK_CH)
/* The walk in assembly (fast, full, the channels in fours): CMX_DW_WALK_CH channels at a time, each
 * chunk's group records made once (cmx_walk_group), then each row's runs of pixels by
 * cmx_dw_walk_pixels; a border pixel's window copied first, the zero point where it lies outside
 * the input. An activation range short of int8 (fast, not full) clamps the bytes a run wrote, four at
 * a time (SSUB8 and SEL: SSAT's result clamped again is the range's). A layer of more channels than a chunk reads a pixel's later channels after writing
 * later pixels' first ones: only where the output does not overlap the input, or lies a whole
 * number of pixels from it (cmx_dw3x3_walk_in_assembly). */
static void walk_chunks(const cmsis_nn_dw_conv_params* p, const int32_t* mult, const int32_t* shift,
                        const cmsis_nn_dims* in_d, const int8_t* input, const int8_t* filter, const int32_t* bias,
                        const cmsis_nn_dims* out_d, int8_t* output, const int full) {
  const uint32_t lo4 = cmx_byte4(p->activation.min), hi4 = cmx_byte4(p->activation.max);
  const int32_t ch = in_d->c, in_w = in_d->w, in_h = in_d->h, row = in_w * ch;
  cmx_walk_group rec[CMX_DW_WALK_CH / 4];
  int8_t window[9 * CMX_DW_WALK_CH] __attribute__((aligned(4)));
  const uint32_t zero4 = cmx_byte4(-p->input_offset); /* the zero point, four times */
  const int floored = cmx_floored(p->output_offset, p->activation.min);
  for (int32_t c0 = 0; c0 < ch; c0 += CMX_DW_WALK_CH) {
    const int32_t cw = ch - c0 < CMX_DW_WALK_CH ? ch - c0 : CMX_DW_WALK_CH; /* the chunk's channels */
    for (int32_t g = 0; g < cw / 4; ++g) {
      for (int32_t k = 0; k < 9; ++k) {
        const uint32_t v = (uint32_t)arm_nn_read_s8x4(filter + k * ch + c0 + 4 * g);
        rec[g].weights[2 * k] = __sadd16(SXTB16(v), SXTB16(v)); /* doubled: |2w| <= 256 */
        rec[g].weights[2 * k + 1] = __sadd16(SXTB16_RORn(v, 8), SXTB16_RORn(v, 8));
      }
      for (int32_t j = 0; j < 4; ++j) {
        const int32_t c = c0 + 4 * g + j;
        uint32_t sum = 0, first = 0, last = 0, top = 0, bottom = 0; /* the weights', and each edge's */
        for (int32_t k = 0; k < 9; ++k) {
          const uint32_t w = (uint32_t)(int32_t)filter[k * ch + c];
          sum += w;
          first += k % 3 == 0 ? w : 0;
          last += k % 3 == 2 ? w : 0;
          top += k < 3 ? w : 0;
          bottom += k >= 6 ? w : 0;
        }
        /* 2 x (bias + input offset x the weights' sum), int32 wraparound as CMSIS-NN's sum */
        const uint32_t b = bias ? (uint32_t)bias[c] : 0, off = (uint32_t)p->input_offset;
        rec[g].start2[j] = (int32_t)((b + off * sum) << 1);
        rec[g].start2_left[j] = (int32_t)((b + off * (sum - first)) << 1);
        rec[g].start2_right[j] = (int32_t)((b + off * (sum - last)) << 1);
        rec[g].start2_top[j] = (int32_t)((b + off * (sum - top)) << 1);
        rec[g].start2_bottom[j] = (int32_t)((b + off * (sum - bottom)) << 1);
        rec[g].multiplier[j] = mult[c];
        rec[g].right_and_offset[j] = cmx_right_and_offset(-shift[c], p->output_offset);
      }
    }
    for (int32_t oy = 0; oy < out_d->h; ++oy) {
      const int32_t iy = oy * p->stride.h - p->padding.h;
      const int rows_inside = iy >= 0 && iy + 3 <= in_h;
      for (int32_t ox = 0; ox < out_d->w;) {
        const int32_t ix = ox * p->stride.w - p->padding.w;
        const int8_t* x = input + (iy * in_w + ix) * ch + c0;
        int32_t tap = ch, taps_row = row; /* bytes between the window's taps, and its rows */
        int32_t run = 1;                  /* pixels of the row whose windows lie inside the input */
        /* a pixel whose rows lie inside and whose first or last column alone lies outside, or whose columns
         * lie inside and whose first or last row alone lies outside: its six taps */
        const int cols_inside = ix >= 0 && ix + 3 <= in_w;
        const int left = rows_inside && ix == -1 && in_w >= 2, right = rows_inside && ix >= 0 && ix + 3 == in_w + 1;
        const int top = cols_inside && iy == -1 && in_h >= 2, bottom = cols_inside && iy >= 0 && iy + 3 == in_h + 1;
        if (left || right) {
          x = input + (iy * in_w + ix + left) * ch + c0;
        } else if (top || bottom) { /* and the row's next pixels whose columns lie inside */
          x = input + ((iy + top) * in_w + ix) * ch + c0;
          while (ox + run < out_d->w && (ox + run) * p->stride.w - p->padding.w + 3 <= in_w) ++run;
        } else if (!rows_inside || !cols_inside) {
          for (int32_t k = 0; k < 9; ++k) { /* a word at a time (cw is a multiple of four); GCC calls memcpy for the copy */
            const int32_t y = iy + k / 3, xx = ix + k % 3;
            uint32_t* to = (uint32_t*)(void*)(window + k * cw);
            if (y >= 0 && y < in_h && xx >= 0 && xx < in_w) {
              const int8_t* from = input + (y * in_w + xx) * ch + c0;
              for (int32_t j = 0; j < cw; j += 4) *to++ = (uint32_t)arm_nn_read_s8x4(from + j);
            } else {
              for (int32_t j = 0; j < cw; j += 4) *to++ = zero4;
            }
          }
          x = window;
          tap = cw;
          taps_row = 3 * cw;
        } else {
          while (ox + run < out_d->w && (ox + run) * p->stride.w - p->padding.w + 3 <= in_w) ++run;
        }
        /* the last group leaves x and o a chunk on: to the next pixel's */
        cmx_walk_consts k = {rec + cw / 4, rec, p->stride.w * ch - cw, ch - cw, run};
        int8_t* o = output + (oy * out_d->w + ox) * ch + c0;
        const int taps = left     ? CMX_WALK_LEFT
                         : right  ? CMX_WALK_RIGHT
                         : top    ? CMX_WALK_TOP
                         : bottom ? CMX_WALK_BOTTOM
                                  : CMX_WALK_ALL;
        cmx_dw_walk_pixels(x, rec, o, tap, taps_row, &k, taps, floored);
        for (int32_t i = 0; !full && i < run; ++i, o += ch) cmx_clamp_s8(o, cw, lo4, hi4);
        ox += run;
      }
    }
  }
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
        cmx_acc4 a = {0, 0, 0, 0};
        if (bias) a = (cmx_acc4){bias[c], bias[c + 1], bias[c + 2], bias[c + 3]};
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

int cmx_dw3x3_walk_in_assembly(const cmsis_nn_dims* in_d, const cmsis_nn_dims* out_d, const int8_t* input,
                               const int8_t* output) {
#if defined(CMX_DW_WALK_CH)
  const int32_t ch = in_d->c;
  const int apart = output + out_d->h * out_d->w * ch <= input || input + in_d->h * in_d->w * ch <= output;
  /* an output a whole number of pixels from its input (a band's lead, cmx_gen/lower/delegate/overlap.py)
   * writes each channel over the same channel of an input pixel: a chunk's writes never reach the
   * channels a later chunk reads */
  const int aligned = (output - input) % ch == 0;
  return ch % 4 == 0 && (ch <= CMX_DW_WALK_CH || apart || aligned);
#else
  (void)in_d, (void)out_d, (void)input, (void)output;
  return 0;
#endif
}

/* fast: the walk in assembly where it takes the layer, else the C loop (each a function of its own: the
 * body inlined into one per combination measured faster) */
static inline __attribute__((always_inline)) void walk_fast(const cmsis_nn_dw_conv_params* p, const int32_t* mult,
                                                            const int32_t* shift, const cmsis_nn_dims* in_d,
                                                            const int8_t* input, const int8_t* filter,
                                                            const int32_t* bias, const cmsis_nn_dims* out_d,
                                                            int8_t* output, const int full) {
#if defined(CMX_DW_WALK_CH)
  if (cmx_dw3x3_walk_in_assembly(in_d, out_d, input, output)) {
    walk_chunks(p, mult, shift, in_d, input, filter, bias, out_d, output, full);
    return;
  }
#endif
  body(p, mult, shift, in_d, input, filter, bias, out_d, output, 1, full);
}

__attribute__((noinline)) void cmx_dw3x3_walk_fast_full(CMX_DW_ARGS) { (void)buf; walk_fast(p, mult, shift, in_d, input, filter, bias, out_d, output, 1); }
__attribute__((noinline)) void cmx_dw3x3_walk_fast(CMX_DW_ARGS) { (void)buf; walk_fast(p, mult, shift, in_d, input, filter, bias, out_d, output, 0); }
__attribute__((noinline)) void cmx_dw3x3_walk_any(CMX_DW_ARGS) { (void)buf; body(p, mult, shift, in_d, input, filter, bias, out_d, output, 0, 0); }
