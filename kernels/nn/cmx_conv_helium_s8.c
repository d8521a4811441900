/* cmx_conv_helium_s8: a convolution of one group (any kernel, stride, padding and dilation), NHWC
 * int8, per-channel quantization, on Helium (M55). Replaces arm_convolve_wrapper_s8 there (the DSP
 * cores run cmx_conv_row_s8).
 *
 * CMSIS-NN's MVE path (arm_nn_mat_mult_nt_t_s8, after an im2col of four positions for any kernel
 * but 1x1) takes four positions against one output channel: four row pointers and a weight pointer,
 * and it sums the channel's weights again (VADDVA) in every group of 16 columns for every four
 * positions, then requantizes and scatters four bytes a channel apart. Here one position against
 * four output channels: the plan lays the four channels' 16 columns side by side
 * (cmx_fully_connected_s8_weights' layout, each row padded with zeros to 16), so one pointer with
 * post-increment feeds the four VMLADAVAs; the weight sums and the input offset are in the plan's
 * kernel sums (bias + input offset x the channel's weight sum, CMSIS-NN's arm_vector_sum_s8), where
 * the accumulators start; the four outputs are requantized as one vector with their channels'
 * multipliers and shifts (CMSIS-NN's arm_requantize_mve_32x4) and stored as four contiguous bytes.
 * A 1x1 convolution of stride 1 without padding reads each position's input in place, and so does
 * any other for a field inside the input where a kernel row's kernel_w x C bytes are whole groups of
 * 16 (one loop a kernel row; ResNet's 3x3 layers); any other field is copied into the scratch first
 * (kernel rows of kernel_w x C contiguous bytes, by predicated 16-byte moves), a tap outside the
 * input as the input's zero point (-input_offset), whose products with the offset added are 0, as
 * CMSIS-NN skips or zero-fills them. The same int32 sums and the same requantization: the same
 * bytes.
 *
 * The output may share the input's bytes: a position's outputs are written after the channels
 * before them, while its input (a 1x1 position's, or a field inside the input, read in place) is
 * still read for the channels after, so the output must end below the position's first input byte
 * (cmx_gen/lower/delegate/overlap.py: one position a block, direct). */
#include "arm_nnfunctions.h"
#include "arm_nnsupportfunctions.h"
#include "cmx_mve.h"
#include "cmx_nn.h"
#include "cmx_requantize.h"

#if defined(ARM_MATH_MVEI)
/* A 1x1 convolution of stride 1 without padding: each position's input is its field, read in place. */
static int in_place(const cmsis_nn_conv_params* p, const cmsis_nn_dims* f_d) {
  return cmx_conv_helium_s8_in_place(f_d->h, f_d->w, p->stride.h, p->stride.w, p->padding.h, p->padding.w);
}

/* The layer's output constants, in registers for the whole call. */
typedef struct {
  int32x4_t offset, lo, hi;
} out_range;

static inline __attribute__((always_inline)) out_range out_range_of(const cmsis_nn_conv_params* p) {
  return (out_range){vdupq_n_s32(p->output_offset), vdupq_n_s32(p->activation.min), vdupq_n_s32(p->activation.max)};
}


/* n bytes from src to dst (n > 0), 16 at a time, the last move predicated. */
static inline __attribute__((always_inline)) void copy_run(int8_t* dst, const int8_t* src, int32_t n) {
  for (; n > 16; n -= 16, src += 16, dst += 16) vstrbq_s8(dst, vldrbq_s8(src));
  const mve_pred16_t p = vctp8q((uint32_t)n);
  vstrbq_p_s8(dst, vldrbq_z_s8(src, p), p);
}

static inline __attribute__((always_inline)) void fill_run(int8_t* dst, int8x16_t value, int32_t n) {
  for (; n > 16; n -= 16, dst += 16) vstrbq_s8(dst, value);
  vstrbq_p_s8(dst, value, vctp8q((uint32_t)n));
}

