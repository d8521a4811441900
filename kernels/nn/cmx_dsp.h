/* The DSP kernels' support: the loads they share and every block of inline assembly of cmx-gen's DSP
 * kernels (kernels/nn/), as arm_nnsupportfunctions.h holds CMSIS-NN's; the kernels' files are C.
 * Internal to kernels/nn/. */
#pragma once

#include <stdint.h>
#include <string.h>

#include "arm_nn_math_types.h"
#include "arm_nnsupportfunctions.h"
#include "cmx_nn_layout.h"

/* The assembly kernels' requantization of one accumulator `a` already doubled (2 x acc: fast, every
 * |acc| < 2^30), multiplier in `m`, right shift (1 to 31) in the low byte of `s`: cmx_requantize_right's
 * SMMULR and rounding divide (cmx_requantize.h), as operand names of the asm it goes in; the output offset
 * added by the ADC that adds the divide's rounding carry (`off`: its last operand, a register holding the
 * offset, or "%[s], asr #8" where s holds it above the shift: ASR by a register reads only its low byte),
 * then SSAT: cmx_finish's fast, full form, an instruction an output less than an ADD of the offset. */
#define CMX_ASM_FINISH(a, m, s, off)                  \
  "smmulr %[" #a "], %[" #a "], %[" #m "]\n\t"        \
  "add %[" #a "], %[" #a "], %[" #a "], asr #31\n\t"  \
  CMX_ASM_DIVIDE_OUT(a, s, off)
/* CMX_ASM_FINISH of a floored layer (cmx_floored): no move of a negative value before the shift. */
#define CMX_ASM_FINISH_FLOORED(a, m, s, off)          \
  "smmulr %[" #a "], %[" #a "], %[" #m "]\n\t"        \
  CMX_ASM_DIVIDE_OUT(a, s, off)
#define CMX_ASM_DIVIDE_OUT(a, s, off)                 \
  "asrs %[" #a "], %[" #a "], %[" #s "]\n\t"          \
  "adc %[" #a "], %[" #a "], " off "\n\t"              \
  "ssat %[" #a "], #8, %[" #a "]\n\t"
/* cmx_right_and_offset (cmx_nn_layout.h): a right shift and the output offset in one word, as
 * CMX_ASM_FINISH's "%[s], asr #8" reads them. */

#if defined(ARM_MATH_DSP)
/* An int8 value in each of a word's four bytes (SSUB8 / SEL operands). */
static inline uint32_t cmx_byte4(int32_t v) { return 0x01010101u * (uint8_t)(int8_t)v; }

/* n int8 outputs at o clamped to an activation range [lo, hi] inside int8 (lo4, hi4: each byte four times),
 * four at a time by SSUB8 and SEL: after a kernel's fast form that saturated to int8 alone, the same bytes
 * as clamping each sum (a U-Net's skip shares its concat's quantization, so its ReLU ends above -128). */
static inline void cmx_clamp_s8(int8_t* o, int32_t n, uint32_t lo4, uint32_t hi4) {
  for (; n >= 4; n -= 4, o += 4) { /* the range: max(lo, .), then min(hi, .) */
    uint32_t v;
    memcpy(&v, o, 4);
    (void)__ssub8(v, lo4);
    v = __sel(v, lo4);
    (void)__ssub8(hi4, v);
    v = __sel(v, hi4);
    memcpy(o, &v, 4);
  }
  for (; n > 0; --n, ++o) {
    *o = *o < (int8_t)lo4 ? (int8_t)lo4 : *o > (int8_t)hi4 ? (int8_t)hi4 : *o;
  }
}
#endif

/* Four channels' int32 accumulators; a 2 x 2 block's (two channels at two positions). */
typedef struct {
  int32_t a0, a1, a2, a3;
} cmx_acc4;

typedef struct {
  int32_t a00, a10, a01, a11;
} cmx_acc2x2;

/* Two words from *at, then at += 8 bytes: one LDRD with post-increment (GCC splits a 64-bit load
 * into two LDRs and two adds), or two LDRs where the address may not be word-aligned. */
typedef struct {
  uint32_t lo, hi;
} word_pair;

static inline __attribute__((always_inline)) word_pair load_pair(const void** at, const int aligned) {
  word_pair v;
#if defined(__GNUC__) && defined(__thumb2__)
  if (aligned) {
    __asm("ldrd\t%0, %1, [%2], #8" : "=r"(v.lo), "=r"(v.hi), "+r"(*at) : "m"(*(const char(*)[8]) * at));
    return v;
  }
#endif
  (void)aligned;
  memcpy(&v.lo, *at, 4); /* unaligned LDRs (M4/M7/M33 allow them) */
  memcpy(&v.hi, (const char*)*at + 4, 4);
  *at = (const char*)*at + 8;
  return v;
}

#if defined(ARM_MATH_DSP) && !defined(ARM_MATH_MVEI) && defined(__GNUC__) && defined(__thumb2__)
/* cmx_depthwise_3x3_s8's walk: a group's record (four channels), made once a call. The weights
 * widened and doubled ((w0, w2), (w1, w3) of each tap), the doubled start (bias + input offset x the
 * weights' sum: the accumulator is 2 x acc, which SMMULR takes with no shift first), and each
 * channel's multiplier and right shift, the output offset above it (fast: every shift right, every
 * accumulator small); then the starts of a pixel whose first or last window column, or first or last
 * row, lies outside the input (the sum without those weights: CMX_WALK_LEFT, _RIGHT, _TOP, _BOTTOM). */
#define CMX_WALK_RECORD 46 /* words */
typedef struct {
  uint32_t weights[18];
  int32_t start2[4];
  int32_t multiplier[4];
  int32_t right_and_offset[4]; /* cmx_right_and_offset: the right shift, the output offset above it */
  int32_t start2_left[4];  /* without the first column's weights */
  int32_t start2_right[4]; /* without the last column's */
  int32_t start2_top[4];    /* without the first row's */
  int32_t start2_bottom[4]; /* without the last row's */
} cmx_walk_group;

/* Which taps of the window cmx_dw_walk_pixels reads: all nine, or (a border pixel whose rows lie inside
 * the input) the last two columns from the input's first, or the first two up to its last; or (its
 * columns inside) the last two rows from the input's first, or the first two down to its last. */
#define CMX_WALK_ALL 0
#define CMX_WALK_LEFT 1
#define CMX_WALK_RIGHT 2
#define CMX_WALK_TOP 3
#define CMX_WALK_BOTTOM 4

/* What cmx_dw_walk_pixels reads from the caller's frame (the loop holds all 14 registers). */
typedef struct {
  const cmx_walk_group* end;   /* the record after the last group's */
  const cmx_walk_group* first; /* the first group's */
  int32_t next_x;              /* from where the last group leaves x to the next pixel's window */
  int32_t next_o;              /* ... and o to the next pixel's output */
  int32_t pixels;              /* pixels left, one or more */
} cmx_walk_consts;

/* k.pixels output pixels of cmx_depthwise_3x3_s8's walk, a row's run of them, every group of four
 * channels (fast, full): the window's nine taps from `x` (taps `ch` bytes apart, rows `row` apart), 10 cycles a
 * tap (the input word and the two weight words loaded back to back, two SXTB16, four 16 x 16
 * multiply-accumulates), then the four outputs' requantization (SMMULR, the rounding divide), the
 * offset and SSAT: the same bytes as cmx_finish's fast, full form. `taps` (one asm statement each): CMX_WALK_ALL,
 * or a border pixel's six taps inside the input from `x` (CMX_WALK_LEFT: x the input's first column;
 * CMX_WALK_TOP: its first row), started without the outside column's or row's weights: the same sum as
 * its window copied with the zero point there (each outside tap's product with the offset cancels that
 * tap's share of the start), 60 cycles of taps a group against 90 and the copy's ~45. floored (cmx_floored):
 * CMX_WALK_ALL's rounding divide without its move of a negative value. */
