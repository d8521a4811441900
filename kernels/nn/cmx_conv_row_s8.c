/* cmx_conv_row_s8: a convolution whose output positions each read runs of input positions a fixed
 * distance apart (cmx_nn.h says which), for the DSP cores (M4/M7/M33). Replaces arm_convolve_s8.
 *
 * Where CMSIS-NN's DSP path spends its instructions on a layer of 8-16 channels (3.1-3.4 per MAC
 * on the issue 37 model): a memcpy call per kernel tap to build each column, a widening of every
 * column (each input value widened once per tap that reads it), and a requantization of ~20
 * instructions per output. Here a chunk of input positions is widened once, columns are read in
 * place, and the requantization is CMSIS-NN's inline-assembly form (same result, 7 instructions)
 * whenever every channel shifts right. The inner loop is CMSIS-NN's: two channels by two
 * positions, four values per step, SMLAD. */
#include <string.h>

#include "arm_nnfunctions.h"
#include "arm_nnsupportfunctions.h"
#include "cmx_nn.h"
#include "cmx_dsp.h"
#include "cmx_requantize.h"

#if defined(ARM_MATH_DSP) && defined(__GNUC__) && defined(__thumb2__)
#define CMX_ROW_BLOCKS /* cmx_row_blocks_s8 / _wide (cmx_dsp.h) */
#endif

#if defined(ARM_MATH_DSP)
/* The input offset in both halves of a word, as SXTAB16 adds it. */
static inline uint32_t offset_twice(int32_t offset) { return ((uint32_t)(uint16_t)offset << 16) | (uint16_t)offset; }

/* Four int8 values (a word) widened to int16 with the offset added, in order at out: SXTAB16 widens and
 * adds it, PKHBT / PKHTB pair the halves. Returns out + 4. */
static inline __attribute__((always_inline)) int16_t* widen4(uint32_t w, uint32_t offset2, int16_t* out) {
  const uint32_t even = SXTAB16(offset2, w);        /* x0, x2 */
  const uint32_t odd = SXTAB16_RORn(offset2, w, 8); /* x1, x3 */
  arm_nn_write_q15x2_ia(&out, (int32_t)PKHBT(even, odd, 16)); /* x0, x1 */
  arm_nn_write_q15x2_ia(&out, (int32_t)PKHTB(odd, even, 16)); /* x2, x3 */
  return out;
}
#endif

/* n int8 values widened to int16 with the offset added. */
static inline __attribute__((always_inline)) int16_t* widen_values(const int8_t* in, int32_t n, int16_t* out,
                                                                   int32_t offset) {
#if defined(ARM_MATH_DSP)
  const uint32_t offset2 = offset_twice(offset);
  for (; n >= 4; n -= 4) out = widen4((uint32_t)arm_nn_read_s8x4_ia(&in), offset2, out);
#endif
  for (; n > 0; --n) *out++ = (int16_t)(*in++ + offset);
  return out;
}

/* Input positions [first, first + count) widened to int16 with the offset added; positions
 * outside the input are zeros (the padding value, -input_offset, plus the offset). A function of its
 * own: inlined into convolve, GCC kept its loop's end on the stack (+1 load a word, KWS +10 K cycles). */
static __attribute__((noinline)) void widen(const cmx_conv_row_params* p, const int8_t* input, int32_t first,
                                            int32_t count, int16_t* buf) {
  const int32_t ch = p->in_ch;
  int32_t lo = first < 0 ? 0 : first;
  if (lo > first + count) lo = first + count;
  int32_t hi = first + count > p->in_positions ? p->in_positions : first + count;
  if (hi < lo) hi = lo;
  int16_t* out = buf;
  for (int32_t i = 0; i < (lo - first) * ch; ++i) *out++ = 0;
  out = widen_values(input + lo * ch, (hi - lo) * ch, out, p->input_offset);
  const int32_t tail = (first + count - hi) * ch;
  for (int32_t i = 0; i < tail + CMX_SLACK; ++i) *out++ = 0;
}

/* `n` columns of an RGB stem's three rows (in_ch 3, rows 3, all inside the input), from `in`: nine
 * values a column written out (and a zero where the column is ten), ~40 cycles against ~85 for the
 * general loop's column (its bounds and a loop over the rows). */
static int16_t* widen_rgb_columns(const int8_t* in, int32_t in_row, int32_t n, int16_t* out, int32_t off,
                                  int32_t column) {
  for (; n > 0; --n, in += 3, out += column) {
    if (column > 9) out[9] = 0;
    const int8_t* r1 = in + in_row;
    const int8_t* r2 = r1 + in_row;
    out[0] = (int16_t)(in[0] + off), out[1] = (int16_t)(in[1] + off), out[2] = (int16_t)(in[2] + off);
    out[3] = (int16_t)(r1[0] + off), out[4] = (int16_t)(r1[1] + off), out[5] = (int16_t)(r1[2] + off);
    out[6] = (int16_t)(r2[0] + off), out[7] = (int16_t)(r2[1] + off), out[8] = (int16_t)(r2[2] + off);
  }
  return out;
}