/* The field of output position (oy, ox) as one row of f->h x f->w x C bytes (the weights' order):
 * each kernel row as at most three runs (taps left of the input, inside it, right of it) where the
 * dilation is 1, else tap by tap. */
static void field(const cmsis_nn_conv_params* p, const cmsis_nn_dims* in_d, const cmsis_nn_dims* f_d,
                  const int8_t* input, int32_t oy, int32_t ox, int8x16_t zero_point, int8_t* row) {
  const int32_t c = in_d->c, run = f_d->w * c;
  const int32_t iy0 = oy * p->stride.h - p->padding.h, ix0 = ox * p->stride.w - p->padding.w;
  int32_t left = 0, right = 0; /* dilation 1: taps left and right of the input */
  if (p->dilation.w == 1) {
    left = ix0 < 0 ? (-ix0 < f_d->w ? -ix0 : f_d->w) : 0;
    right = ix0 + f_d->w > in_d->w ? ix0 + f_d->w - (in_d->w > ix0 ? in_d->w : ix0) : 0;
    if (left + right > f_d->w) right = f_d->w - left;
  }
  const int32_t inside = (f_d->w - left - right) * c;
  for (int32_t ky = 0; ky < f_d->h; ++ky, row += run) {
    const int32_t iy = iy0 + ky * p->dilation.h;
    if (iy < 0 || iy >= in_d->h) {
      fill_run(row, zero_point, run);
      continue;
    }
    const int8_t* src = input + iy * in_d->w * c;
    if (p->dilation.w == 1) {
      if (left) fill_run(row, zero_point, left * c);
      if (inside) copy_run(row + left * c, src + (ix0 + left) * c, inside);
      if (right) fill_run(row + run - right * c, zero_point, right * c);
      continue;
    }
    for (int32_t kx = 0; kx < f_d->w; ++kx) {
      const int32_t ix = ix0 + kx * p->dilation.w;
      if (ix < 0 || ix >= in_d->w) {
        fill_run(row + kx * c, zero_point, c);
      } else {
        copy_run(row + kx * c, src + ix * c, c);
      }
    }
  }
}

/* The field of a position whose every tap lies inside the input, the dilation 1: f_h kernel rows of
 * `run` bytes from `src`, `in_row` apart, one copy_run each. field()'s bounds and padding cost ~300
 * instructions a position (a U-Net's 8-channel 3 x 3 layers on the M55: 555 cycles a position). */
static inline __attribute__((always_inline)) void field_inside(const int8_t* src, int32_t in_row, int32_t run,
                                                               int32_t rows, int8_t* row) {
  for (; rows > 0; --rows, src += in_row, row += run) copy_run(row, src, run);
}

/* Every output channel of one position from its field: `runs` runs of `cols` bytes from `x`, `stride`
 * apart; k: the channel constants (cmx_conv_helium_s8_constants); `fast` as cmx_requantize_mve. */
static inline __attribute__((always_inline)) void position(const cmsis_nn_conv_params* p, const int8_t* x,
                                                           const int8_t* weights, const int32_t* k, int32_t runs,
                                                           int32_t cols, int32_t stride, int32_t rows,
                                                           const out_range r, int8_t* out, const int fast) {
  const int8_t* w = weights;
  for (const int32_t* end = k + 12 * (rows >> 2); k != end; k += 12, out += 4) {
    const cmx_sums4 b = cmx_helium_block4(x, &w, k, runs, cols, stride);
    const int32x4_t acc = cmx_requantize_mve(b.acc, b.mult, b.shift, fast);
    vstrbq_s32(out, vminq_s32(vmaxq_s32(vaddq_s32(acc, r.offset), r.lo), r.hi));
  }
  const int32_t full = cols / 16, tail = cols % 16;
  for (int32_t at = rows & 3; at > 0; --at, k += 3) { /* the last rows % 4 channels, each on its own */
    int32_t a = k[0];
    for (int32_t run = 0; run < runs; ++run) {
      const int8_t* xi = x + run * stride;
      for (int32_t g = full; g > 0; --g, xi += 16, w += 16) a = vmladavaq_s8(a, vldrbq_s8(w), vldrbq_s8(xi));
      if (tail) {
        a = vmladavaq_s8(a, vldrbq_s8(w), vldrbq_z_s8(xi, vctp8q((uint32_t)tail)));
        w += 16;
      }
    }
    a = arm_nn_requantize(a, k[1], k[2]) + p->output_offset;
    a = a < p->activation.min ? p->activation.min : a;
    *out++ = (int8_t)(a > p->activation.max ? p->activation.max : a);
  }
}

