/* The Helium kernels' support: every block of inline assembly of cmx-gen's Helium kernels
 * (kernels/nn/), as arm_nnsupportfunctions.h holds CMSIS-NN's; the kernels' files are C. Internal to
 * kernels/nn/. */
#pragma once

#include <stdint.h>

#include "arm_nn_math_types.h"

#if defined(ARM_MATH_MVEI)
#include <arm_mve.h>

/* cmx_depthwise_3x3_s8's walk on Helium: eight channels a tap in int16 lanes. One widening load of the input (offset added) and one
 * of the weights, then VMULLB/VMULLT: the even channels' products into one int32x4 accumulator, the
 * odd channels' into another (7 instructions for 8 MACs; CMSIS-NN's MVE kernel first copies every
 * 3 x 3 x C field). The requantization is CMSIS-NN's own (arm_requantize_mve_32x4) on each half,
 * and VMOVNB/VMOVNT put the halves back in channel order for one narrowing store. */
typedef struct {
  int32x4_t even, odd;
} cmx_acc8;

static inline __attribute__((always_inline)) cmx_acc8 cmx_dw_tap8(cmx_acc8 a, const int8_t* x, const int8_t* w, int16_t offset) {
  const int16x8_t xv = vaddq_n_s16(vldrbq_s16(x), offset), wv = vldrbq_s16(w);
  a.even = vaddq_s32(a.even, vmullbq_int_s16(xv, wv));
  a.odd = vaddq_s32(a.odd, vmulltq_int_s16(xv, wv));
  return a;
}

/* The nine taps of a pixel inside the input, each tap's two loads issued before the multiplies of the
 * tap before it: on the M55 a tap alone is a chain (load, offset, two multiplies in one pipe, two
 * adds in another) that leaves the pipes idle between its steps; interleaved, one tap's loads run in
 * the load/store pipe while the other's multiplies run in the multiply pipe (docs/cycles.md). The
 * same sums in the same order as cmx_dw_tap8's. */
static inline __attribute__((always_inline)) cmx_acc8 cmx_dw_taps9(cmx_acc8 a, const int8_t* x, const int8_t* w, int32_t ch,
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

/* cmx_conv_helium_s8: four output channels of one position: their accumulators start at their kernel sums (sums[0..3]);
 * `runs` runs of `cols` inputs, `stride` bytes apart (one, or a kernel row each where the field is
 * read in place), 16 a step, the last step tail-predicated by the loop (WLSTP/LETP, as CMSIS-NN's
 * arm_nn_mat_mult_nt_t_s8): predicated lanes load zeros and add nothing. w: the four rows' laid-out
 * weights (16 columns of each row in turn, each row padded to 16). Inline assembly for the loop:
 * with intrinsics GCC 12 re-derives the weight pointer every step and spills a counter around it
 * (11 instructions a step and 2 more a block, against these 9). */
#define CMX_MAC_LOOP                          \
  "   wlstp.8         lr, %[cnt], 1f      \n" \
  "2:                                     \n" \
  "   vldrb.8         q0, [%[x]], #16     \n" \
  "   vldrb.8         q1, [%[w]], #16     \n" \
  "   vmladava.s8     %[a0], q0, q1       \n" \
  "   vldrb.8         q2, [%[w]], #16     \n" \
  "   vmladava.s8     %[a1], q0, q2       \n" \
  "   vldrb.8         q3, [%[w]], #16     \n" \
  "   vmladava.s8     %[a2], q0, q3       \n" \
  "   vldrb.8         q4, [%[w]], #16     \n" \
  "   vmladava.s8     %[a3], q0, q4       \n" \
  "   letp            lr, 2b              \n" \
  "1:                                     \n"

typedef struct {
  int32x4_t acc, mult, shift; /* four channels' sums, and their multipliers and shifts */
} cmx_sums4;

static inline __attribute__((always_inline)) cmx_sums4 cmx_helium_block4(const int8_t* x0, const int8_t** wp,
                                                                          const int32_t* sums, int32_t runs,
                                                                          int32_t cols, int32_t stride) {
  const int8_t* w = *wp;
  const int8_t* x = x0;
  int32_t a0, a1, a2, a3;
  /* the sums loaded in the assembly too: GCC, loading them, moves them into the even registers */
  __asm volatile("   ldrd            %[a0], %[a1], [%[k]]      \n"
                 "   ldrd            %[a2], %[a3], [%[k], #8]  \n" CMX_MAC_LOOP
                 : [x] "+r"(x), [w] "+r"(w), [a0] "=&Te"(a0), [a1] "=&Te"(a1), [a2] "=&Te"(a2), [a3] "=&Te"(a3)
                 : [cnt] "r"(cols), [k] "r"(sums)
                 : "q0", "q1", "q2", "q3", "q4", "memory", "r14");
  for (int32_t run = 1; run < runs; ++run) { /* the field's further kernel rows, read in place */
    x0 += stride;
    x = x0;
    __asm volatile(CMX_MAC_LOOP
                   : [x] "+r"(x), [w] "+r"(w), [a0] "+Te"(a0), [a1] "+Te"(a1), [a2] "+Te"(a2), [a3] "+Te"(a3)
                   : [cnt] "r"(cols)
                   : "q0", "q1", "q2", "q3", "q4", "memory", "r14");
  }
  *wp = w; /* past the four rows: the next block's */
  /* the four sums into one vector by two VMOVs of two lanes each (GCC's lane inserts take four, and
   * each holds a Helium pipe for two cycles on the M55), the multipliers' and shifts' loads between
   * them (load/store pipe beside the integer pipe; GCC put them after) */
  cmx_sums4 out;
  __asm("   vldrw.u32       %q[m], [%[k], #16]                    \n"
        "   vmov            %q[acc][2], %q[acc][0], %[a0], %[a2]  \n"
        "   vldrw.u32       %q[s], [%[k], #32]                    \n"
        "   vmov            %q[acc][3], %q[acc][1], %[a1], %[a3]  \n"
        : [acc] "=&w"(out.acc), [m] "=&w"(out.mult), [s] "=&w"(out.shift)
        : [a0] "r"(a0), [a1] "r"(a1), [a2] "r"(a2), [a3] "r"(a3), [k] "r"(sums),
          "m"(*(const int32_t(*)[12])sums));
  return out;
}
#undef CMX_MAC_LOOP
#endif