#if defined(ARM_MATH_DSP) && defined(__GNUC__) && defined(__thumb2__)
/* One row of four columns (twelve bytes from `in`, three words) widened to the columns at c0..c3 from value
 * 3r (AT: bytes 6r): (R0, B0), (G0, R1) from the first word by SXTAB16 (the offset added), and so on,
 * each value stored as a halfword, the high ones shifted down. */
#define CMX_RGB_ROW(AT)                                  \
  "ldr %[w0], [%[in]]\n\t"                              \
  "ldr %[w1], [%[in], #4]\n\t"                          \
  "ldr %[w2], [%[in], #8]\n\t"                          \
  "add %[in], %[in], %[in_row]\n\t"                      \
  "sxtab16 %[e], %[off2], %[w0]\n\t"                     \
  "sxtab16 %[o], %[off2], %[w0], ror #8\n\t"             \
  "strh %[e], [%[c0], #" #AT "]\n\t"                     \
  "strh %[o], [%[c0], #" #AT " + 2]\n\t"                 \
  "lsrs %[e], %[e], #16\n\t"                             \
  "lsrs %[o], %[o], #16\n\t"                             \
  "strh %[e], [%[c0], #" #AT " + 4]\n\t"                 \
  "strh %[o], [%[c1], #" #AT "]\n\t"                     \
  "sxtab16 %[e], %[off2], %[w1]\n\t"                     \
  "sxtab16 %[o], %[off2], %[w1], ror #8\n\t"             \
  "strh %[e], [%[c1], #" #AT " + 2]\n\t"                 \
  "strh %[o], [%[c1], #" #AT " + 4]\n\t"                 \
  "lsrs %[e], %[e], #16\n\t"                             \
  "lsrs %[o], %[o], #16\n\t"                             \
  "strh %[e], [%[c2], #" #AT "]\n\t"                     \
  "strh %[o], [%[c2], #" #AT " + 2]\n\t"                 \
  "sxtab16 %[e], %[off2], %[w2]\n\t"                     \
  "sxtab16 %[o], %[off2], %[w2], ror #8\n\t"             \
  "strh %[e], [%[c2], #" #AT " + 4]\n\t"                 \
  "strh %[o], [%[c3], #" #AT "]\n\t"                     \
  "lsrs %[e], %[e], #16\n\t"                             \
  "lsrs %[o], %[o], #16\n\t"                             \
  "strh %[e], [%[c3], #" #AT " + 2]\n\t"                 \
  "strh %[o], [%[c3], #" #AT " + 4]\n\t"

/* widen_rgb_columns four columns at a time where each of the three rows' twelve bytes lie on words: three
 * word loads a row widened by SXTAB16 and stored a value at a time, ~24 cycles a column against ~46 for the
 * byte loads (VWW's stem widens ~4,500 columns an inference; GCC's C for the same spilled: ~41). */
static int16_t* widen_rgb_quads(const int8_t* in, int32_t in_row, int32_t quads, int16_t* out, int32_t off,
                                int32_t column) {
  const uint32_t off2 = offset_twice(off);
  const int32_t back = 12 - 3 * in_row; /* from the third row's end to the next quad's first row */
  for (; quads > 0; --quads, out += 4 * column) {
    int16_t *c0 = out, *c1 = out + column, *c2 = c1 + column, *c3 = c2 + column;
    uint32_t w0, w1, w2, e, o;
    __asm volatile(CMX_RGB_ROW(0) CMX_RGB_ROW(6) CMX_RGB_ROW(12)
                   : [w0] "=&r"(w0), [w1] "=&r"(w1), [w2] "=&r"(w2), [e] "=&r"(e), [o] "=&r"(o), [in] "+r"(in)
                   : [in_row] "r"(in_row), [off2] "r"(off2), [c0] "r"(c0), [c1] "r"(c1), [c2] "r"(c2), [c3] "r"(c3)
                   : "cc", "memory");
    in += back;
    for (int32_t j = 0; column > 9 && j < 4; ++j) out[j * column + 9] = 0;
  }
  return out;
}
#undef CMX_RGB_ROW
#endif

/* An RGB stem's run of `n` columns inside the input: widen_rgb_quads from the first column on a word (rows a
 * multiple of four bytes apart), widen_rgb_columns for the columns before and after. */
static __attribute__((noinline)) int16_t* widen_rgb_run(const int8_t* in, int32_t in_row, int32_t n, int16_t* out,
                                                        int32_t off, int32_t column) {
#if defined(ARM_MATH_DSP) && defined(__GNUC__) && defined(__thumb2__)
  if (in_row % 4 == 0) {
    const int32_t head = (int32_t)((uintptr_t)in & 3); /* columns before a word: (a + 3a) % 4 == 0 */
    if (n >= head + 4) {
      out = widen_rgb_columns(in, in_row, head, out, off, column);
      in += 3 * head;
      const int32_t quads = (n - head) / 4;
      out = widen_rgb_quads(in, in_row, quads, out, off, column);
      in += 12 * quads;
      n -= head + 4 * quads;
    }
  }
#endif
  return widen_rgb_columns(in, in_row, n, out, off, column);
}