/* Every position of a 1x1 convolution of stride 1 without padding, its input read in place. */
static inline __attribute__((always_inline)) void in_place_positions(const cmsis_nn_conv_params* p,
                                                                     const cmsis_nn_dims* in_d, const int8_t* input,
                                                                     const int8_t* weights, const int32_t* k,
                                                                     const cmsis_nn_dims* out_d, int8_t* output,
                                                                     const int fast) {
  const out_range r = out_range_of(p);
  const int32_t rows = out_d->c, cols = in_d->c, count = in_d->n * in_d->h * in_d->w;
  for (int32_t n = 0; n < count; ++n, input += cols, output += rows) {
    position(p, input, weights, k, 1, cols, 0, rows, r, output, fast);
  }
}

/* Every position of any other convolution: a field inside the input read in place, a kernel row a
 * run, where each row's weights are whole groups of 16 (kernel_w x C a multiple of 16: the layout
 * has no padding between rows); any other field copied into the scratch first. */
static inline __attribute__((always_inline)) void field_positions(const cmsis_nn_conv_params* p,
                                                                  const cmsis_nn_dims* in_d, const int8_t* input,
                                                                  const cmsis_nn_dims* f_d, const int8_t* weights,
                                                                  const int32_t* k, const cmsis_nn_dims* out_d,
                                                                  int8_t* output, int8_t* scratch, const int fast) {
  const out_range r = out_range_of(p);
  const int32_t rows = out_d->c, cols = f_d->h * f_d->w * in_d->c;
  const int8x16_t zero_point = vdupq_n_s8((int8_t)-p->input_offset);
  const int32_t run = f_d->w * in_d->c, row_stride = p->dilation.h * in_d->w * in_d->c;
  const int direct = p->dilation.w == 1 && run % 16 == 0;
  const int32_t span_h = (f_d->h - 1) * p->dilation.h + 1;
  for (int32_t b = 0; b < in_d->n; ++b, input += in_d->h * in_d->w * in_d->c) {
    for (int32_t oy = 0; oy < out_d->h; ++oy) {
      const int32_t iy = oy * p->stride.h - p->padding.h;
      const int rows_inside = iy >= 0 && iy + span_h <= in_d->h;
      for (int32_t ox = 0; ox < out_d->w; ++ox, output += rows) {
        const int32_t ix = ox * p->stride.w - p->padding.w;
        const int inside = rows_inside && ix >= 0 && ix + f_d->w <= in_d->w;
        if (direct && inside) {
          const int8_t* x = input + (iy * in_d->w + ix) * in_d->c;
          position(p, x, weights, k, f_d->h, run, row_stride, rows, r, output, fast);
        } else if (inside && p->dilation.w == 1) {
          field_inside(input + (iy * in_d->w + ix) * in_d->c, row_stride, run, f_d->h, scratch);
          position(p, scratch, weights, k, 1, cols, 0, rows, r, output, fast);
        } else {
          field(p, in_d, f_d, input, oy, ox, zero_point, scratch);
          position(p, scratch, weights, k, 1, cols, 0, rows, r, output, fast);
        }
      }
    }
  }
}

/* Each path and requantization compiled on its own: inlined into one function, the paths' loops
 * share one register allocation and the 1x1 path's block loop spills. */
