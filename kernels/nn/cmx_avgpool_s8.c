/* cmx_avgpool_s8: arm_avgpool_s8's result (cmx_nn.h), for the DSP cores in a fraction of its cycles.
 * CMSIS-NN's DSP path copies each window position's channels into an int32 buffer one value at a time
 * (~9 cycles a value on the M4: DS-CNN's global pool 73 K cycles); here four channels a step, their
 * values added in pairs to two int16-lane accumulators by SXTAB16 (the window's 256 values at most
 * before they move into int32: 256 x 128 fits a lane), then each channel's sum rounded and divided as
 * CMSIS-NN's scale_q31_to_q7_and_clamp does. Channels a multiple of four on a word; else, and on
 * Helium (whose CMSIS-NN path is vector code already), arm_avgpool_s8 itself.
 *
 * An output pixel's four channels are written after those four channels of its whole window are read
 * (arm_avgpool_s8 writes a pixel after reading its window): an output may lie over its input where
 * lower/delegate/overlap.py places it, whose lead takes a pixel's writes below its own reads. */
#include "arm_nnfunctions.h"
#include "arm_nnsupportfunctions.h"
#include "cmx_nn.h"

#define CMX_POOL_LANE 256 /* values an int16 lane takes before it moves into int32 */

#if defined(ARM_MATH_DSP) && !defined(ARM_MATH_MVEI)
/* sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count, clamped (CMSIS-NN's rounding). */
static inline int8_t average(int32_t sum, int32_t count, int32_t act_min, int32_t act_max) {
  const int32_t half = count / 2;
  int32_t v = (sum > 0 ? sum + half : sum - half) / count;
  v = v < act_min ? act_min : v;
  return (int8_t)(v > act_max ? act_max : v);
}

/* Four channels' sums over `n` positions `ch` bytes apart from p into the lanes (at most CMX_POOL_LANE
 * values a lane since they were last moved). */
static inline const int8_t* add_run(const int8_t* p, int32_t n, int32_t ch, uint32_t* a02, uint32_t* a13) {
  uint32_t even = *a02, odd = *a13;
  for (; n > 0; --n, p += ch) {
    const uint32_t v = (uint32_t)arm_nn_read_s8x4(p);
    even = __sxtab16(even, v);
    odd = SXTAB16_RORn(odd, v, 8);
  }
  *a02 = even, *a13 = odd;
  return p;
}

/* The lanes' values (channels 0 and 2 in a02, 1 and 3 in a13) added into the four channels' int32 sums. */
static inline void move_lanes(int32_t s[4], uint32_t a02, uint32_t a13) {
  s[0] += (int16_t)a02, s[2] += (int16_t)(a02 >> 16), s[1] += (int16_t)a13, s[3] += (int16_t)(a13 >> 16);
}

/* One output pixel: every group of four channels over the window rows [y0, y1) x columns [x0, x1), a
 * window as wide as the input one run of positions. */
static void pixel(const int8_t* src, int32_t in_w, int32_t ch, int32_t y0, int32_t y1, int32_t x0, int32_t x1,
                  int32_t act_min, int32_t act_max, int8_t* out) {
  const int32_t count = (y1 - y0) * (x1 - x0);
  const int whole_rows = x0 == 0 && x1 == in_w;
  const int32_t runs = whole_rows ? 1 : y1 - y0, run = whole_rows ? count : x1 - x0;
  for (int32_t g = 0; g < ch; g += 4) {
    int32_t s[4] = {0, 0, 0, 0};
    uint32_t a02 = 0, a13 = 0; /* channels 0 and 2, 1 and 3: an int16 lane each */
    int32_t lane = 0;          /* values in each lane */
    for (int32_t r = 0; r < runs; ++r) {
      const int8_t* p = src + ((y0 + r) * in_w + x0) * ch + g;
      for (int32_t left = run; left > 0;) {
        if (lane == CMX_POOL_LANE) { /* into int32 before a lane could overflow */
          move_lanes(s, a02, a13);
          a02 = a13 = 0;
          lane = 0;
        }
        const int32_t m = left < CMX_POOL_LANE - lane ? left : CMX_POOL_LANE - lane;
        p = add_run(p, m, ch, &a02, &a13);
        lane += m, left -= m;
      }
    }
    move_lanes(s, a02, a13);
    out[g] = average(s[0], count, act_min, act_max);
    out[g + 1] = average(s[1], count, act_min, act_max);
    out[g + 2] = average(s[2], count, act_min, act_max);
    out[g + 3] = average(s[3], count, act_min, act_max);
  }
}
#endif

arm_cmsis_nn_status cmx_avgpool_s8(const cmsis_nn_context* ctx, const cmsis_nn_pool_params* pool_params,
                                   const cmsis_nn_dims* input_dims, const int8_t* src, const cmsis_nn_dims* filter_dims,
                                   const cmsis_nn_dims* output_dims, int8_t* dst) {
#if defined(ARM_MATH_DSP) && !defined(ARM_MATH_MVEI)
  const int32_t ch = input_dims->c, in_h = input_dims->h, in_w = input_dims->w;
  /* the window's values at most: no int32 sum can saturate (CMSIS-NN's QADD) below 2^23 of them */
  const int fast = ch % 4 == 0 && ((uintptr_t)src & 3) == 0 && filter_dims->h * filter_dims->w < (1 << 23);
  if (fast && input_dims->n >= 1) {
    for (int32_t n = 0; n < input_dims->n; ++n, src += in_h * in_w * ch) {
      for (int32_t oy = 0; oy < output_dims->h; ++oy) {
        const int32_t iy = oy * pool_params->stride.h - pool_params->padding.h;
        const int32_t y0 = iy < 0 ? 0 : iy, y1 = iy + filter_dims->h < in_h ? iy + filter_dims->h : in_h;
        for (int32_t ox = 0; ox < output_dims->w; ++ox, dst += ch) {
          const int32_t ix = ox * pool_params->stride.w - pool_params->padding.w;
          const int32_t x0 = ix < 0 ? 0 : ix, x1 = ix + filter_dims->w < in_w ? ix + filter_dims->w : in_w;
          if (y1 <= y0 || x1 <= x0) return ARM_CMSIS_NN_ARG_ERROR; /* an empty window, as CMSIS-NN */
          pixel(src, in_w, ch, y0, y1, x0, x1, pool_params->activation.min, pool_params->activation.max, dst);
        }
      }
    }
    return ARM_CMSIS_NN_SUCCESS;
  }
#endif
  return arm_avgpool_s8(ctx, pool_params, input_dims, src, filter_dims, output_dims, dst);
}