/* A 2-D convolution's input positions [first, first + count) of input rows [top, top + rows), as
 * columns: position x's rows * in_ch values (row by row, zeros outside the input; a zero after them
 * where cmx_conv_row_s8_column says) at x * column, so an output's field (kernel columns) is one
 * contiguous run, as in a 1-D convolution. */
static void widen_columns(const cmx_conv_row_params* p, const int8_t* input, int32_t first, int32_t count,
                          int32_t top, int16_t* buf) {
  const int32_t ch = p->in_ch, column = cmx_conv_row_s8_column(p), in_row = p->in_positions * ch;
  const int32_t y0 = top < 0 ? 0 : top, y1 = top + p->rows < p->in_rows ? top + p->rows : p->in_rows;
  const int32_t above = y0 - top < p->rows ? (y0 - top) * ch : column; /* zeros before the rows inside */
  const int rgb_inside = ch == 3 && p->rows == 3 && y0 == top && y1 == top + 3;
  int16_t* out = buf;
  for (int32_t ix = first; ix < first + count; ++ix) {
    if (rgb_inside && ix >= 0 && ix < p->in_positions) { /* the run of columns inside the input */
      const int32_t stop = first + count < p->in_positions ? first + count : p->in_positions;
      out = widen_rgb_run(input + (y0 * p->in_positions + ix) * ch, in_row, stop - ix, out, p->input_offset, column);
      ix = stop - 1;
      continue;
    }
    int16_t* end = out + column;
    if (ix >= 0 && ix < p->in_positions && y1 > y0) {
      for (int32_t i = 0; i < above; ++i) *out++ = 0;
      const int8_t* in = input + (y0 * p->in_positions + ix) * ch;
      if (ch == 1) { /* one value per row: DS-CNN's first layer */
        for (int32_t iy = y0; iy < y1; ++iy, in += in_row) *out++ = (int16_t)(*in + p->input_offset);
      } else if (ch == 3) { /* an RGB stem: three values a row, written out (widen_values' loop took ~40) */
        const int32_t off = p->input_offset;
        for (int32_t iy = y0; iy < y1; ++iy, in += in_row, out += 3) {
          out[0] = (int16_t)(in[0] + off);
          out[1] = (int16_t)(in[1] + off);
          out[2] = (int16_t)(in[2] + off);
        }
      } else {
        for (int32_t iy = y0; iy < y1; ++iy, in += in_row) out = widen_values(in, ch, out, p->input_offset);
      }
    }
    while (out < end) *out++ = 0; /* rows below, or a position outside the input */
  }
  memset(out, 0, CMX_SLACK * sizeof(int16_t));
}

/* One chunk's outputs. fast: every channel's shift is <= -1 and its multiplier > 0. aligned:
 * the second column of a pair starts on a word (stride * in_ch even), so both read with LDRD.
 * full: the activation range is [-128, 127] (what a ReLU's output quantization gives). dilated:
 * one run per tap (a loop that costs 5-7 % where there is one run). Each combination the kernel
 * calls is compiled on its own. p->in_ch is the values of one widened position (cmx_conv_row_s8_column). */