static __attribute__((noinline)) void in_place_fast(const cmsis_nn_conv_params* p, const cmsis_nn_dims* in_d,
                                                    const int8_t* input, const int8_t* weights, const int32_t* k,
                                                    const cmsis_nn_dims* out_d, int8_t* output) {
  in_place_positions(p, in_d, input, weights, k, out_d, output, 1);
}
static __attribute__((noinline)) void in_place_slow(const cmsis_nn_conv_params* p, const cmsis_nn_dims* in_d,
                                                    const int8_t* input, const int8_t* weights, const int32_t* k,
                                                    const cmsis_nn_dims* out_d, int8_t* output) {
  in_place_positions(p, in_d, input, weights, k, out_d, output, 0);
}
static __attribute__((noinline)) void fields_fast(const cmsis_nn_conv_params* p, const cmsis_nn_dims* in_d,
                                                  const int8_t* input, const cmsis_nn_dims* f_d, const int8_t* weights,
                                                  const int32_t* k, const cmsis_nn_dims* out_d, int8_t* output,
                                                  int8_t* scratch) {
  field_positions(p, in_d, input, f_d, weights, k, out_d, output, scratch, 1);
}
static __attribute__((noinline)) void fields_slow(const cmsis_nn_conv_params* p, const cmsis_nn_dims* in_d,
                                                  const int8_t* input, const cmsis_nn_dims* f_d, const int8_t* weights,
                                                  const int32_t* k, const cmsis_nn_dims* out_d, int8_t* output,
                                                  int8_t* scratch) {
  field_positions(p, in_d, input, f_d, weights, k, out_d, output, scratch, 0);
}
#endif

int32_t cmx_conv_helium_s8_scratch_bytes(const cmsis_nn_conv_params* params, const cmsis_nn_dims* input_dims,
                                         const cmsis_nn_dims* filter_dims) {
  return cmx_conv_helium_s8_field_bytes(filter_dims->h, filter_dims->w, input_dims->c, params->stride.h,
                                        params->stride.w, params->padding.h, params->padding.w);
}

#if defined(ARM_MATH_MVEI)
/* Whether every channel takes cmx_requantize_mve's fast form (cmx_all_right_shifts over the layout). */
static int all_right_shifts(const int32_t* k, int32_t rows) {
  int fast = 1;
  const int32_t blocks = rows >> 2;
  for (int32_t b = 0; b < blocks; ++b, k += 12) fast &= cmx_all_right_shifts(k + 4, k + 8, 4);
  for (int32_t at = rows & 3; at > 0; --at, k += 3) fast &= cmx_all_right_shifts(k + 1, k + 2, 1);
  return fast;
}
#endif

arm_cmsis_nn_status cmx_conv_helium_s8(const cmsis_nn_context* ctx, const cmsis_nn_conv_params* params,
                                       const cmsis_nn_dims* input_dims, const int8_t* input,
                                       const cmsis_nn_dims* filter_dims, const int8_t* weights,
                                       const int32_t* constants, const cmsis_nn_dims* output_dims, int8_t* output) {
  if (filter_dims->c != input_dims->c || filter_dims->n != output_dims->c || input_dims->n != output_dims->n ||
      ctx->size < cmx_conv_helium_s8_scratch_bytes(params, input_dims, filter_dims)) {
    return ARM_CMSIS_NN_ARG_ERROR;
  }
#if defined(ARM_MATH_MVEI)
  int8_t* scratch = (int8_t*)ctx->buf;
  const int fast = all_right_shifts(constants, output_dims->c);
  if (in_place(params, filter_dims)) {
    (fast ? in_place_fast : in_place_slow)(params, input_dims, input, weights, constants, output_dims, output);
  } else {
    (fast ? fields_fast : fields_slow)(params, input_dims, input, filter_dims, weights, constants, output_dims, output,
                                       scratch);
  }
  return ARM_CMSIS_NN_SUCCESS;
#else
  (void)input, (void)weights, (void)constants, (void)output;
  return ARM_CMSIS_NN_NO_IMPL_ERROR; /* the plan chooses this kernel only for a Helium core */
#endif
}
