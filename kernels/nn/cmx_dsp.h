/* The DSP kernels' support: the loads they share and every block of inline assembly of cmx-gen's DSP
 * kernels (kernels/nn/), as arm_nnsupportfunctions.h holds CMSIS-NN's; the kernels' files are C.
 * Internal to kernels/nn/. */
#pragma once

#include <stdint.h>
#include <string.h>

#include "arm_nn_math_types.h"
#include "arm_nnsupportfunctions.h"

/* Four channels' int32 accumulators. */
typedef struct {
  int32_t a0, a1, a2, a3;
} cmx_acc4;

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
/* cmx_depthwise_3x3_s8's walk, an inside pixel, four channels: the nine taps with the weights widened once per call
 * (`w`: a group's nine taps, (w0, w2), (w1, w3) each) and the input offset times the weights' sum
 * already in the accumulators, 8 instructions a tap where the C loop widens the weights at every
 * pixel and spilled (12 a tap). `x` is the window's first input, rows `row` bytes apart, taps
 * `ch` bytes apart. */
static inline __attribute__((always_inline)) cmx_acc4 cmx_dw_walk_taps(cmx_acc4 a, const int8_t* x, const uint32_t* w,
                                                                       int32_t ch, int32_t row) {
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