static inline __attribute__((always_inline)) void compute(const cmx_conv_row_params* p, const int16_t* buf, int32_t n,
                                                          const int8_t* weights, const int32_t* k,
                                                          int8_t* restrict output, const int fast,
                                                          const int aligned, const int full,
                                                          const int dilated) {
  const int32_t out_ch = p->out_ch;
  const int32_t step = p->stride * p->in_ch; /* int16 values between two columns */
  /* Dilated: one run of in_ch values per tap, each padded to four in the weights; else one run. */
  const int32_t taps = dilated ? p->kernel : 1;
  const int32_t tap_step = p->dilation * p->in_ch; /* int16 values between two taps */
  const int32_t groups = p->row_bytes / 4 / taps;
  const cmx_out_range r = {p->output_offset, p->act_min, p->act_max};
  /* cmx_row_blocks_s8 takes the channel pairs: two groups or more, two channels or more */
  const int blocks = groups >= 2 && groups <= CMX_ROW_MAX_GROUPS && out_ch >= 2;
  (void)blocks;
  int32_t x = 0;
  for (; x + 1 < n; x += 2) {
    const int16_t* col0 = buf + x * step;
    const int16_t* col1 = col0 + step;
    int8_t* out0 = output + x * out_ch;
    int8_t* out1 = out0 + out_ch;
    const int8_t* w = weights;
    int32_t c = 0;
#if defined(CMX_ROW_BLOCKS)
    if (fast && full && aligned && !dilated && blocks) { /* every channel pair in assembly */
      cmx_row_blocks b = {col0, col1, cmx_row_count(cmx_row_iterations(groups)), k, out0, out_ch, out_ch / 2};
      w = (const int8_t*)cmx_row_blocks_s8(w, &b, groups);
      c = out_ch & ~1;
    }
#endif
    for (; c + 1 < out_ch; c += 2) {
      int32_t a00 = cmx_row_bias(k, c), a10 = cmx_row_bias(k, c + 1);
      int32_t a01 = a00, a11 = a10;
      const void* wp = w;
      for (int32_t t = 0; t < taps; ++t) {
      const void* b0 = col0 + t * tap_step;
      const void* b1 = col1 + t * tap_step;
      int32_t g = groups;
      if (aligned && !dilated && g >= 8) { /* pairs of groups in assembly, an odd last group below */
        cmx_acc2x2 a = cmx_row_group_pairs((cmx_acc2x2){a00, a10, a01, a11}, &wp, &b0, &b1, g >> 1);
        a00 = a.a00, a10 = a.a10, a01 = a.a01, a11 = a.a11;
        g &= 1;
      }
      for (; g > 0; --g) {
        const word_pair ww = load_pair(&wp, 1); /* rows c and c + 1, four values each */
        const uint32_t wa_lo = SXTB16(ww.lo), wa_hi = SXTB16_RORn(ww.lo, 8);
        const uint32_t wb_lo = SXTB16(ww.hi), wb_hi = SXTB16_RORn(ww.hi, 8);
        word_pair xx = load_pair(&b0, 1);
        a00 = SMLAD(wa_lo, xx.lo, a00);
        a10 = SMLAD(wb_lo, xx.lo, a10);
        a00 = SMLAD(wa_hi, xx.hi, a00);
        a10 = SMLAD(wb_hi, xx.hi, a10);
        xx = load_pair(&b1, aligned);
        a01 = SMLAD(wa_lo, xx.lo, a01);
        a11 = SMLAD(wb_lo, xx.lo, a11);
        a01 = SMLAD(wa_hi, xx.hi, a01);
        a11 = SMLAD(wb_hi, xx.hi, a11);
      }
      }
      w = (const int8_t*)wp;
      const int32_t m0 = cmx_row_mult(k, c), s0 = cmx_row_shift(k, c);
      const int32_t m1 = cmx_row_mult(k, c + 1), s1 = cmx_row_shift(k, c + 1);
      out0[c] = cmx_finish(a00, m0, s0, r, fast, full);
      out1[c] = cmx_finish(a01, m0, s0, r, fast, full);
      out0[c + 1] = cmx_finish(a10, m1, s1, r, fast, full);
      out1[c + 1] = cmx_finish(a11, m1, s1, r, fast, full);
    }
    if (c < out_ch) {
      int32_t a0 = cmx_row_bias(k, c);
      int32_t a1 = a0;
      for (int32_t t = 0; t < taps; ++t) {
      const void* b0 = col0 + t * tap_step;
      const void* b1 = col1 + t * tap_step;
      for (int32_t g = groups; g > 0; --g) {
        const uint32_t wa = (uint32_t)arm_nn_read_s8x4(w);
        w += 4;
        const uint32_t wa_lo = SXTB16(wa), wa_hi = SXTB16_RORn(wa, 8);
        word_pair xx = load_pair(&b0, 1);
        a0 = SMLAD(wa_lo, xx.lo, a0);
        a0 = SMLAD(wa_hi, xx.hi, a0);
        xx = load_pair(&b1, aligned);
        a1 = SMLAD(wa_lo, xx.lo, a1);
        a1 = SMLAD(wa_hi, xx.hi, a1);
      }
      }
      out0[c] = cmx_finish(a0, cmx_row_mult(k, c), cmx_row_shift(k, c), r, fast, full);
      out1[c] = cmx_finish(a1, cmx_row_mult(k, c), cmx_row_shift(k, c), r, fast, full);
    }
  }
  if (x < n) {
    const int16_t* col0 = buf + x * step;
    int8_t* out0 = output + x * out_ch;
    const int8_t* w = weights;
    int32_t c = 0;
    for (; c + 1 < out_ch; c += 2) {
      int32_t a0 = cmx_row_bias(k, c), a1 = cmx_row_bias(k, c + 1);
      const void* wp = w;
      for (int32_t t = 0; t < taps; ++t) {
      const void* b0 = col0 + t * tap_step;
      for (int32_t g = groups; g > 0; --g) {
        const word_pair ww = load_pair(&wp, 1);
        const word_pair xx = load_pair(&b0, 1);
        a0 = SMLAD(SXTB16(ww.lo), xx.lo, a0);
        a0 = SMLAD(SXTB16_RORn(ww.lo, 8), xx.hi, a0);
        a1 = SMLAD(SXTB16(ww.hi), xx.lo, a1);
        a1 = SMLAD(SXTB16_RORn(ww.hi, 8), xx.hi, a1);
      }
      }
      w = (const int8_t*)wp;
      out0[c] = cmx_finish(a0, cmx_row_mult(k, c), cmx_row_shift(k, c), r, fast, full);
      out0[c + 1] = cmx_finish(a1, cmx_row_mult(k, c + 1), cmx_row_shift(k, c + 1), r, fast, full);
    }
    if (c < out_ch) {
      int32_t a0 = cmx_row_bias(k, c);
      for (int32_t t = 0; t < taps; ++t) {
      const void* b0 = col0 + t * tap_step;
      for (int32_t g = groups; g > 0; --g) {
        const uint32_t wa = (uint32_t)arm_nn_read_s8x4(w);
        w += 4;
        const word_pair xx = load_pair(&b0, 1);
        a0 = SMLAD(SXTB16(wa), xx.lo, a0);
        a0 = SMLAD(SXTB16_RORn(wa, 8), xx.hi, a0);
      }
      }
      out0[c] = cmx_finish(a0, cmx_row_mult(k, c), cmx_row_shift(k, c), r, fast, full);
    }
  }
}