static inline __attribute__((always_inline)) void cmx_dw_walk_pixels(const int8_t* x, const cmx_walk_group* r,
                                                                     int8_t* o, int32_t ch, int32_t row,
                                                                     cmx_walk_consts* k, const int taps,
                                                                     const int floored) {
  int32_t a0, a1, a2, a3;
  uint32_t v, v13, wa, wb;
#define CMX_WALK_TAP(load, wo)                            \
  load                                                    \
  "ldr %[wa], [%[r], #" #wo "]\n\t"                     \
  "ldr %[wb], [%[r], #" #wo " + 4]\n\t"                 \
  "sxtb16 %[v13], %[v], ror #8\n\t"                     \
  "sxtb16 %[v], %[v]\n\t"                               \
  "smlabb %[a0], %[v], %[wa], %[a0]\n\t"                \
  "smlatt %[a2], %[v], %[wa], %[a2]\n\t"                \
  "smlabb %[a1], %[v13], %[wb], %[a1]\n\t"              \
  "smlatt %[a3], %[v13], %[wb], %[a3]\n\t"
#define CMX_WALK_TWO(w0, w1)                              \
  CMX_WALK_TAP("ldr %[v], [%[x]]\n\t", w0)              \
  CMX_WALK_TAP("ldr %[v], [%[x], %[ch]]\n\t", w1)
#define CMX_WALK_ROW(w0, w1, w2) CMX_WALK_TWO(w0, w1) CMX_WALK_TAP("ldr %[v], [%[x], %[ch2]]\n\t", w2)
/* the loop, its accumulators started from the record's words at `start`, its taps `rows` (x moved a row
 * between two), x moved back `back` after them */
#define CMX_WALK(start, rows, back, F)                                                                      \
  __asm volatile("1:\n\t"                                                                                 \
        "ldr %[a0], [%[r], #" #start "]\n\t"                                                              \
        "ldr %[a1], [%[r], #" #start " + 4]\n\t"                                                          \
        "ldr %[a2], [%[r], #" #start " + 8]\n\t"                                                          \
        "ldr %[a3], [%[r], #" #start " + 12]\n\t"                                                         \
        rows                                                                                                \
        "ldr %[v], [%[r], #88]\n\t"                                                                       \
        "ldr %[v13], [%[r], #92]\n\t"                                                                     \
        "ldr %[wa], [%[r], #104]\n\t"                                                                     \
        "ldr %[wb], [%[r], #108]\n\t"                                                                     \
        F(a0, v, wa, "%[wa], asr #8") F(a1, v13, wb, "%[wb], asr #8")                                     \
        "ldr %[v], [%[r], #96]\n\t"                                                                       \
        "ldr %[v13], [%[r], #100]\n\t"                                                                    \
        "ldr %[wa], [%[r], #112]\n\t"                                                                     \
        "ldr %[wb], [%[r], #116]\n\t"                                                                     \
        F(a2, v, wa, "%[wa], asr #8") F(a3, v13, wb, "%[wb], asr #8")                                     \
        "strb %[a0], [%[o]]\n\t"                                                                          \
        "strb %[a1], [%[o], #1]\n\t"                                                                      \
        "strb %[a2], [%[o], #2]\n\t"                                                                      \
        "strb %[a3], [%[o], #3]\n\t"                                                                      \
        "adds %[o], %[o], #4\n\t"                                                                         \
        back /* back to the first row, on to the next group's taps */                                       \
        "adds %[x], %[x], #4\n\t"                                                                         \
        "adds %[r], %[r], #184\n\t"                                                                       \
        "ldr %[v], %[end]\n\t"                                                                            \
        "cmp %[r], %[v]\n\t"                                                                              \
        "bne 1b\n\t"                                                                                      \
        "ldr %[v], %[pixels]\n\t" /* the next pixel of the run: its window, its output, the first group */ \
        "subs %[v], %[v], #1\n\t"                                                                         \
        "str %[v], %[pixels]\n\t"                                                                         \
        "beq 3f\n\t"                                                                                      \
        "ldr %[v], %[next_x]\n\t"                                                                         \
        "ldr %[v13], %[next_o]\n\t"                                                                       \
        "ldr %[r], %[first]\n\t"                                                                          \
        "add %[x], %[x], %[v]\n\t"                                                                        \
        "add %[o], %[o], %[v13]\n\t"                                                                      \
        "b 1b\n"                                                                                           \
        "3:"                                                                                                \
        : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [v] "=&r"(v), [v13] "=&r"(v13),  \
          [wa] "=&r"(wa), [wb] "=&r"(wb), [x] "+r"(x), [r] "+r"(r), [o] "+r"(o), [pixels] "+m"(k->pixels)   \
        : [ch] "r"(ch), [ch2] "r"(2 * ch), [row] "r"(row), [end] "m"(k->end),                                 \
          [first] "m"(k->first), [next_x] "m"(k->next_x), [next_o] "m"(k->next_o)                            \
        : "cc", "memory")
#define CMX_WALK_NEXT "add %[x], %[x], %[row]\n\t"
#define CMX_WALK_BACK2 "sub %[x], %[x], %[row], lsl #1\n\t"
#define CMX_WALK_BACK1 "sub %[x], %[x], %[row]\n\t"
#define CMX_WALK_NINE                                                                                       \
  CMX_WALK_ROW(0, 8, 16) CMX_WALK_NEXT CMX_WALK_ROW(24, 32, 40) CMX_WALK_NEXT CMX_WALK_ROW(48, 56, 64)
  if (taps == CMX_WALK_LEFT) { /* the window's columns 1 and 2 */
    CMX_WALK(120, CMX_WALK_TWO(8, 16) CMX_WALK_NEXT CMX_WALK_TWO(32, 40) CMX_WALK_NEXT CMX_WALK_TWO(56, 64),
             CMX_WALK_BACK2, CMX_ASM_FINISH);
  } else if (taps == CMX_WALK_RIGHT) { /* its columns 0 and 1 */
    CMX_WALK(136, CMX_WALK_TWO(0, 8) CMX_WALK_NEXT CMX_WALK_TWO(24, 32) CMX_WALK_NEXT CMX_WALK_TWO(48, 56),
             CMX_WALK_BACK2, CMX_ASM_FINISH);
  } else if (taps == CMX_WALK_TOP) { /* its rows 1 and 2 */
    CMX_WALK(152, CMX_WALK_ROW(24, 32, 40) CMX_WALK_NEXT CMX_WALK_ROW(48, 56, 64), CMX_WALK_BACK1, CMX_ASM_FINISH);
  } else if (taps == CMX_WALK_BOTTOM) { /* its rows 0 and 1 */
    CMX_WALK(168, CMX_WALK_ROW(0, 8, 16) CMX_WALK_NEXT CMX_WALK_ROW(24, 32, 40), CMX_WALK_BACK1, CMX_ASM_FINISH);
  } else if (floored) { /* cmx_floored: the border pixels, fewer, as exact */
    CMX_WALK(72, CMX_WALK_NINE, CMX_WALK_BACK2, CMX_ASM_FINISH_FLOORED);
  } else {
    CMX_WALK(72, CMX_WALK_NINE, CMX_WALK_BACK2, CMX_ASM_FINISH);
  }
#undef CMX_WALK_NEXT
#undef CMX_WALK_BACK2
#undef CMX_WALK_BACK1
#undef CMX_WALK_NINE
#undef CMX_WALK
#undef CMX_WALK_TWO
#undef CMX_WALK_TAP
#undef CMX_WALK_ROW
}
#endif

#if defined(ARM_MATH_DSP) && !defined(ARM_MATH_MVEI)
/* cmx_depthwise_3x3_s8's grouped path: the nine taps of four channels' output at q (two words a position, rows row_bytes apart) with
 * the group's widened weights: an LDRD of input and one of weights, four 16 x 16 multiply-
 * accumulates a tap (GCC's allocation of the C loop spilled the row pointers and the biases). */