/* A wide layer of 8 values a position (a MobileNet's first pointwise layer, 8 -> 16): a position's
 * 8 widened values stay in four registers while every channel's two groups of int16 weights meet
 * them, the whole channel loop (requantization as cmx_requantize_right, output offset, SSAT) in
 * assembly: 20 instructions an output where the 2 x 2 block takes ~25 (its overhead around two
 * groups). Channels in pairs (the weights' layout: c's group 0, c + 1's, c's group 1, c + 1's);
 * all 13 registers the loop holds are its operands. */
static __attribute__((noinline)) void positions_k8(const int16_t* buf, int32_t n, int32_t step,
                                                   const int16_t* weights, const int32_t* k, int8_t* output,
                                                   int32_t out_ch, int floored) {
#if defined(__GNUC__) && defined(__thumb2__) && defined(ARM_MATH_DSP)
  int32_t x = 0;
  if (step == 8 && n >= 2) { /* channel by channel (cmx_row_k8_channels): its constants in registers */
    cmx_row_k8_frame f = {weights, k, output, buf, cmx_row_count(n / 2), out_ch};
    cmx_row_k8_channels(&f, out_ch, floored);
    x = n & ~1; /* an odd count's last position as below */
    output += x * out_ch;
  }
  for (; x < n; ++x, output += out_ch) {
    uint32_t x0, x1, x2, x3;
    memcpy(&x0, buf + x * step, 4);
    memcpy(&x1, buf + x * step + 2, 4);
    memcpy(&x2, buf + x * step + 4, 4);
    memcpy(&x3, buf + x * step + 6, 4);
    /* the channel pairs left counted up in the high half to the carry out */
    cmx_row_k8_position(x0, x1, x2, x3, weights, k, output, cmx_row_count(out_ch / 2));
  }
#else
  (void)buf, (void)n, (void)step, (void)weights, (void)k, (void)output, (void)out_ch, (void)floored;
  /* never called: the kernel needs DSP */
#endif
}


/* compute() for weights the plan widened to int16 (p->wide): the rows of a channel pair (four
 * values of each: two LDRDs) meet the widened input with no SXTB16, 14 instructions per 16 MACs
 * instead of 19, and 7 per 8 for a last odd position. One run per position (never dilated). */
static inline __attribute__((always_inline)) void compute_wide(const cmx_conv_row_params* p, const int16_t* buf,
                                                               int32_t n, const int16_t* weights, const int32_t* k,
                                                               int8_t* restrict output, const int fast,
                                                               const int aligned, const int full, const int pairs) {
  const int32_t out_ch = p->out_ch;
  const int32_t step = p->stride * p->in_ch;
  const int32_t groups = p->row_bytes / 4;
  const cmx_out_range r = {p->output_offset, p->act_min, p->act_max};
  if (groups == 2 && fast && full && aligned && out_ch % 2 == 0 && out_ch < 131072) {
    positions_k8(buf, n, step, weights, k, output, out_ch, cmx_floored(p->output_offset, p->act_min));
    return;
  }
  /* cmx_row_blocks_wide takes the channel pairs: two groups or more, two channels or more */
  const int blocks = groups >= 2 && groups <= CMX_ROW_MAX_GROUPS && out_ch >= 2;
  (void)blocks;
  int32_t x = 0;
  for (; x + 1 < n; x += 2) {
    const int16_t* col0 = buf + x * step;
    const int16_t* col1 = col0 + step;
    int8_t* out0 = output + x * out_ch;
    int8_t* out1 = out0 + out_ch;
    const void* wp = weights;
    int32_t c = 0;
#if defined(CMX_ROW_BLOCKS)
    if (fast && full && aligned && blocks) { /* every channel pair in assembly */
      cmx_row_blocks b = {col0, col1, cmx_row_count(cmx_row_iterations(groups)), k, out0, out_ch, out_ch / 2};
      wp = cmx_row_blocks_wide(wp, &b, groups);
      c = out_ch & ~1;
    }
#endif
    for (; c + 1 < out_ch; c += 2) {
      int32_t a00 = cmx_row_bias(k, c), a10 = cmx_row_bias(k, c + 1);
      int32_t a01 = a00, a11 = a10;
      const void* b0 = col0;
      const void* b1 = col1;
      int32_t g = groups;
      if (pairs) { /* pairs of groups in assembly, an odd last group below */
        const cmx_acc2x2 a = cmx_row_wide_pairs((cmx_acc2x2){a00, a10, a01, a11}, &wp, &b0, &b1, g >> 1);
        a00 = a.a00, a10 = a.a10, a01 = a.a01, a11 = a.a11;
        g &= 1;
      }
      for (; g > 0; --g) {
        const word_pair x0 = load_pair(&b0, 1);
        const word_pair x1 = load_pair(&b1, aligned);
        word_pair w = load_pair(&wp, 1); /* row c: (w0, w1), (w2, w3) */
        a00 = SMLAD(w.lo, x0.lo, a00);
        a00 = SMLAD(w.hi, x0.hi, a00);
        a01 = SMLAD(w.lo, x1.lo, a01);
        a01 = SMLAD(w.hi, x1.hi, a01);
        w = load_pair(&wp, 1); /* row c + 1 */
        a10 = SMLAD(w.lo, x0.lo, a10);
        a10 = SMLAD(w.hi, x0.hi, a10);
        a11 = SMLAD(w.lo, x1.lo, a11);
        a11 = SMLAD(w.hi, x1.hi, a11);
      }
      const int32_t m0 = cmx_row_mult(k, c), s0 = cmx_row_shift(k, c);
      const int32_t m1 = cmx_row_mult(k, c + 1), s1 = cmx_row_shift(k, c + 1);
      out0[c] = cmx_finish(a00, m0, s0, r, fast, full);
      out1[c] = cmx_finish(a01, m0, s0, r, fast, full);
      out0[c + 1] = cmx_finish(a10, m1, s1, r, fast, full);
      out1[c + 1] = cmx_finish(a11, m1, s1, r, fast, full);
    }
    if (c < out_ch) { /* an odd last channel: its row on its own */
      int32_t a0 = cmx_row_bias(k, c);
      int32_t a1 = a0;
      const void* b0 = col0;
      const void* b1 = col1;
      for (int32_t g = groups; g > 0; --g) {
        const word_pair w = load_pair(&wp, 1);
        word_pair xx = load_pair(&b0, 1);
        a0 = SMLAD(w.lo, xx.lo, a0);
        a0 = SMLAD(w.hi, xx.hi, a0);
        xx = load_pair(&b1, aligned);
        a1 = SMLAD(w.lo, xx.lo, a1);
        a1 = SMLAD(w.hi, xx.hi, a1);
      }
      out0[c] = cmx_finish(a0, cmx_row_mult(k, c), cmx_row_shift(k, c), r, fast, full);
      out1[c] = cmx_finish(a1, cmx_row_mult(k, c), cmx_row_shift(k, c), r, fast, full);
    }
  }
  if (x < n) { /* a last odd position: every row of the weights against one column */
    const int16_t* col0 = buf + x * step;
    int8_t* out0 = output + x * out_ch;
    const void* wp = weights;
    int32_t c = 0;
    for (; c + 1 < out_ch; c += 2) {
      int32_t a0 = cmx_row_bias(k, c), a1 = cmx_row_bias(k, c + 1);
      const void* b0 = col0;
      for (int32_t g = groups; g > 0; --g) {
        const word_pair xx = load_pair(&b0, 1);
        word_pair w = load_pair(&wp, 1);
        a0 = SMLAD(w.lo, xx.lo, a0);
        a0 = SMLAD(w.hi, xx.hi, a0);
        w = load_pair(&wp, 1);
        a1 = SMLAD(w.lo, xx.lo, a1);
        a1 = SMLAD(w.hi, xx.hi, a1);
      }
      out0[c] = cmx_finish(a0, cmx_row_mult(k, c), cmx_row_shift(k, c), r, fast, full);
      out0[c + 1] = cmx_finish(a1, cmx_row_mult(k, c + 1), cmx_row_shift(k, c + 1), r, fast, full);
    }
    if (c < out_ch) {
      int32_t a0 = cmx_row_bias(k, c);
      const void* b0 = col0;
      for (int32_t g = groups; g > 0; --g) {
        const word_pair w = load_pair(&wp, 1);
        const word_pair xx = load_pair(&b0, 1);
        a0 = SMLAD(w.lo, xx.lo, a0);
        a0 = SMLAD(w.hi, xx.hi, a0);
      }
      out0[c] = cmx_finish(a0, cmx_row_mult(k, c), cmx_row_shift(k, c), r, fast, full);
    }
  }
}