static inline __attribute__((always_inline)) void cmx_dw_nine_taps(int32_t* a0, int32_t* a1, int32_t* a2, int32_t* a3,
                                                                   const uint32_t* q, const uint32_t* w,
                                                                   int32_t row_bytes) {
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
#endif

#if defined(ARM_MATH_DSP)
/* cmx_conv_row_s8: the 2 x 2 block's inner loop on int8 weights over `pairs` pairs of groups (two groups an
 * iteration: the loop's own two instructions once per 32 MACs), both columns word-aligned: rows c
 * and c + 1 interleaved a group at a time, widened by SXTB16 as CMSIS-NN's kernel does, 15
 * instructions a group. The same products and sums as the C loop, in the same order: inline
 * assembly because GCC's allocation of an unrolled loop spilled (`#pragma GCC unroll 2` measured
 * slower on every case). It holds all 14 registers, so the block around it spills: taken from 8
 * groups (32 values a row) up, where it gains (VWW's int8 layers; on the wide layers' int16
 * loop the same measured +2.7 % on VWW). */
/* a group's weights for channels c and c + 1 (one word each) widened, and their products with the first
 * position's four values (from b) */
#define CMX_S8_WEIGHTS_FIRST(b)                       \
  "ldr %[w0], [%[wp]], #4\n\t"                         \
  "ldr %[w1], [%[wp]], #4\n\t"                         \
  "ldr %[x0], [%[" #b "]], #4\n\t"                     \
  "ldr %[x1], [%[" #b "]], #4\n\t"                     \
  "sxtb16 %[t0], %[w0]\n\t"                            \
  "sxtb16 %[w0], %[w0], ror #8\n\t"                    \
  "sxtb16 %[t1], %[w1]\n\t"                            \
  "sxtb16 %[w1], %[w1], ror #8\n\t"                    \
  "smlad %[a00], %[t0], %[x0], %[a00]\n\t"             \
  "smlad %[a10], %[t1], %[x0], %[a10]\n\t"             \
  "smlad %[a00], %[w0], %[x1], %[a00]\n\t"             \
  "smlad %[a10], %[w1], %[x1], %[a10]\n\t"
/* the same widened weights against a further position's four values (from b), into a0 and a1 */
#define CMX_S8_NEXT(b, a0, a1)                        \
  "ldr %[x0], [%[" #b "]], #4\n\t"                     \
  "ldr %[x1], [%[" #b "]], #4\n\t"                     \
  "smlad %[" #a0 "], %[t0], %[x0], %[" #a0 "]\n\t"     \
  "smlad %[" #a1 "], %[t1], %[x0], %[" #a1 "]\n\t"     \
  "smlad %[" #a0 "], %[w0], %[x1], %[" #a0 "]\n\t"     \
  "smlad %[" #a1 "], %[w1], %[x1], %[" #a1 "]\n\t"
#define CMX_GROUP_S8 CMX_S8_WEIGHTS_FIRST(b0) CMX_S8_NEXT(b1, a01, a11)
static inline __attribute__((always_inline)) cmx_acc2x2 cmx_row_group_pairs(cmx_acc2x2 a, const void** wp,
                                                                            const void** b0, const void** b1,
                                                                            int32_t pairs) {
#if defined(__GNUC__) && defined(__thumb2__) && defined(ARM_MATH_DSP)
  uint32_t w0, w1, t0, t1, x0, x1;
#define CMX_OPERANDS                                                                                            \
  : [a00] "+r"(a.a00), [a10] "+r"(a.a10), [a01] "+r"(a.a01), [a11] "+r"(a.a11), [wp] "+r"(*wp), [b0] "+r"(*b0), \
    [b1] "+r"(*b1), [n] "+r"(pairs), [w0] "=&r"(w0), [w1] "=&r"(w1), [t0] "=&r"(t0), [t1] "=&r"(t1),            \
    [x0] "=&r"(x0), [x1] "=&r"(x1)                                                                              \
  :                                                                                                             \
  : "cc", "memory"
  __asm("1:\n\t" CMX_GROUP_S8 CMX_GROUP_S8 "subs %[n], %[n], #1\n\tbne 1b" CMX_OPERANDS);
#undef CMX_OPERANDS
#else
  for (int32_t g = 2 * pairs; g > 0; --g) { /* the same sums in C (never called: the kernel needs DSP) */
    const word_pair ww = load_pair(wp, 1);
    const word_pair w_c = {SXTB16(ww.lo), SXTB16_RORn(ww.lo, 8)}, w_d = {SXTB16(ww.hi), SXTB16_RORn(ww.hi, 8)};
    const word_pair x = load_pair(b0, 1), y = load_pair(b1, 1);
    a.a00 = SMLAD(w_c.hi, x.hi, SMLAD(w_c.lo, x.lo, a.a00));
    a.a10 = SMLAD(w_d.hi, x.hi, SMLAD(w_d.lo, x.lo, a.a10));
    a.a01 = SMLAD(w_c.hi, y.hi, SMLAD(w_c.lo, y.lo, a.a01));
    a.a11 = SMLAD(w_d.hi, y.hi, SMLAD(w_d.lo, y.lo, a.a11));
  }
#endif
  return a;
}

/* cmx_conv_row_s8: the 2 x 2 block's inner loop on int16 weights over `pairs` pairs of groups, both columns
 * word-aligned: single loads, so that each run of them pipelines on a DSP core (the Cortex-M4 TRM's
 * 3.3.2: a load after a load takes one cycle; an LDRD three), the pointers moved once an iteration.
 * Tuned on cmx-gen's cycle estimate, not on instructions: 44 instructions per 32 MACs against C's
 * 28 a group (four LDRDs, eight SMLADs, the loop's two), and about 43 cycles against 48. It holds
 * all 14 registers: from 8 groups (32 values a row) up. The same products as the C loop; their int32 sum wraps
 * the same in any order. */
#define CMX_WIDE_GROUP(x, w)                      \
  "ldr %[v0], [%[b0], #" #x "]\n\t"              \
  "ldr %[v1], [%[b0], #" #x "+4]\n\t"            \
  "ldr %[v2], [%[b1], #" #x "]\n\t"              \
  "ldr %[v3], [%[b1], #" #x "+4]\n\t"            \
  "ldr %[v4], [%[wp], #" #w "]\n\t"              \
  "ldr %[v5], [%[wp], #" #w "+4]\n\t"            \
  "smlad %[a00], %[v4], %[v0], %[a00]\n\t"       \
  "smlad %[a00], %[v5], %[v1], %[a00]\n\t"       \
  "smlad %[a01], %[v4], %[v2], %[a01]\n\t"       \
  "smlad %[a01], %[v5], %[v3], %[a01]\n\t"       \
  "ldr %[v4], [%[wp], #" #w "+8]\n\t"            \
  "ldr %[v5], [%[wp], #" #w "+12]\n\t"           \
  "smlad %[a10], %[v4], %[v0], %[a10]\n\t"       \
  "smlad %[a10], %[v5], %[v1], %[a10]\n\t"       \
  "smlad %[a11], %[v4], %[v2], %[a11]\n\t"       \
  "smlad %[a11], %[v5], %[v3], %[a11]\n\t"

static inline __attribute__((always_inline)) cmx_acc2x2 cmx_row_wide_pairs(cmx_acc2x2 a, const void** wp,
                                                                           const void** b0, const void** b1,
                                                                           int32_t pairs) {
#if defined(__GNUC__) && defined(__thumb2__) && defined(ARM_MATH_DSP)
  uint32_t v0, v1, v2, v3, v4, v5;
  __asm("1:\n\t" CMX_WIDE_GROUP(0, 0) CMX_WIDE_GROUP(8, 16)
        "add %[b0], %[b0], #16\n\t"
        "add %[b1], %[b1], #16\n\t"
        "add %[wp], %[wp], #32\n\t"
        "subs %[n], %[n], #1\n\t"
        "bne 1b"
        : [a00] "+r"(a.a00), [a10] "+r"(a.a10), [a01] "+r"(a.a01), [a11] "+r"(a.a11), [wp] "+r"(*wp),
          [b0] "+r"(*b0), [b1] "+r"(*b1), [n] "+r"(pairs), [v0] "=&r"(v0), [v1] "=&r"(v1), [v2] "=&r"(v2),
          [v3] "=&r"(v3), [v4] "=&r"(v4), [v5] "=&r"(v5)
        :
        : "cc", "memory");
#else
  for (int32_t g = 2 * pairs; g > 0; --g) { /* the same sums in C (never called: the kernel needs DSP) */
    const word_pair x0 = load_pair(b0, 1), x1 = load_pair(b1, 1);
    word_pair w = load_pair(wp, 1);
    a.a00 = SMLAD(w.hi, x0.hi, SMLAD(w.lo, x0.lo, a.a00));
    a.a01 = SMLAD(w.hi, x1.hi, SMLAD(w.lo, x1.lo, a.a01));
    w = load_pair(wp, 1);
    a.a10 = SMLAD(w.hi, x0.hi, SMLAD(w.lo, x0.lo, a.a10));
    a.a11 = SMLAD(w.hi, x1.hi, SMLAD(w.lo, x1.lo, a.a11));
  }
#endif
  return a;
}
/* The most groups cmx_conv_row_s8's 2 x 2 blocks take: their count holds 65535 iterations at most. */
#define CMX_ROW_MAX_GROUPS 262139

#if defined(__GNUC__) && defined(__thumb2__)
/* A loop count for cmx_conv_row_s8's assembly: `iterations` (1 to 65535) counted up in the high half to
 * the carry out (ADDS #0x10000, BCC). */
static inline uint32_t cmx_row_count(int32_t iterations) { return (uint32_t)(65536 - iterations) << 16; }

/* The blocks' iterations for `groups` groups of four values (two group pairs an iteration): at most
 * 65535 for groups up to CMX_ROW_MAX_GROUPS. */
static inline int32_t cmx_row_iterations(int32_t groups) { return (groups / 2 + 1) / 2; }

/* cmx_conv_row_s8's 2 x 2 blocks of one position pair, every channel pair, in assembly (fast, full,
 * the columns word-aligned, two groups or more, a bias): the caller's frame holds what the channel loop
 * carries (the group loop holds all 14 registers), and the loop advances it there. Where GCC's code
 * around the group-pair loops spilled and reloaded ~35 cycles an output (KWS's and VWW's pointwise
 * layers), this takes ~18: a pair's biases, multipliers and shifts by LDRD with post-increment, each
 * output's requantization as cmx_finish's fast, full form. */
typedef struct {
  const void* col0;     /* the first position's widened values (int16) */
  const void* col1;     /* the second's */
  uint32_t count;       /* cmx_row_count(cmx_row_iterations(groups)) */
  const int32_t* pair;  /* channel c's pair record (cmx_conv_row_s8_constants), advanced one a channel pair */
  int8_t* out0;         /* the first position's output at channel c; the second's out_ch further */
  int32_t out_ch;
  int32_t left;         /* channel pairs left */
} cmx_row_blocks;

/* A pair's accumulators from its biases, the columns and the group count from the frame. */
#define CMX_ROW_BLOCK_ENTRY                 \
  "1:\n\t"                                  \
  "ldr %[b0], %[pair]\n\t"                  \
  "ldrd %[a00], %[a10], [%[b0]]\n\t"        \
  "mov %[a01], %[a00]\n\t"                  \
  "mov %[a11], %[a10]\n\t"                  \
  "ldr %[b0], %[col0]\n\t"                  \
  "ldr %[b1], %[col1]\n\t"                  \
  "ldr %[n], %[count]\n\t"
/* one output's requantization, the shift word `s` a pair record's (the output offset above the shift) */
#define CMX_ROW_BLOCK_REQ(a, m, s) CMX_ROW_REQ(CMX_ASM_FINISH, a, m, s)
/* ... with FINISH, CMX_ASM_FINISH or CMX_ASM_FINISH_FLOORED */
#define CMX_ROW_REQ(FINISH, a, m, s) "lsls %[" #a "], %[" #a "], #1\n\t" FINISH(a, m, s, "%[" #s "], asr #8")
/* After the group loop, with the six temporaries named A-F: the pair's requantization, its four
 * bytes, the next pair. */
#define CMX_ROW_BLOCK_EXIT(A, B, C, D, E, F)                                                        \
  "ldr %[" #A "], %[pair]\n\t" /* multipliers C, D; right shifts and the offset E, F */             \
  "ldrd %[" #C "], %[" #D "], [%[" #A "], #8]\n\t"                                                  \
  "ldrd %[" #E "], %[" #F "], [%[" #A "], #16]\n\t"                                                 \
  "adds %[" #A "], %[" #A "], #24\n\t"                                                              \
  "str %[" #A "], %[pair]\n\t"                                                                      \
  CMX_ROW_BLOCK_REQ(a00, C, E) CMX_ROW_BLOCK_REQ(a01, C, E)                                         \
  CMX_ROW_BLOCK_REQ(a10, D, F) CMX_ROW_BLOCK_REQ(a11, D, F)                                         \
  "ldr %[" #B "], %[out0]\n\t"                                                                      \
  "ldr %[" #C "], %[out_ch]\n\t"                                                                    \
  "strb %[a00], [%[" #B "]]\n\t" /* stores at an immediate offset: one cycle each (TRM 3.3.2) */      \
  "add %[" #C "], %[" #B "], %[" #C "]\n\t"                                                         \
  "strb %[a10], [%[" #B "], #1]\n\t"                                                                \
  "strb %[a01], [%[" #C "]]\n\t"                                                                    \
  "strb %[a11], [%[" #C "], #1]\n\t"                                                                \
  "add %[" #B "], %[" #B "], #2\n\t"                                                                \
  "str %[" #B "], %[out0]\n\t"                                                                      \
  "ldr %[" #A "], %[left]\n\t"                                                                      \
  "subs %[" #A "], %[" #A "], #1\n\t"                                                               \
  "str %[" #A "], %[left]\n\t"                                                                      \
  "bne 1b"
#define CMX_ROW_BLOCK_OPERANDS(A, B, C, D, E, F)                                                            \
  : [a00] "=&r"(a00), [a10] "=&r"(a10), [a01] "=&r"(a01), [a11] "=&r"(a11), [wp] "+r"(wp), [b0] "=&r"(b0),  \
    [b1] "=&r"(b1), [n] "=&r"(n), [A] "=&r"(t[0]), [B] "=&r"(t[1]), [C] "=&r"(t[2]), [D] "=&r"(t[3]),       \
    [E] "=&r"(t[4]), [F] "=&r"(t[5]), [pair] "+m"(k->pair), [out0] "+m"(k->out0), [left] "+m"(k->left)       \
  : [col0] "m"(k->col0), [col1] "m"(k->col1), [count] "m"(k->count), [out_ch] "m"(k->out_ch)                \
  : "cc", "memory"

/* int16 weights (p->wide): the group pairs two an iteration (the loop's ADDS and BCC once per 64 MACs),
 * each pointer moved by the first load that reads it (post-indexed: a load after a load still
 * pipelines, the TRM's 3.3.2), so no ADD an iteration; an odd pair count enters at the second pair with
 * the pointers a pair on. Then (odd) one group more. Returns the weights after the last channel pair's
 * rows. 36 cycles a pair of groups against 41 with the pointers added once a pair. */
#define CMX_WIDE_GROUP_ADVANCE                    \
  "ldr %[v0], [%[b0]], #32\n\t"                   \
  "ldr %[v1], [%[b0], #-28]\n\t"                  \
  "ldr %[v2], [%[b1]], #32\n\t"                   \
  "ldr %[v3], [%[b1], #-28]\n\t"                  \
  "ldr %[v4], [%[wp]], #64\n\t"                   \
  "ldr %[v5], [%[wp], #-60]\n\t"                  \
  "smlad %[a00], %[v4], %[v0], %[a00]\n\t"       \
  "smlad %[a00], %[v5], %[v1], %[a00]\n\t"       \
  "smlad %[a01], %[v4], %[v2], %[a01]\n\t"       \
  "smlad %[a01], %[v5], %[v3], %[a01]\n\t"       \
  "ldr %[v4], [%[wp], #-56]\n\t"                  \
  "ldr %[v5], [%[wp], #-52]\n\t"                  \
  "smlad %[a10], %[v4], %[v0], %[a10]\n\t"       \
  "smlad %[a10], %[v5], %[v1], %[a10]\n\t"       \
  "smlad %[a11], %[v4], %[v2], %[a11]\n\t"       \
  "smlad %[a11], %[v5], %[v3], %[a11]\n\t"
/* The group pairs, two an iteration (k->count): an even count from the first, an odd one entering at the
 * second pair with the pointers a pair on (the caller chooses which: no test of the count a block). */
#define CMX_ROW_WIDE_EVEN                         \
  "4:\n\t"                                        \
  CMX_WIDE_GROUP_ADVANCE CMX_WIDE_GROUP(-24, -48) \
  CMX_WIDE_GROUP(-16, -32) CMX_WIDE_GROUP(-8, -16) \
  "adds %[n], %[n], #0x10000\n\t"                 \
  "bcc 4b\n\t"
#define CMX_ROW_WIDE_ODD                          \
  "add %[b0], %[b0], #16\n\t"                     \
  "add %[b1], %[b1], #16\n\t"                     \
  "add %[wp], %[wp], #32\n\t"                     \
  "b 5f\n"                                         \
  "4:\n\t"                                        \
  CMX_WIDE_GROUP_ADVANCE CMX_WIDE_GROUP(-24, -48) \
  "5:\n\t"                                        \
  CMX_WIDE_GROUP(-16, -32) CMX_WIDE_GROUP(-8, -16) \
  "adds %[n], %[n], #0x10000\n\t"                 \
  "bcc 4b\n\t"
/* an odd last group: the columns are read again from the frame by the next pair, so only wp moves */
#define CMX_ROW_WIDE_TAIL CMX_WIDE_GROUP(0, 0) "add %[wp], %[wp], #16\n\t"
#define CMX_ROW_WIDE_BLOCKS(pairs, tail)                                                         \
  __asm volatile(CMX_ROW_BLOCK_ENTRY pairs tail CMX_ROW_BLOCK_EXIT(v0, v1, v2, v3, v4, v5) \
                 CMX_ROW_BLOCK_OPERANDS(v0, v1, v2, v3, v4, v5))
/* Each of the four variants `groups` takes (odd: a last group; odd_pairs: an odd count of pairs), an
 * asm statement of its own with `blocks`: the loop's parity and the tail are fixed in each. */
#define CMX_ROW_VARIANTS(blocks, even, odd_entry, tail)                \
  const int odd = groups & 1, odd_pairs = (groups / 2) & 1;            \
  if (odd && odd_pairs) {                                              \
    blocks(odd_entry, tail);                            \
  } else if (odd) {                                     \
    blocks(even, tail);                                 \
  } else if (odd_pairs) {                               \
    blocks(odd_entry, "");                              \
  } else {                                              \
    blocks(even, "");                                   \
  }
/* k->count: cmx_row_count(cmx_row_iterations(groups)) */
static inline __attribute__((always_inline)) const void* cmx_row_blocks_wide(const void* wp, cmx_row_blocks* k,
                                                                            const int32_t groups) {
  int32_t a00, a10, a01, a11, n;
  const void *b0, *b1;
  uint32_t t[6];
  CMX_ROW_VARIANTS(CMX_ROW_WIDE_BLOCKS, CMX_ROW_WIDE_EVEN, CMX_ROW_WIDE_ODD, CMX_ROW_WIDE_TAIL);
  return wp;
}
#undef CMX_ROW_WIDE_EVEN
#undef CMX_ROW_WIDE_ODD
#undef CMX_ROW_WIDE_TAIL
#undef CMX_ROW_WIDE_BLOCKS
#undef CMX_WIDE_GROUP_ADVANCE

/* int8 weights: the group pairs as cmx_row_group_pairs' (SXTB16 widens them), two an iteration (the
 * loop's ADDS and BCC once per 64 MACs; an odd pair count enters at the second: the loads
 * post-index, so no pointer moves first), then (odd) one group more. */
#define CMX_ROW_S8_EVEN                           \
  "4:\n\t" CMX_GROUP_S8 CMX_GROUP_S8 CMX_GROUP_S8 CMX_GROUP_S8 \
  "adds %[n], %[n], #0x10000\n\t"                 \
  "bcc 4b\n\t"
#define CMX_ROW_S8_ODD                            \
  "b 5f\n"                                         \
  "4:\n\t" CMX_GROUP_S8 CMX_GROUP_S8              \
  "5:\n\t" CMX_GROUP_S8 CMX_GROUP_S8              \
  "adds %[n], %[n], #0x10000\n\t"                 \
  "bcc 4b\n\t"
#define CMX_ROW_S8_BLOCKS(pairs, tail)                                                           \
  __asm volatile(CMX_ROW_BLOCK_ENTRY pairs tail CMX_ROW_BLOCK_EXIT(w0, w1, t0, t1, x0, x1) \
                 CMX_ROW_BLOCK_OPERANDS(w0, w1, t0, t1, x0, x1))
/* k->count as cmx_row_blocks_wide's */
static inline __attribute__((always_inline)) const void* cmx_row_blocks_s8(const void* wp, cmx_row_blocks* k,
                                                                          const int32_t groups) {
  int32_t a00, a10, a01, a11, n;
  const void *b0, *b1;
  uint32_t t[6];
  CMX_ROW_VARIANTS(CMX_ROW_S8_BLOCKS, CMX_ROW_S8_EVEN, CMX_ROW_S8_ODD, CMX_GROUP_S8);
  return wp;
}
/* cmx_conv_row_s8's 1x1 layers, three positions at a time (cmx_row_triples_s8): on int8 weights a channel
 * pair's weights widened once (4 SXTB16) for 12 SMLADs, where the 2 x 2 block widens them for 8; the
 * three positions' widened values interleaved a group at a time (group g of position j at (3g + j) x 8
 * bytes) so one pointer reads them all: all 14 registers are the six accumulators, the four widened
 * weights, two input words and the two pointers, and the group loop ends on the input pointer
 * against its end in the frame. ~27 cycles per 24 MACs against the 2 x 2 block's 20 per 16. */
typedef struct {
  const void* col;       /* the triple's widened values, interleaved */
  const void* end;       /* col + groups x 24 bytes */
  const int32_t* pair;   /* channel c's pair record (cmx_conv_row_s8_constants), advanced one a channel pair */
  int8_t* out0;          /* the first position's output at channel c; the others out_ch further each */
  int32_t out_ch;
  int32_t left;          /* channel pairs left */
} cmx_row_triples;

#define CMX_TRIPLE_GROUP CMX_S8_WEIGHTS_FIRST(bp) CMX_S8_NEXT(bp, a01, a11) CMX_S8_NEXT(bp, a02, a12)

/* int16 weights (wide): each channel's four values of a group two words, no SXTB16 */
#define CMX_TRIPLE_GROUP_WIDE                           \
  "ldr %[w0], [%[wp]], #16\n\t"                         \
  "ldr %[w1], [%[wp], #-12]\n\t"                        \
  "ldr %[t0], [%[wp], #-8]\n\t"                         \
  "ldr %[t1], [%[wp], #-4]\n\t"                         \
  "ldr %[x0], [%[bp]], #4\n\t"                          \
  "ldr %[x1], [%[bp]], #4\n\t"                          \
  "smlad %[a00], %[w0], %[x0], %[a00]\n\t"              \
  "smlad %[a10], %[t0], %[x0], %[a10]\n\t"              \
  "smlad %[a00], %[w1], %[x1], %[a00]\n\t"              \
  "smlad %[a10], %[t1], %[x1], %[a10]\n\t"              \
  "ldr %[x0], [%[bp]], #4\n\t"                          \
  "ldr %[x1], [%[bp]], #4\n\t"                          \
  "smlad %[a01], %[w0], %[x0], %[a01]\n\t"              \
  "smlad %[a11], %[t0], %[x0], %[a11]\n\t"              \
  "smlad %[a01], %[w1], %[x1], %[a01]\n\t"              \
  "smlad %[a11], %[t1], %[x1], %[a11]\n\t"              \
  "ldr %[x0], [%[bp]], #4\n\t"                          \
  "ldr %[x1], [%[bp]], #4\n\t"                          \
  "smlad %[a02], %[w0], %[x0], %[a02]\n\t"              \
  "smlad %[a12], %[t0], %[x0], %[a12]\n\t"              \
  "smlad %[a02], %[w1], %[x1], %[a02]\n\t"              \
  "smlad %[a12], %[t1], %[x1], %[a12]\n\t"

/* Every channel pair of one triple (fast, full, a bias, groups of four values a multiple of four; floored:
 * cmx_floored, CMX_ASM_FINISH_FLOORED): four groups an iteration (the end test, a load and a compare,
 * once per 96 MACs). Returns the weights after
 * the last pair's rows. (Eight groups an iteration took VWW -170 K cycles at zero wait states, but the
 * loop and its channel pair's requantization then filled more than a 1 KB instruction cache: priced as
 * on the NUCLEO-L4R5ZI, 16.9 M -> 20.4 M, its flash lines missed in sequence 81 K -> 810 K. An entry at
 * the third group for an odd count of group pairs cost a second copy of each loop, 1.3 KB, or a test a
 * channel pair, +0.4 % cycles on KWS and VWW, whose layers need neither.) */
#define CMX_TRIPLES(G, F)                                                                                    \
  __asm volatile(                                                                                                  \
      "1:\n\t"                                                                                                     \
      "ldr %[bp], %[pair]\n\t"                                                                                     \
      "ldrd %[a00], %[a10], [%[bp]]\n\t"                                                                           \
      "mov %[a01], %[a00]\n\t"                                                                                     \
      "mov %[a02], %[a00]\n\t"                                                                                     \
      "mov %[a11], %[a10]\n\t"                                                                                     \
      "mov %[a12], %[a10]\n\t"                                                                                     \
      "ldr %[bp], %[col]\n\t"                                                                                      \
      "2:\n\t" G G G G                                                                                             \
      "ldr %[x0], %[end]\n\t"                                                                                      \
      "cmp %[bp], %[x0]\n\t"                                                                                       \
      "bne 2b\n\t"                                                                                                 \
      /* the pair's requantization: multipliers t0, t1; right shifts and the offset x0, x1 */                      \
      "ldr %[w0], %[pair]\n\t"                                                                                     \
      "ldrd %[t0], %[t1], [%[w0], #8]\n\t"                                                                         \
      "ldrd %[x0], %[x1], [%[w0], #16]\n\t"                                                                        \
      "adds %[w0], %[w0], #24\n\t"                                                                                 \
      "str %[w0], %[pair]\n\t" CMX_ROW_REQ(F, a00, t0, x0) CMX_ROW_REQ(F, a01, t0, x0) CMX_ROW_REQ(F, a02, t0, x0) \
          CMX_ROW_REQ(F, a10, t1, x1) CMX_ROW_REQ(F, a11, t1, x1) CMX_ROW_REQ(F, a12, t1, x1)                        \
      "ldr %[w0], %[out0]\n\t"                                                                                     \
      "ldr %[w1], %[out_ch]\n\t"                                                                                   \
      "strb %[a00], [%[w0]]\n\t" /* stores at an immediate offset: one cycle each (TRM 3.3.2) */                 \
      "strb %[a10], [%[w0], #1]\n\t"                                                                               \
      "add %[t0], %[w0], %[w1]\n\t"                                                                                \
      "strb %[a01], [%[t0]]\n\t"                                                                                   \
      "strb %[a11], [%[t0], #1]\n\t"                                                                               \
      "add %[t0], %[t0], %[w1]\n\t"                                                                                \
      "strb %[a02], [%[t0]]\n\t"                                                                                   \
      "strb %[a12], [%[t0], #1]\n\t"                                                                               \
      "add %[w0], %[w0], #2\n\t"                                                                                   \
      "str %[w0], %[out0]\n\t"                                                                                     \
      "ldr %[w0], %[left]\n\t"                                                                                     \
      "subs %[w0], %[w0], #1\n\t"                                                                                  \
      "str %[w0], %[left]\n\t"                                                                                     \
      "bne 1b"                                                                                                     \
      : [a00] "=&r"(a00), [a10] "=&r"(a10), [a01] "=&r"(a01), [a11] "=&r"(a11), [a02] "=&r"(a02),                 \
        [a12] "=&r"(a12), [wp] "+r"(wp), [bp] "=&r"(bp), [w0] "=&r"(w0), [w1] "=&r"(w1), [t0] "=&r"(t0),          \
        [t1] "=&r"(t1), [x0] "=&r"(x0), [x1] "=&r"(x1), [pair] "+m"(k->pair), [out0] "+m"(k->out0),                \
        [left] "+m"(k->left)                                                                                       \
      : [col] "m"(k->col), [end] "m"(k->end), [out_ch] "m"(k->out_ch)                                             \
      : "cc", "memory")
static inline __attribute__((always_inline)) const void* cmx_row_triples_s8(const void* wp, cmx_row_triples* k,
                                                                           const int wide, const int floored) {
  int32_t a00, a10, a01, a11, a02, a12;
  uint32_t w0, w1, t0, t1, x0, x1;
  const void* bp;
  if (wide) {
    if (floored) {
      CMX_TRIPLES(CMX_TRIPLE_GROUP_WIDE, CMX_ASM_FINISH_FLOORED);
    } else {
      CMX_TRIPLES(CMX_TRIPLE_GROUP_WIDE, CMX_ASM_FINISH);
    }
  } else {
    if (floored) {
      CMX_TRIPLES(CMX_TRIPLE_GROUP, CMX_ASM_FINISH_FLOORED);
    } else {
      CMX_TRIPLES(CMX_TRIPLE_GROUP, CMX_ASM_FINISH);
    }
  }
  return wp;
}
#undef CMX_TRIPLES
#undef CMX_TRIPLE_GROUP_WIDE
#undef CMX_TRIPLE_GROUP
#undef CMX_S8_WEIGHTS_FIRST
#undef CMX_S8_NEXT

#undef CMX_ROW_S8_EVEN
#undef CMX_ROW_S8_ODD
#undef CMX_ROW_S8_BLOCKS
#undef CMX_ROW_VARIANTS
#undef CMX_ROW_BLOCK_ENTRY
#undef CMX_ROW_BLOCK_REQ
#undef CMX_ROW_REQ
#undef CMX_ROW_BLOCK_EXIT
#undef CMX_ROW_BLOCK_OPERANDS
#endif
#undef CMX_WIDE_GROUP
#endif

#if defined(ARM_MATH_DSP) && defined(__GNUC__) && defined(__thumb2__)
/* cmx_conv_row_s8's wide layer of 8 values a position (positions_k8): one position's channel loop, the
 * position's 8 widened values in x0..x3, every channel pair's int16 weights from wp, its constants from the
 * pair record at kp (cmx_conv_row_s8_constants), each output requantized, offset and saturated, to o;
 * count counts the channel pairs up to the carry out (cmx_row_count). */
static inline __attribute__((always_inline)) void cmx_row_k8_position(uint32_t x0, uint32_t x1, uint32_t x2,
                                                                      uint32_t x3, const void* wp,
                                                                      const int32_t* kp, int8_t* o,
                                                                      uint32_t count) {
  int32_t a;
  uint32_t w0, w1;
#define CMX_K8_CHANNEL(g0, g1, b, m, s)          \
"ldr %[a], [%[kp], #" #b "]\n\t"                \
"ldrd %[w0], %[w1], [%[wp], #" #g0 "]\n\t"       \
"smlad %[a], %[w0], %[x0], %[a]\n\t"             \
"smlad %[a], %[w1], %[x1], %[a]\n\t"             \
"ldrd %[w0], %[w1], [%[wp], #" #g1 "]\n\t"       \
"smlad %[a], %[w0], %[x2], %[a]\n\t"             \
"smlad %[a], %[w1], %[x3], %[a]\n\t"             \
"ldr %[w0], [%[kp], #" #m "]\n\t"                \
"ldr %[w1], [%[kp], #" #s "]\n\t"                \
"lsls %[a], %[a], #1\n\t"                        \
CMX_ASM_FINISH(a, w0, w1, "%[w1], asr #8")         \
"strb %[a], [%[o]], #1\n\t"
  __asm volatile("1:\n\t" CMX_K8_CHANNEL(0, 16, 0, 8, 16) CMX_K8_CHANNEL(8, 24, 4, 12, 20)
        "add %[wp], %[wp], #32\n\t"
        "add %[kp], %[kp], #24\n\t"
        "adds %[co], %[co], #0x10000\n\t"
        "bcc 1b"
        : [a] "=&r"(a), [w0] "=&r"(w0), [w1] "=&r"(w1), [wp] "+r"(wp), [kp] "+r"(kp), [o] "+r"(o),
          [co] "+r"(count)
        : [x0] "r"(x0), [x1] "r"(x1), [x2] "r"(x2), [x3] "r"(x3)
        : "cc", "memory");
#undef CMX_K8_CHANNEL
}

/* positions_k8 where a position is 8 values (16 bytes): channel by channel, each channel's outputs at every
 * position pair of a chunk (an even count), its weights (w0..w3), bias, multiplier and right shift held in
 * registers while the positions' values are read two words at a time into the two registers left (the 14th
 * is the outputs' stride): ~14 instructions an output against cmx_row_k8_position's 18 plus its loads of
 * the channel's constants (~18 cycles against ~26; a position an iteration took ~20). The channel loop too,
 * its pointers in the caller's frame: ~25 cycles a channel where a call per channel took ~86. */
typedef struct {
  const void* wp;       /* channel c's weights (a pair's: c's group 0, c + 1's, c's group 1, c + 1's) */
  const int32_t* kp;    /* channel c's bias in its pair record (cmx_conv_row_s8_constants) */
  int8_t* out;          /* channel c's output at the chunk's first position */
  const void* x;        /* the chunk's first position's values */
  uint32_t count;       /* cmx_row_count(the chunk's position pairs) */
  int32_t channels;     /* channels left (an even count) */
} cmx_row_k8_frame;

static inline __attribute__((always_inline)) void cmx_row_k8_channels(cmx_row_k8_frame* k, int32_t out_ch,
                                                                      const int floored) {
  int32_t acc, bias, mult, right;
  uint32_t x0, x1, w0, w1, w2, w3, co;
  const void* xp;
  int8_t* o;
#define CMX_K8_SETUP(g0, g1)                      \
  "ldr %[acc], %[wp]\n\t"                        \
  "ldrd %[w0], %[w1], [%[acc], #" #g0 "]\n\t"    \
  "ldrd %[w2], %[w3], [%[acc], #" #g1 "]\n\t"    \
  "ldr %[acc], %[kp]\n\t" /* the bias, the multiplier, the shift word (the offset above the shift) */ \
  "ldr %[bias], [%[acc]]\n\t"                    \
  "ldr %[mult], [%[acc], #8]\n\t"                \
  "ldr %[right], [%[acc], #16]\n\t"              \
  "ldr %[xp], %[x]\n\t"                          \
  "ldr %[o], %[out]\n\t"                         \
  "adds %[acc], %[o], #1\n\t"                    \
  "str %[acc], %[out]\n\t"                       \
  "ldr %[co], %[cof]\n\t"
/* one position's output, to `at`, requantized by F (CMX_ASM_FINISH or CMX_ASM_FINISH_FLOORED) */
#define CMX_K8_OUTPUT(F, at)                      \
  "ldrd %[x0], %[x1], [%[xp]], #16\n\t"          \
  "smlad %[acc], %[x0], %[w0], %[bias]\n\t"      \
  "smlad %[acc], %[x1], %[w1], %[acc]\n\t"       \
  "ldrd %[x0], %[x1], [%[xp], #-8]\n\t"          \
  "smlad %[acc], %[x0], %[w2], %[acc]\n\t"       \
  "smlad %[acc], %[x1], %[w3], %[acc]\n\t"       \
  "lsls %[acc], %[acc], #1\n\t"                  \
  F(acc, mult, right, "%[right], asr #8")        \
  "strb %[acc], " at "\n\t"
/* two positions an iteration: the second's output at o + oc, o moved and the count added once a pair */
#define CMX_K8_POSITIONS(label, F)                \
  label ":\n\t"                                  \
  CMX_K8_OUTPUT(F, "[%[o]]")                     \
  CMX_K8_OUTPUT(F, "[%[o], %[oc]]")              \
  "add %[o], %[o], %[oc], lsl #1\n\t"            \
  "adds %[co], %[co], #0x10000\n\t"              \
  "bcc " label "b\n\t"
/* the channel loop, its positions requantized by F (floored: CMX_ASM_FINISH_FLOORED): a
 * channel an iteration, the weights then 8 bytes on to the pair's second channel or 24 to the next pair's
 * first (one copy of the loop: two, one a channel of the pair, took the chunk's code past the NUCLEO-L4R5ZI's
 * 1 KB instruction cache) */
#define CMX_K8_CHANNELS(F)                                                                                    \
  __asm volatile("1:\n\t" CMX_K8_SETUP(0, 16) CMX_K8_POSITIONS("2", F)                                       \
                 "ldr %[acc], %[left]\n\t"                                                                   \
                 "ldr %[w0], %[wp]\n\t"                                                                      \
                 "ldr %[w1], %[kp]\n\t"                                                                      \
                 "tst %[acc], #1\n\t" /* channels left even: this one the pair's first */                    \
                 "itete eq\n\t"                                                                              \
                 "addeq %[w0], %[w0], #8\n\t"                                                                \
                 "addne %[w0], %[w0], #24\n\t"                                                               \
                 "addeq %[w1], %[w1], #4\n\t"                                                                \
                 "addne %[w1], %[w1], #20\n\t"                                                               \
                 "str %[w0], %[wp]\n\t"                                                                      \
                 "str %[w1], %[kp]\n\t"                                                                      \
                 "subs %[acc], %[acc], #1\n\t"                                                               \
                 "str %[acc], %[left]\n\t"                                                                   \
                 "bne 1b"                                                                                     \
                 : [acc] "=&r"(acc), [x0] "=&r"(x0), [x1] "=&r"(x1), [xp] "=&r"(xp), [o] "=&r"(o), [co] "=&r"(co), \
                   [w0] "=&r"(w0), [w1] "=&r"(w1), [w2] "=&r"(w2), [w3] "=&r"(w3), [bias] "=&r"(bias),          \
                   [mult] "=&r"(mult), [right] "=&r"(right), [wp] "+m"(k->wp), [kp] "+m"(k->kp),                \
                   [out] "+m"(k->out), [left] "+m"(k->channels)                                                 \
                 : [oc] "r"(out_ch), [x] "m"(k->x), [cof] "m"(k->count)                                       \
                 : "cc", "memory")
  if (floored) { /* cmx_floored */
    CMX_K8_CHANNELS(CMX_ASM_FINISH_FLOORED);
  } else {
    CMX_K8_CHANNELS(CMX_ASM_FINISH);
  }
#undef CMX_K8_CHANNELS
#undef CMX_K8_SETUP
#undef CMX_K8_POSITIONS
#undef CMX_K8_OUTPUT
}
#endif

#if defined(ARM_MATH_DSP) && !defined(ARM_MATH_MVEI) && defined(__GNUC__) && defined(__thumb2__)
/* cmx_fully_connected_s8: the four-row block's inner loop over `quads` runs of 16 inputs (four groups), in assembly: single
 * loads in runs, which pipeline on the M4 (TRM 3.3.2: a load after a load one cycle, an LDRD three),
 * the pointers moved by the first group's loads (post-index) and no other instruction spent on the
 * loop but its count. Tuned on cmx-gen's cycle estimate: about 102 cycles per 64 MACs against the C
 * loop's 120 (two LDRDs a group); AD's autoencoder 530,237 -> 466,843 cycles, +2.4 % instructions.
 * It holds 13 registers. The same products as the C loop, summed per row in the same order. */
#define CMX_FC_GROUP4(xa, wa, wo)                  \
  "ldr %[v], " xa "\n\t"                          \
  "ldr %[w0], " wa "\n\t"                         \
  "ldr %[w1], [%[wp], #" #wo "+4]\n\t"            \
  "sxtab16 %[x02], %[off], %[v]\n\t"              \
  "sxtab16 %[x13], %[off], %[v], ror #8\n\t"      \
  "sxtb16 %[v], %[w0], ror #8\n\t"                \
  "sxtb16 %[w0], %[w0]\n\t"                       \
  "smlad %[a0], %[w0], %[x02], %[a0]\n\t"         \
  "smlad %[a0], %[v], %[x13], %[a0]\n\t"          \
  "sxtb16 %[v], %[w1], ror #8\n\t"                \
  "sxtb16 %[w1], %[w1]\n\t"                       \
  "smlad %[a1], %[w1], %[x02], %[a1]\n\t"         \
  "smlad %[a1], %[v], %[x13], %[a1]\n\t"          \
  "ldr %[w0], [%[wp], #" #wo "+8]\n\t"            \
  "ldr %[w1], [%[wp], #" #wo "+12]\n\t"           \
  "sxtb16 %[v], %[w0], ror #8\n\t"                \
  "sxtb16 %[w0], %[w0]\n\t"                       \
  "smlad %[a2], %[w0], %[x02], %[a2]\n\t"         \
  "smlad %[a2], %[v], %[x13], %[a2]\n\t"          \
  "sxtb16 %[v], %[w1], ror #8\n\t"                \
  "sxtb16 %[w1], %[w1]\n\t"                       \
  "smlad %[a3], %[w1], %[x02], %[a3]\n\t"         \
  "smlad %[a3], %[v], %[x13], %[a3]\n\t"

static inline __attribute__((always_inline)) cmx_acc4 cmx_fc_quads4(cmx_acc4 a, const int8_t** x, const void** wp,
                                                                    int32_t quads, uint32_t offset2) {
  uint32_t v, x02, x13, w0, w1;
  const int8_t* xp = *x;
  const void* w = *wp;
  /* the first group's loads move the pointers (post-index), the others read behind them */
  __asm volatile("1:\n\t" CMX_FC_GROUP4("[%[x]], #16", "[%[wp]], #64", -64)
                 CMX_FC_GROUP4("[%[x], #-12]", "[%[wp], #-48]", -48)
                 CMX_FC_GROUP4("[%[x], #-8]", "[%[wp], #-32]", -32)
                 CMX_FC_GROUP4("[%[x], #-4]", "[%[wp], #-16]", -16)
                 "subs %[n], %[n], #1\n\t"
                 "bne 1b"
                 : [a0] "+r"(a.a0), [a1] "+r"(a.a1), [a2] "+r"(a.a2), [a3] "+r"(a.a3), [x] "+r"(xp), [wp] "+r"(w),
                   [n] "+r"(quads), [v] "=&r"(v), [x02] "=&r"(x02), [x13] "=&r"(x13), [w0] "=&r"(w0), [w1] "=&r"(w1)
                 : [off] "r"(offset2)
                 : "cc", "memory");
  *x = xp;
  *wp = w;
  return a;
}
#undef CMX_FC_GROUP4
#endif

#if defined(ARM_MATH_DSP) && !defined(ARM_MATH_MVEI) && defined(__GNUC__) && defined(__thumb2__)
/* cmx_depthwise_3x3_s8's planar path, one channel's constants for cmx_dw_plane_row4 and cmx_dw_plane_rows
 * (read from the caller's frame: the loop holds every register). start and the weights are doubled (the
 * accumulator is 2 x acc, which SMMULR takes with no shift first: |acc| < 2^30, fast). */
typedef struct {
  int32_t start2;      /* 2 x (bias + input offset x the weights' sum), int32 wraparound */
  int32_t multiplier;  /* > 0 */
  int32_t right_and_offset; /* cmx_right_and_offset: the right shift (>= 1), the output offset above it */
  int32_t step;        /* bytes between two outputs: the channels */
  const int8_t* end;   /* the output after the last block's (cmx_dw_plane_rows: the last row's) */
  /* cmx_dw_plane_rows: rows of 4n or 4n + 2 outputs */
  const int8_t* row_end; /* the output after the first row's four-output blocks: advanced a row each row */
  int32_t row_bytes;     /* the outputs' bytes between two rows: width x step */
  int32_t next_q;        /* bytes from the plane after a row's blocks to the next row's start: 2 x (64 - 4n) */
} cmx_plane_consts;

/* Four horizontally adjacent outputs from the plane at `q` (three rows of CMX_DW_PLANE_ROW int16 values,
 * 128 bytes apart; q word-aligned), to o, o + step, ...; q and o left after them. Row r's words
 * P0 = (c0, c1), P1 = (c2, c3), P2 = (c4, c5) and its doubled weights W01 = (w0, w1), W12 = (w1, w2):
 *   a0 += P0.W01 + c2 w2   (SMLAD, SMLABT)      a1 += c1 w0 + P1.W12 (SMLATB, SMLAD)
 *   a2 += P1.W01 + c4 w2   (SMLAD, SMLABT)      a3 += c3 w0 + P2.W12 (SMLATB, SMLAD)
 * 24 multiply-accumulates and 9 loads for 36 MACs, then each output's cmx_requantize_right (SMMULR,
 * the rounding divide), the offset and SSAT (the range all of int8): the same bytes as cmx_finish's
 * fast, full form. */
#define CMX_PLANE_ROW(at, wa, wb)                                                             \
  CMX_PLANE_ROW_AND(at, wa, wb, "smlatb %[a3], %[u], %[" #wa "], %[a3]\n\t",                   \
                    "smlad %[a3], %[t], %[" #wb "], %[a3]\n\t")
/* ... with the fourth output's two multiply-accumulates (A, B) where they go, or none (CMX_PLANE3_EVEN) */
#define CMX_PLANE_ROW_AND(at, wa, wb, A, B)           \
  "ldr %[t], [%[q], #" #at "]\n\t"                    \
  "ldr %[u], [%[q], #" #at " + 4]\n\t"                \
  "smlad %[a0], %[t], %[" #wa "], %[a0]\n\t"          \
  "smlatb %[a1], %[t], %[" #wa "], %[a1]\n\t"         \
  "ldr %[t], [%[q], #" #at " + 8]\n\t"                \
  "smlabt %[a0], %[u], %[" #wb "], %[a0]\n\t"         \
  "smlad %[a1], %[u], %[" #wb "], %[a1]\n\t"          \
  "smlad %[a2], %[u], %[" #wa "], %[a2]\n\t" A        \
  "smlabt %[a2], %[t], %[" #wb "], %[a2]\n\t" B
#define CMX_PLANE_BLOCK(F)                                                                             \
  "ldr %[a0], %[start]\n\t"                                                                            \
  "mov %[a1], %[a0]\n\t"                                                                               \
  "mov %[a2], %[a0]\n\t"                                                                               \
  "mov %[a3], %[a0]\n\t"                                                                               \
  CMX_PLANE_ROW(0, w0a, w0b)                                                                           \
  CMX_PLANE_ROW(128, w1a, w1b)                                                                         \
  CMX_PLANE_ROW(256, w2a, w2b)                                                                         \
  "adds %[q], %[q], #8\n\t"                                                                            \
  "ldr %[t], %[m]\n\t"                                                                                 \
  "ldr %[u], %[s]\n\t"                                                                                 \
  F(a0, t, u, "%[u], asr #8") F(a1, t, u, "%[u], asr #8") F(a2, t, u, "%[u], asr #8")                   \
  F(a3, t, u, "%[u], asr #8")                                                                           \
  "ldr %[u], %[step]\n\t"                                                                              \
  "strb %[a0], [%[o]]\n\t"                                                                             \
  "strb %[a1], [%[o], %[u]]\n\t"                                                                       \
  "add %[o], %[o], %[u], lsl #1\n\t"                                                                   \
  "strb %[a2], [%[o]]\n\t"                                                                             \
  "strb %[a3], [%[o], %[u]]\n\t"                                                                       \
  "add %[o], %[o], %[u], lsl #1\n\t"
/* All 14 registers are operands. */
#define CMX_PLANE_OPERANDS(...)                                                                                    \
  : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [t] "=&r"(t), [u] "=&r"(u), [q] "+r"(q), \
    [o] "+r"(o) __VA_ARGS__                                                                                    \
  : [w0a] "r"(w[0]), [w0b] "r"(w[1]), [w1a] "r"(w[2]), [w1b] "r"(w[3]), [w2a] "r"(w[4]), [w2b] "r"(w[5]),     \
    [start] "m"(k->start2), [m] "m"(k->multiplier), [s] "m"(k->right_and_offset),                                \
    [step] "m"(k->step), [end] "m"(k->end), [row_bytes] "m"(k->row_bytes), [next_q] "m"(k->next_q)                 \
  : "cc", "memory"

/* Four outputs an iteration along one row until `o` reaches k->end. */
static inline __attribute__((always_inline)) const int16_t* cmx_dw_plane_row4(const int16_t* q, int8_t* o,
                                                                             const uint32_t w[6],
                                                                             cmx_plane_consts* k) {
  int32_t a0, a1, a2, a3;
  uint32_t t, u;
  __asm volatile("1:\n\t" CMX_PLANE_BLOCK(CMX_ASM_FINISH) "ldr %[t], %[end]\n\t"
                 "cmp %[o], %[t]\n\t"
                 "bne 1b" CMX_PLANE_OPERANDS());
  return q;
}

/* Two outputs from the plane at `q` (columns 0 to 3 of three rows): the first half of CMX_PLANE_ROW. */
#define CMX_PLANE_ROW2(at, wa, wb)                    \
  "ldr %[t], [%[q], #" #at "]\n\t"                    \
  "ldr %[u], [%[q], #" #at " + 4]\n\t"                \
  "smlad %[a0], %[t], %[" #wa "], %[a0]\n\t"          \
  "smlatb %[a1], %[t], %[" #wa "], %[a1]\n\t"         \
  "smlabt %[a0], %[u], %[" #wb "], %[a0]\n\t"         \
  "smlad %[a1], %[u], %[" #wb "], %[a1]\n\t"

/* Every row of a channel's band until `o` reaches k->end, rows of 4n outputs (two = 0) or 4n + 2 (two = 1, from
 * 10 on: rows of six run cmx_dw_plane_rows3), floored or not (cmx_floored): a row's four-output blocks until
 * k->row_end, then (two) its last two outputs as half a block, then the next plane row: no call, no weights
 * loaded again, a row (VWW's 12 x 12 and 24 x 24 planar rows took ~60 cycles a row around cmx_dw_plane_row4). */
#define CMX_PLANE_ROWS_LOOP(TWO, F)                                                                         \
  __asm volatile("1:\n\t" CMX_PLANE_BLOCK(F)                                                              \
                 "ldr %[t], %[row_end]\n\t"                                                               \
                 "cmp %[o], %[t]\n\t"                                                                     \
                 "bne 1b\n\t" TWO                                                                         \
                 "ldr %[u], %[row_bytes]\n\t"                                                             \
                 "add %[t], %[t], %[u]\n\t"                                                               \
                 "str %[t], %[row_end]\n\t"                                                               \
                 "ldr %[t], %[next_q]\n\t"                                                                \
                 "ldr %[u], %[end]\n\t"                                                                   \
                 "adds %[q], %[q], %[t]\n\t"                                                              \
                 "cmp %[o], %[u]\n\t"                                                                     \
                 "bne 1b" CMX_PLANE_OPERANDS(, [row_end] "+m"(k->row_end)))
#define CMX_PLANE_TWO(F)                                                                                     \
  "ldr %[a0], %[start]\n\t"                                                                                 \
  "mov %[a1], %[a0]\n\t" CMX_PLANE_ROW2(0, w0a, w0b) CMX_PLANE_ROW2(128, w1a, w1b) CMX_PLANE_ROW2(256, w2a, w2b) \
  "ldr %[t], %[m]\n\t"                                                                                      \
  "ldr %[u], %[s]\n\t" F(a0, t, u, "%[u], asr #8") F(a1, t, u, "%[u], asr #8")                               \
  "ldr %[u], %[step]\n\t"                                                                                   \
  "strb %[a0], [%[o]]\n\t"                                                                                  \
  "strb %[a1], [%[o], %[u]]\n\t"                                                                            \
  "add %[o], %[o], %[u], lsl #1\n\t"                                                                        \
  "ldr %[t], %[row_end]\n\t"
static inline __attribute__((always_inline)) void cmx_dw_plane_rows(const int16_t* q, int8_t* o, const uint32_t w[6],
                                                                   cmx_plane_consts* k, const int two,
                                                                   const int floored) {
  int32_t a0, a1, a2, a3;
  uint32_t t, u;
  if (two) {
    if (floored) { /* cmx_floored */
      CMX_PLANE_ROWS_LOOP(CMX_PLANE_TWO(CMX_ASM_FINISH_FLOORED), CMX_ASM_FINISH_FLOORED);
    } else {
      CMX_PLANE_ROWS_LOOP(CMX_PLANE_TWO(CMX_ASM_FINISH), CMX_ASM_FINISH);
    }
  } else {
    if (floored) {
      CMX_PLANE_ROWS_LOOP("", CMX_ASM_FINISH_FLOORED);
    } else {
      CMX_PLANE_ROWS_LOOP("", CMX_ASM_FINISH);
    }
  }
}
/* Three horizontally adjacent outputs from a plane row at `at` (its words P0 = (c0, c1), P1 = (c2, c3),
 * P2 = (c4, c5) from q, word-aligned; the row's doubled weights W01 = (w0, w1), W12 = (w1, w2)):
 *   a0 += P0.W01 + c2 w2 (SMLAD, SMLABT)   a1 += c1 w0 + P1.W12 (SMLATB, SMLAD)   a2 += P1.W01 + c4 w2
 * six multiply-accumulates and three loads a row: CMX_PLANE_ROW without its fourth output. */
#define CMX_PLANE3_EVEN(at, wa, wb) CMX_PLANE_ROW_AND(at, wa, wb, "", "")
/* The next three (columns 3 to 5, from the words P1, P2, P3 = (c6, c7), still word-aligned):
 *   a0 += c3 w0 + P2.W12 (SMLATB, SMLAD)   a1 += P2.W01 + c6 w2 (SMLAD, SMLABT)   a2 += c5 w0 + P3.W12 */
#define CMX_PLANE3_ODD(at, wa, wb)                    \
  "ldr %[t], [%[q], #" #at " + 4]\n\t"                \
  "ldr %[u], [%[q], #" #at " + 8]\n\t"                \
  "smlatb %[a0], %[t], %[" #wa "], %[a0]\n\t"         \
  "ldr %[t], [%[q], #" #at " + 12]\n\t"               \
  "smlad %[a0], %[u], %[" #wb "], %[a0]\n\t"          \
  "smlad %[a1], %[u], %[" #wa "], %[a1]\n\t"          \
  "smlatb %[a2], %[u], %[" #wa "], %[a2]\n\t"         \
  "smlabt %[a1], %[t], %[" #wb "], %[a1]\n\t"         \
  "smlad %[a2], %[t], %[" #wb "], %[a2]\n\t"
/* A block of three outputs (ROW: CMX_PLANE3_EVEN or _ODD), requantized by F, to o, o + step, o + 2 step; o
 * left after them. */
#define CMX_PLANE3_BLOCK(ROW, F)                                                                        \
  "ldr %[a0], %[start]\n\t"                                                                            \
  "mov %[a1], %[a0]\n\t"                                                                               \
  "mov %[a2], %[a0]\n\t" ROW(0, w0a, w0b) ROW(128, w1a, w1b) ROW(256, w2a, w2b)                        \
  "ldr %[t], %[m]\n\t"                                                                                 \
  "ldr %[u], %[s]\n\t"                                                                                 \
  F(a0, t, u, "%[u], asr #8") F(a1, t, u, "%[u], asr #8") F(a2, t, u, "%[u], asr #8")                    \
  "strb %[a0], [%[o]]\n\t"                                                                             \
  "strb %[a1], [%[o], %[step]]\n\t"                                                                    \
  "strb %[a2], [%[o], %[step], lsl #1]\n\t"                                                            \
  "add %[o], %[o], %[step], lsl #1\n\t"                                                                \
  "add %[o], %[o], %[step]\n\t"
/* Every row of a channel's band until `o` reaches k->end, rows of three outputs (one block; a MobileNet's
 * 3 x 3 maps, where the walk took ~56 cycles an output) or six (two; its 6 x 6 maps, where a block of
 * four and one of two took ~131 cycles a row), floored or not: the 14th register holds the outputs'
 * step. The plane's rows are 128 bytes apart, the output's rows follow each other. */
#define CMX_PLANE3_ROWS(SECOND, F)                                                                              \
  __asm volatile("1:\n\t" CMX_PLANE3_BLOCK(CMX_PLANE3_EVEN, F) SECOND                                       \
                 "adds %[q], %[q], #128\n\t"                                                                  \
                 "ldr %[t], %[end]\n\t"                                                                       \
                 "cmp %[o], %[t]\n\t"                                                                         \
                 "bne 1b"                                                                                      \
                 : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [t] "=&r"(t), [u] "=&r"(u), [q] "+r"(q),     \
                   [o] "+r"(o)                                                                                 \
                 : [w0a] "r"(w[0]), [w0b] "r"(w[1]), [w1a] "r"(w[2]), [w1b] "r"(w[3]), [w2a] "r"(w[4]),         \
                   [w2b] "r"(w[5]), [step] "r"(k->step), [start] "m"(k->start2), [m] "m"(k->multiplier),           \
                   [s] "m"(k->right_and_offset), [end] "m"(k->end)                                                \
                 : "cc", "memory")
static inline __attribute__((always_inline)) void cmx_dw_plane_rows3(const int16_t* q, int8_t* o, const uint32_t w[6],
                                                                    cmx_plane_consts* k, const int six,
                                                                    const int floored) {
  int32_t a0, a1, a2;
  uint32_t t, u;
  if (six) {
    if (floored) { /* cmx_floored */
      CMX_PLANE3_ROWS(CMX_PLANE3_BLOCK(CMX_PLANE3_ODD, CMX_ASM_FINISH_FLOORED), CMX_ASM_FINISH_FLOORED);
    } else {
      CMX_PLANE3_ROWS(CMX_PLANE3_BLOCK(CMX_PLANE3_ODD, CMX_ASM_FINISH), CMX_ASM_FINISH);
    }
  } else {
    if (floored) {
      CMX_PLANE3_ROWS("", CMX_ASM_FINISH_FLOORED);
    } else {
      CMX_PLANE3_ROWS("", CMX_ASM_FINISH);
    }
  }
}
#undef CMX_PLANE3_ROWS
#undef CMX_PLANE3_BLOCK
#undef CMX_PLANE3_ODD
#undef CMX_PLANE3_EVEN
#undef CMX_PLANE_TWO
#undef CMX_PLANE_ROWS_LOOP
#undef CMX_PLANE_ROW2
#undef CMX_PLANE_OPERANDS
#undef CMX_PLANE_BLOCK
#undef CMX_PLANE_ROW
#undef CMX_PLANE_ROW_AND

/* The planar path's plane fill: `pairs` x 2 int8 values `ch` bytes apart from `in`, as int16 at
 * `out` (word-aligned), two to a word by PKHBT: four pairs an iteration (LDRSBs back to back pipeline,
 * register offsets), then a pair at a time. Returns where the input goes on. */
static inline __attribute__((always_inline)) const int8_t* cmx_plane_fill(const int8_t* in, int32_t ch, int16_t* out,
                                                                         int32_t pairs) {
  uint32_t a, b, c, d;
  const uint32_t ch2 = (uint32_t)ch * 2, ch3 = (uint32_t)ch * 3;
#define CMX_FILL_FOUR                             \
  "ldrsb %[a], [%[in]]\n\t"                     \
  "ldrsb %[b], [%[in], %[ch]]\n\t"              \
  "ldrsb %[c], [%[in], %[ch2]]\n\t"             \
  "ldrsb %[d], [%[in], %[ch3]]\n\t"             \
  "add %[in], %[in], %[ch], lsl #2\n\t"         \
  "pkhbt %[a], %[a], %[b], lsl #16\n\t"         \
  "pkhbt %[c], %[c], %[d], lsl #16\n\t"         \
  "str %[a], [%[out]], #4\n\t"                  \
  "str %[c], [%[out]], #4\n\t"
  __asm volatile("subs %[n], %[n], #4\n\t"
        "blt 2f\n"
        "1:\n\t" CMX_FILL_FOUR CMX_FILL_FOUR
        "subs %[n], %[n], #4\n\t"
        "bge 1b\n"
        "2:\n\t"
        "adds %[n], %[n], #4\n\t"
        "beq 4f\n"
        "3:\n\t"
        "ldrsb %[a], [%[in]]\n\t"
        "ldrsb %[b], [%[in], %[ch]]\n\t"
        "add %[in], %[in], %[ch], lsl #1\n\t"
        "pkhbt %[a], %[a], %[b], lsl #16\n\t"
        "str %[a], [%[out]], #4\n\t"
        "subs %[n], %[n], #1\n\t"
        "bne 3b\n"
        "4:"
        : [a] "=&r"(a), [b] "=&r"(b), [c] "=&r"(c), [d] "=&r"(d), [in] "+r"(in), [out] "+r"(out), [n] "+r"(pairs)
        : [ch] "r"(ch), [ch2] "r"(ch2), [ch3] "r"(ch3)
        : "cc", "memory");
#undef CMX_FILL_FOUR
  return in;
}

/* The planar path's plane fill for a band's rows (cmx_dw_plane_rows' bands): `rows` rows of one channel,
 * each (`ends`: an odd first plane column) a value as an int16 store, then `pairs` x 2 values two to a
 * word, then (`ends`) a value more: stride 1 and padding the same each side make the two alike. The
 * input `ch` bytes apart from `in` and the next row's `in_skip` bytes on from where a row's values end,
 * the plane's rows CMX_DW_PLANE_ROW values apart from `to` (the first row's first value; word-aligned
 * after the first value). Every row in one loop: the per-row calls around cmx_plane_fill took ~85 cycles
 * for a row of 12 values (VWW's 12 x 12 layer). */
typedef struct {
  int32_t ch;      /* bytes between two values */
  int32_t in_skip; /* bytes from after a row's last value to the next row's first */
  int32_t pairs;   /* pairs a row, one or more */
  int32_t to_skip; /* bytes from after a row's last value in the plane to the next row's first */
} cmx_fill_rows;

#define CMX_FILL_ROWS(LEAD, TAIL)                                                                              \
  __asm volatile("1:\n\t" LEAD                                                                                \
                 "ldr %[n], %[pairs]\n\t"                                                                     \
                 "2:\n\t"                                                                                     \
                 "ldrsb %[a], [%[in]]\n\t"                                                                    \
                 "ldrsb %[b], [%[in], %[ch]]\n\t"                                                             \
                 "add %[in], %[in], %[ch], lsl #1\n\t"                                                        \
                 "pkhbt %[a], %[a], %[b], lsl #16\n\t"                                                        \
                 "str %[a], [%[to]], #4\n\t"                                                                  \
                 "subs %[n], %[n], #1\n\t"                                                                    \
                 "bne 2b\n\t" TAIL                                                                            \
                 "ldr %[a], %[in_skip]\n\t"                                                                   \
                 "ldr %[b], %[to_skip]\n\t"                                                                   \
                 "add %[in], %[in], %[a]\n\t"                                                                 \
                 "add %[to], %[to], %[b]\n\t"                                                                 \
                 "subs %[rows], %[rows], #1\n\t"                                                              \
                 "bne 1b"                                                                                     \
                 : [a] "=&r"(a), [b] "=&r"(b), [n] "=&r"(n), [in] "+r"(in), [to] "+r"(to), [rows] "+r"(rows)   \
                 : [ch] "r"(k->ch), [pairs] "m"(k->pairs), [in_skip] "m"(k->in_skip), [to_skip] "m"(k->to_skip) \
                 : "cc", "memory")
#define CMX_FILL_ONE                              \
  "ldrsb %[a], [%[in]]\n\t"                      \
  "add %[in], %[in], %[ch]\n\t"                  \
  "strh %[a], [%[to]], #2\n\t"
static inline __attribute__((always_inline)) void cmx_plane_fill_rows(const int8_t* in, int16_t* to, int32_t rows,
                                                                     const cmx_fill_rows* k, const int ends) {
  uint32_t a, b, n;
  if (ends) {
    CMX_FILL_ROWS(CMX_FILL_ONE, CMX_FILL_ONE);
  } else {
    CMX_FILL_ROWS("", "");
  }
}
#undef CMX_FILL_ONE
#undef CMX_FILL_ROWS
#endif