#if defined(ARM_MATH_DSP)
/* wide 2: the plan's int8 weights (each group of four stored (w0, w2, w1, w3)) widened to the int16
 * layout wide 1 reads ((w0, w1), (w2, w3)) past the chunk: an SXTB16 and an SXTB16 ROR 8 a group, the
 * plan's bytes read once a call; then the constants, which each position pair reads again too. */
typedef struct {
  const int16_t* weights;
  const int32_t* constants;
} staged;

static staged stage(const cmx_conv_row_params* p, const int8_t* weights, const int32_t* k, int16_t* scratch) {
  uint32_t* to = (uint32_t*)(void*)((char*)scratch + cmx_conv_row_s8_staged_at(p));
  const int32_t groups = p->out_ch * p->row_bytes / 4;
  const staged s = {(const int16_t*)(const void*)to, (const int32_t*)(const void*)(to + 2 * groups)};
  for (int32_t g = 0; g < groups; ++g, weights += 4, to += 2) {
    const uint32_t v = (uint32_t)arm_nn_read_s8x4(weights);
    to[0] = SXTB16(v);
    to[1] = SXTB16_RORn(v, 8);
  }
  memcpy(to, k, (size_t)cmx_conv_row_s8_constants_words(p->out_ch) * sizeof(int32_t));
  return s;
}

/* Whether every channel takes the fast requantization: its shift right, its multiplier positive and its
 * bias inside what keeps the accumulators small (cmx_accumulators_small). */
static int all_fast(const cmx_conv_row_params* p, const int32_t* k) {
  const int64_t room = cmx_bias_room(p->row_bytes, p->input_offset);
  int fast = room >= 0;
  for (int32_t c = 0; fast && c < p->out_ch; ++c) {
    fast = cmx_row_shift(k, c) <= -1 && cmx_row_mult(k, c) > 0 && cmx_bias_small(cmx_row_bias(k, c), room);
  }
  return fast;
}

#if defined(CMX_ROW_BLOCKS)
/* Whether a layer's chunks run three positions at a time (cmx_row_triples_s8): its shape
 * (cmx_conv_row_s8_triples) and fast; a chunk's other positions (n % 3) as before. */
static int takes_triples(const cmx_conv_row_params* p, int fast) { return cmx_conv_row_s8_triples(p) && fast; }

/* `triples` x 3 positions of a 1x1 layer from `in` (in_ch values each, all inside the input), widened
 * with the offset and interleaved for cmx_row_triples_s8: group g of the triple's position j at
 * (3 g + j) x 4 values. */
static __attribute__((noinline)) void widen_triples(const cmx_conv_row_params* p, const int8_t* in, int32_t triples,
                                                    int16_t* buf) {
  const int32_t ch = p->in_ch;
  const uint32_t offset2 = offset_twice(p->input_offset);
  for (int32_t i = 0; i < 3 * triples; ++i) {
    const int8_t* src = in + i * ch;
    int16_t* dst = buf + (i / 3) * 3 * ch + 4 * (i % 3);
    for (int32_t g = ch / 8; g > 0; --g) { /* two groups an iteration (ch a multiple of 16): the loop's test once */
      dst = widen4((uint32_t)arm_nn_read_s8x4_ia(&src), offset2, dst) + 8;
      dst = widen4((uint32_t)arm_nn_read_s8x4_ia(&src), offset2, dst) + 8;
    }
  }
}

/* Every channel pair of each of `triples` triples widened by widen_triples into `buf`. */
static __attribute__((noinline)) void run_triples(const cmx_conv_row_params* p, int32_t triples, const int8_t* weights,
                                                  const int32_t* constants, const int16_t* buf, int8_t* out) {
  const int32_t ch = p->in_ch;
  for (int32_t i = 0; i < triples; ++i) {
    const int16_t* col = buf + i * 3 * ch;
    cmx_row_triples k = {col, col + 3 * ch, constants, out + 3 * i * p->out_ch, p->out_ch, p->out_ch / 2};
    /* asked here, not before the loop: held across it, GCC spilled (VWW +4 K cycles) */
    const int floored = cmx_floored(p->output_offset, p->act_min);
    if (p->wide) {
      cmx_row_triples_s8(weights, &k, 1, floored);
    } else {
      cmx_row_triples_s8(weights, &k, 0, floored);
    }
  }
}
#endif

/* The convolution, its arguments checked (and staged for wide 2): a function of its own, so that GCC
 * allocates its loops as before staging existed (+5,900 instructions on KWS with the staging inside). */
static __attribute__((noinline)) void convolve(const cmx_conv_row_params* p, const int8_t* input,
                                               const int8_t* weights, const int32_t* k, int16_t* scratch,
                                               int8_t* output) {
  const int fast = all_fast(p, k);
  const int full = p->act_min == -128 && p->act_max == 127;
  const int dilated = p->dilation > 1 && p->kernel > 1;
  cmx_conv_row_params q = *p; /* what compute() reads: a position of the widened chunk is a column */
  q.in_ch = cmx_conv_row_s8_column(p);
  const int aligned = ((p->stride * q.in_ch) & 1) == 0 && ((uintptr_t)scratch & 3) == 0;
#if defined(CMX_ROW_BLOCKS)
  const int three = aligned && takes_triples(p, fast);
#endif
  /* fast and aligned, an activation range short of int8 (not full): the full form, then the range */
  const uint32_t lo4 = cmx_byte4(p->act_min), hi4 = cmx_byte4(p->act_max);
  for (int32_t oy = 0; oy < p->out_rows; ++oy) {
    const int32_t top = oy * p->row_stride - p->row_pad;
    for (int32_t x = 0; x < p->positions; x += p->chunk) {
      int32_t x0 = x, n = p->positions - x < p->chunk ? p->positions - x : p->chunk;
      int16_t* buf = scratch; /* the widened positions compute() reads */
#if defined(CMX_ROW_BLOCKS)
      if (three && n >= 3) { /* 1x1, one row: output position x0 reads input position x0 */
        const int32_t done = 3 * (n / 3);
        widen_triples(p, input + x0 * p->in_ch, done / 3, scratch);
        buf = scratch + done * p->in_ch;
        /* the chunk's other positions widened too before any output is written: the chunk stays one
         * copy-in block (cmx_gen/lower/delegate/overlap.py), its output may lie over its input */
        if (done < n) widen(p, input, x0 + done, n - done, buf);
        run_triples(p, done / 3, weights, k, scratch, output + x0 * p->out_ch);
        if (!full) cmx_clamp_s8(output + x0 * p->out_ch, done * p->out_ch, lo4, hi4);
        if (done == n) continue;
        x0 += done, n -= done;
      } else
#endif
      {
        const int32_t first = x0 * p->stride - p->pad;
        const int32_t count = (n - 1) * p->stride + (p->kernel - 1) * p->dilation + 1;
        if (p->rows > 1 || top < 0 || top >= p->in_rows) {
          widen_columns(p, input, first, count, top, scratch);
        } else {
          widen(p, input + top * p->in_positions * p->in_ch, first, count, scratch);
        }
      }
      int8_t* out = output + (oy * p->positions + x0) * p->out_ch;
      if (p->wide) {
        const int16_t* wide = (const int16_t*)(const void*)weights;
        /* one variant for both row widths: the 2 x 2 blocks' assembly (all of a fast, full layer's
         * position pairs but for rows of under two groups) once in the image, not once a variant (2 KB) */
        if (fast && aligned) {
          compute_wide(&q, buf, n, wide, k, out, 1, 1, 1, q.row_bytes >= 32);
          if (!full) cmx_clamp_s8(out, n * p->out_ch, lo4, hi4);
        } else {
          compute_wide(&q, buf, n, wide, k, out, 0, 0, 0, 0);
        }
      } else if (dilated) {
        if (fast && aligned && full) {
          compute(&q, buf, n, weights, k, out, 1, 1, 1, 1);
        } else {
          compute(&q, buf, n, weights, k, out, 0, 0, 0, 1);
        }
      } else if (fast && aligned) {
        compute(&q, buf, n, weights, k, out, 1, 1, 1, 0);
        if (!full) cmx_clamp_s8(out, n * p->out_ch, lo4, hi4);
      } else if (fast) {
        compute(&q, buf, n, weights, k, out, 1, 0, 0, 0);
      } else {
        compute(&q, buf, n, weights, k, out, 0, 0, 0, 0);
      }
    }
  }
}
#endif

arm_cmsis_nn_status cmx_conv_row_s8(const cmx_conv_row_params* p, const int8_t* input, const int8_t* weights,
                                    const int32_t* constants, int16_t* scratch, int8_t* output) {
#if !defined(ARM_MATH_DSP)
  (void)p, (void)input, (void)weights, (void)constants, (void)scratch, (void)output;
  return ARM_CMSIS_NN_NO_IMPL_ERROR; /* the plan chooses this kernel only for a core with DSP */
#else
  if (p->chunk < 2 || (p->chunk & 1) || p->row_bytes != cmx_conv_row_s8_row_bytes(p) || p->rows < 1 ||
      p->wide < 0 || p->wide > 2 ||
      (p->dilation > 1 && ((p->dilation * p->in_ch) % 2 != 0 || p->rows > 1 || p->wide)) ||
      (p->wide == 1 && ((uintptr_t)weights & 3) != 0) || (p->wide == 2 && ((uintptr_t)scratch & 3) != 0)) {
    return ARM_CMSIS_NN_ARG_ERROR;
  }
  if (p->wide == 2) {
    const staged st = stage(p, weights, constants, scratch);
    convolve(p, input, (const int8_t*)(const void*)st.weights, st.constants, scratch, output);
  } else {
    convolve(p, input, weights, constants, scratch, output);
  }
  return ARM_CMSIS_NN_SUCCESS;
#endif
}
