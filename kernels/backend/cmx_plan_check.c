/* The plan checked before it runs (cmx_plan.h cmx_plan_check): every record's kind, size, operands,
 * constants, scratch and shapes, so that a plan from anywhere (a model slot, a flash that flipped a
 * bit after the hash, a bug in the writer) is refused at init or runs without a read or write outside
 * the working memory, its arguments and the plan. Plain C, no ExecuTorch: the host fuzz test builds
 * it with AddressSanitizer (tests/lower/test_plan_check.py).
 *
 * What each kernel reads and writes is derived from the same fields the backend passes it, with the
 * kernels' own size functions where they have one (scratch, weight layouts): nothing is restated.
 * Shapes: an output no larger than its input, kernel, stride, padding and dilation give, channels that
 * agree, counts that tile; arithmetic in 64 bits so no product wraps. */
#include <stddef.h>
#include <stdint.h>

#include "cmx_plan.h"

/* Every kind's check and its helpers are defined; only the kinds an app's plans use are compiled into
 * the dispatch (CMX_PLAN_KINDS_IN), so the others' are unused there, not wrong: quiet under -Wall
 * (Zephyr's Twister builds with warnings as errors). */
#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wunused-function"
#endif

#if defined(CMX_BACKEND_CONV) || defined(CMX_BACKEND_CONV_GENERAL) || defined(CMX_BACKEND_DEPTHWISE_CONV) || \
    defined(CMX_BACKEND_AVG_POOL) || defined(CMX_BACKEND_CONV_S4) || defined(CMX_BACKEND_DEPTHWISE_S4) || \
    defined(CMX_BACKEND_CONV_S16) || defined(CMX_BACKEND_DEPTHWISE_S16) || defined(CMX_BACKEND_AVG_POOL_S16)
#include "arm_nnfunctions.h"
#endif

typedef struct {
  const uint8_t* plan;
  const cmx_plan_header* h;
  const uint32_t* io_bytes; /* each input's, then output's bytes */
  const char* why;
} check;

#define LIMIT ((int64_t)1 << 31)

static int fail(check* c, const char* why) {
  c->why = why;
  return 0;
}

/* A tensor operand: `bytes` from `operand` inside the working memory or inside its argument. */
static int tensor(check* c, int32_t operand, int64_t bytes) {
  if (bytes < 0 || bytes >= LIMIT) return fail(c, "a tensor size out of range");
  if (operand >= 0) return (int64_t)operand + bytes <= (int64_t)c->h->work_bytes ? 1 : fail(c, "a tensor past the working memory");
  const int64_t arg = -1 - (int64_t)operand;
  const int64_t n_in = c->h->n_inputs, n_out = c->h->n_outputs;
  if (arg == n_in || arg > n_in + n_out) return fail(c, "a tensor operand that is no argument");
  const uint32_t have = c->io_bytes[arg < n_in ? arg : arg - 1];
  return bytes <= (int64_t)have ? 1 : fail(c, "a tensor past its argument");
}

/* An int16 tensor (the s16 kinds): 2-byte aligned, two bytes an element. */
static int tensor16(check* c, int32_t operand, int64_t elements) {
  if (operand >= 0 && (operand & 1) != 0) return fail(c, "an int16 tensor unaligned");
  return elements < LIMIT / 2 ? tensor(c, operand, 2 * elements) : fail(c, "a tensor size out of range");
}

/* A constant: `bytes` at `offset` in the plan's data, `align`-aligned; -1 (none) only when optional. */
static int constant(check* c, int32_t offset, int64_t bytes, int64_t align, int optional) {
  if (offset == -1) return optional ? 1 : fail(c, "a required constant missing");
  if (offset < 0 || (uint32_t)offset < c->h->data_offset || offset % align != 0) return fail(c, "a constant outside the data");
  if (bytes < 0 || (int64_t)offset + bytes > (int64_t)c->h->plan_bytes) return fail(c, "a constant past the plan");
  return 1;
}

/* Scratch: `bytes` (at least the kernel's `need`) at `at` in the working memory; none when both are 0. */
static int scratch(check* c, int32_t at, int64_t bytes, int64_t need) {
  if (need < 0 || bytes < need) return fail(c, "scratch smaller than the kernel needs");
  if (bytes == 0) return 1;
  if (at < 0 || (at & 3) != 0 || (int64_t)at + bytes > (int64_t)c->h->work_bytes) {
    return fail(c, "scratch past the working memory or unaligned");
  }
  return 1;
}

/* A CMSIS-NN wrapper's scratch, which the plan sizes as CMSIS-NN does: `scratch` as above, and with
 * CMX_BACKEND_CHECKED (bring-up) refused when it is not exactly CMSIS-NN's own size on this build. */
static int cmsis_scratch(check* c, int32_t at, int64_t bytes, int64_t need) {
#ifdef CMX_BACKEND_CHECKED
  if (bytes != need) return fail(c, "scratch other than CMSIS-NN's own size (CMX_BACKEND_CHECKED)");
#endif
  return scratch(c, at, bytes, need);
}

static int64_t volume(const cmsis_nn_dims* d) { return (int64_t)d->n * d->h * d->w * d->c; }

static int dims(check* c, const cmsis_nn_dims* d) {
  if (d->n < 1 || d->h < 1 || d->w < 1 || d->c < 1 || volume(d) >= LIMIT) return fail(c, "a dimension out of range");
  return 1;
}

/* CMSIS-NN's contract for int8 quantization: offsets of a zero point in [-128, 127] (an input's
 * negated), a Q31 multiplier other than -2^31 (negative ones are a subtraction's: x - y is an add
 * whose second multiplier is negated) and a shift in [-31, 31] (larger ones shift a 32-bit value past
 * its width), an activation range inside int8. Outside them its arithmetic overflows. */
static int offsets(check* c, int32_t input_offset, int32_t output_offset) {
  if (input_offset < -127 || input_offset > 128 || output_offset < -128 || output_offset > 127) {
    return fail(c, "a zero point outside int8");
  }
  return 1;
}

/* An element-wise input offset: the kernel's own int32 arithmetic bounds it, not int8 (a hardswish is a
 * mul whose second input is x + 3 in x's scale: its offset is past int8). An add shifts x + offset left
 * by 20 (left_shift): |x + offset| < 2^11; a mul multiplies two: |x + offset| < 2^15. */
static int elementwise_offset(check* c, int32_t offset, int32_t bound) {
  if (offset <= -bound + 128 || offset >= bound - 128) return fail(c, "an element-wise offset past the kernel's arithmetic");
  return 1;
}

static int requant(check* c, int32_t multiplier, int32_t shift) {
  if (multiplier == INT32_MIN || shift < -31 || shift > 31) return fail(c, "a requantization outside CMSIS-NN's range");
  return 1;
}

static int activation(check* c, int32_t lo, int32_t hi) {
  if (lo < -128 || hi > 127 || lo > hi) return fail(c, "an activation range outside int8");
  return 1;
}

/* The s16 kinds' activation range. */
static int activation16(check* c, int32_t lo, int32_t hi) {
  if (lo < -32768 || hi > 32767 || lo > hi) return fail(c, "an activation range outside int16");
  return 1;
}

/* Per-channel multipliers and shifts, each in requant's range (read once, at init). */
static int per_channel(check* c, int32_t multipliers, int32_t shifts, int64_t channels) {
  if (!constant(c, multipliers, 4 * channels, 4, 0) || !constant(c, shifts, 4 * channels, 4, 0)) return 0;
  const int32_t* m = (const int32_t*)(c->plan + multipliers);
  const int32_t* s = (const int32_t*)(c->plan + shifts);
  for (int64_t i = 0; i < channels; ++i) {
    if (!requant(c, m[i], s[i])) return 0;
  }
  return 1;
}

#ifdef CMX_BACKEND_CONV_ROW
/* cmx_conv_row_s8's constants (cmx_conv_row_s8_constants): each channel's multiplier and shift as
 * per_channel checks them, its shift word holding the layer's output offset. */
static int row_constants(check* c, int32_t at, const cmx_conv_row_params* p) {
  if (!constant(c, at, 4 * (int64_t)cmx_conv_row_s8_constants_words(p->out_ch), 4, 0)) return 0;
  const int32_t* k = (const int32_t*)(c->plan + at);
  for (int32_t ch = 0; ch < p->out_ch; ++ch) {
    const int32_t shift = cmx_row_shift(k, ch);
    if (!requant(c, cmx_row_mult(k, ch), shift)) return 0;
    if (cmx_row_shift_word(k, ch) != cmx_right_and_offset(-shift, p->output_offset)) {
      return fail(c, "convolution row constants for another output offset");
    }
  }
  return 1;
}
#endif

/* An output extent whose every window starts inside the input with `pad` zeros before it and as many
 * after: windows that run past the far edge are a patch's or a pooling's (ceil mode) and the kernels
 * read only the taps inside the input there. A kernel of one tap (1x1, stride 1, no padding: the fast
 * paths that read position p for output p) gets no output more than its input. */
static int window(check* c, int32_t out, int32_t in, int32_t kernel, int32_t stride, int32_t pad, int32_t dilation) {
  if (kernel < 1 || stride < 1 || pad < 0 || dilation < 1 || in < 1 || out < 1 || pad >= LIMIT / 4 ||
      kernel >= LIMIT / 4 || dilation >= LIMIT / 4) {
    return fail(c, "a kernel, stride, padding or dilation out of range");
  }
  const int64_t starts = (int64_t)in + 2 * (int64_t)pad - 1; /* the last window's first tap, from -pad */
  if (out > starts / stride + 1) return fail(c, "an output larger than its window allows");
  return 1;
}

static int conv_shapes(check* c, const cmsis_nn_conv_params* p, const cmsis_nn_dims* in, const cmsis_nn_dims* f,
                       const cmsis_nn_dims* out) {
  if (!dims(c, in) || !dims(c, f) || !dims(c, out)) return 0;
  if (out->n != in->n || out->c != f->n || in->c % f->c != 0 || out->c % (in->c / f->c) != 0) {
    return fail(c, "convolution channels that disagree");
  }
  return window(c, out->h, in->h, f->h, p->stride.h, p->padding.h, p->dilation.h) &&
         window(c, out->w, in->w, f->w, p->stride.w, p->padding.w, p->dilation.w);
}

/* After conv_shapes (the scratch size functions read the dims it checked). */
static int conv(check* c, const cmx_layer_conv* l, int64_t scratch_need, int64_t weight_bytes, int wrapper) {
  if (!offsets(c, l->params.input_offset, l->params.output_offset) ||
      !activation(c, l->params.activation.min, l->params.activation.max)) {
    return 0;
  }
  const int64_t oc = l->output_dims.c;
  return tensor(c, l->input, volume(&l->input_dims)) && tensor(c, l->output, volume(&l->output_dims)) &&
         constant(c, l->weight, weight_bytes, 1, 0) && constant(c, l->bias, 4 * oc, 4, 1) &&
         per_channel(c, l->multipliers, l->shifts, oc) &&
         (wrapper ? cmsis_scratch : scratch)(c, l->scratch, l->scratch_bytes, scratch_need);
}

/* After dims() of its three shapes (the scratch size functions read them). */
static int depthwise(check* c, const cmx_layer_depthwise_conv* l, int64_t scratch_need, int wrapper, int64_t weight_bytes) {
  const cmsis_nn_dims *in = &l->input_dims, *f = &l->filter_dims, *out = &l->output_dims;
  if (out->n != in->n || f->c != out->c || out->c != (int64_t)in->c * l->params.ch_mult) {
    return fail(c, "depthwise channels that disagree");
  }
  const cmsis_nn_dw_conv_params* p = &l->params;
  return offsets(c, p->input_offset, p->output_offset) && activation(c, p->activation.min, p->activation.max) &&
         window(c, out->h, in->h, f->h, p->stride.h, p->padding.h, p->dilation.h) &&
         window(c, out->w, in->w, f->w, p->stride.w, p->padding.w, p->dilation.w) &&
         tensor(c, l->input, volume(in)) && tensor(c, l->output, volume(out)) &&
         constant(c, l->weight, weight_bytes, 1, 0) && constant(c, l->bias, 4 * (int64_t)out->c, 4, 1) &&
         per_channel(c, l->multipliers, l->shifts, out->c) &&
         (wrapper ? cmsis_scratch : scratch)(c, l->scratch, l->scratch_bytes, scratch_need);
}

/* A fully connected layer's sizes, int8 parameters and tensors; `t`: its input, output, weight, bias and
 * kernel_sum words (the first five of the linear records); `quant_ok`: whether the caller found its
 * requantization in range. */
static int fc(check* c, const cmsis_nn_fc_params* p, const cmsis_nn_dims* in, const cmsis_nn_dims* filter,
              const cmsis_nn_dims* output, const int32_t* t, int64_t weight_bytes, int quant_ok) {
  const int64_t batches = in->n, depth = filter->n, out = output->c;
  if (batches < 1 || depth < 1 || out < 1 || output->n != batches || batches * depth >= LIMIT ||
      batches * out >= LIMIT || depth * out >= LIMIT) {
    return fail(c, "fully connected sizes that disagree");
  }
  if (!offsets(c, p->input_offset, p->output_offset) || p->filter_offset != 0 ||
      !activation(c, p->activation.min, p->activation.max) || !quant_ok) {
    return fail(c, "fully connected quantization outside CMSIS-NN's range");
  }
  return tensor(c, t[0], batches * depth) && tensor(c, t[1], batches * out) && constant(c, t[2], weight_bytes, 1, 0) &&
         constant(c, t[3], 4 * out, 4, 1) && constant(c, t[4], 4 * out, 4, 1);
}

static int linear(check* c, const cmx_layer_linear* l, int64_t weight_bytes) {
  const int quant_ok = requant(c, l->quant.multiplier, l->quant.shift);
  return fc(c, &l->params, &l->input_dims, &l->filter_dims, &l->output_dims, &l->input, weight_bytes, quant_ok);
}

/* A pool's shapes, window, range and tensors; `wide`: int16 (s16 kinds), else int8. */
static int pool(check* c, const cmsis_nn_pool_params* p, const cmsis_nn_dims* in, const cmsis_nn_dims* f,
                const cmsis_nn_dims* out, int32_t input, int32_t output, int wide) {
  if (!dims(c, in) || !dims(c, out) || f->h < 1 || f->w < 1) return fail(c, "pooling sizes out of range");
  if (out->n != in->n || out->c != in->c) return fail(c, "pooling channels that disagree");
  const int32_t lo = p->activation.min, hi = p->activation.max;
  if (!(wide ? activation16 : activation)(c, lo, hi)) return 0;
  if (!window(c, out->h, in->h, f->h, p->stride.h, p->padding.h, 1) ||
      !window(c, out->w, in->w, f->w, p->stride.w, p->padding.w, 1)) {
    return 0;
  }
  return wide ? tensor16(c, input, volume(in)) && tensor16(c, output, volume(out))
              : tensor(c, input, volume(in)) && tensor(c, output, volume(out));
}

/* A recurrent gate's constants: weights [hidden][input] and [hidden][hidden], biases [hidden] int32. */
static int gate(check* c, const int32_t* g, int64_t hidden, int64_t input, int hidden_at) {
  /* g: input multiplier, shift, weights, bias, then (at hidden_at) hidden multiplier, shift, weights, bias */
  return requant(c, g[0], g[1]) && requant(c, g[hidden_at], g[hidden_at + 1]) && constant(c, g[2], hidden * input, 1, 0) && constant(c, g[3], 4 * hidden, 4, 0) &&
         constant(c, g[hidden_at + 2], hidden * hidden, 1, 0) && constant(c, g[hidden_at + 3], 4 * hidden, 4, 0);
}

static int recurrent_sizes(check* c, int32_t batch, int32_t steps, int32_t input, int32_t hidden) {
  if (batch < 1 || steps < 1 || input < 1 || hidden < 1 || (int64_t)batch * steps * (input + hidden) >= LIMIT ||
      (int64_t)hidden * (input + hidden) >= LIMIT) {
    return fail(c, "recurrent sizes out of range");
  }
  return 1;
}

static int check_softmax(check* c, const cmx_layer_softmax* l) {
  const int64_t n = (int64_t)l->rows * l->row_size;
  if (l->rows < 1 || l->row_size < 1 || n >= LIMIT) return fail(c, "softmax sizes out of range");
  if (!requant(c, l->multiplier, l->shift) || l->diff_min > 0) return fail(c, "softmax scaling outside CMSIS-NN's range");
  if (!tensor(c, l->input, n) || !tensor(c, l->output, n)) return 0;
  if (l->ranges == -1) return 1;
  if (l->mask_rows < 1 || !constant(c, l->ranges, 8 * (int64_t)l->mask_rows, 4, 0)) return fail(c, "a softmax mask out of range");
  const int32_t* r = (const int32_t*)(c->plan + l->ranges);
  for (int32_t i = 0; i < l->mask_rows; ++i) {
    if (r[2 * i] < 0 || r[2 * i] > r[2 * i + 1] || r[2 * i + 1] > l->row_size) return fail(c, "a softmax mask past its row");
  }
  return 1;
}

static int check_copy_region(check* c, const cmx_layer_copy_region* l) {
  if (l->rows < 0 || l->row_bytes < 0 || l->input_at < 0 || l->output_at < 0 || l->input_stride < 0 || l->output_stride < 0) {
    return fail(c, "a region copy out of range");
  }
  if (l->rows == 0) return 1;
  const int64_t last = (int64_t)l->rows - 1;
  return tensor(c, l->input, l->input_at + last * l->input_stride + l->row_bytes) &&
         tensor(c, l->output, l->output_at + last * l->output_stride + l->row_bytes);
}

static int elementwise(check* c, int32_t a, int32_t b, int32_t out, int32_t block, int32_t count) {
  if (block < 1 || count < 0 || count % block != 0) return fail(c, "element-wise blocks that do not tile the count");
  return tensor(c, a, count) && tensor(c, b, block) && tensor(c, out, count);
}

#ifdef CMX_BACKEND_CONV
static int check_conv(check* c, const cmx_layer_conv* l) {
  if (!conv_shapes(c, &l->params, &l->input_dims, &l->filter_dims, &l->output_dims)) return 0;
  return conv(c, l, arm_convolve_wrapper_s8_get_buffer_size(&l->params, &l->input_dims, &l->filter_dims, &l->output_dims),
              volume(&l->filter_dims), 1);
}
#endif

#ifdef CMX_BACKEND_CONV_GENERAL
static int check_conv_general(check* c, const cmx_layer_conv_general* l) {
  if (!conv_shapes(c, &l->params, &l->input_dims, &l->filter_dims, &l->output_dims)) return 0;
  return conv(c, l, arm_convolve_s8_get_buffer_size(&l->input_dims, &l->filter_dims), volume(&l->filter_dims), 0);
}
#endif

#ifdef CMX_BACKEND_CONV_HELIUM
static int check_conv_helium(check* c, const cmx_layer_conv_helium* l) {
  if (!conv_shapes(c, &l->params, &l->input_dims, &l->filter_dims, &l->output_dims)) return 0;
  if (l->input_dims.c != l->filter_dims.c) return fail(c, "a grouped convolution on the Helium kernel");
  if (!offsets(c, l->params.input_offset, l->params.output_offset) ||
      !activation(c, l->params.activation.min, l->params.activation.max)) {
    return 0;
  }
  const int64_t oc = l->output_dims.c, cols = (int64_t)l->filter_dims.h * l->filter_dims.w * l->filter_dims.c;
  return tensor(c, l->input, volume(&l->input_dims)) && tensor(c, l->output, volume(&l->output_dims)) &&
         constant(c, l->weight, cmx_fully_connected_s8_weight_bytes((int32_t)oc, (int32_t)cols), 1, 0) &&
         constant(c, l->constants, 12 * oc, 4, 0) &&
         scratch(c, l->scratch, l->scratch_bytes,
                 cmx_conv_helium_s8_scratch_bytes(&l->params, &l->input_dims, &l->filter_dims));
}
#endif

#ifdef CMX_BACKEND_CONV_ROW
static int check_conv_row(check* c, const cmx_layer_conv_row* l) {
  const cmx_conv_row_params* p = &l->params;
  if (p->in_ch < 1 || p->out_ch < 1 || p->rows < 1 || p->in_rows < 1 || p->row_stride < 1 || p->row_pad < 0 ||
      p->in_ch >= 65536 || p->out_ch >= 65536 || p->in_positions >= LIMIT / 65536 || p->in_rows >= LIMIT / 65536) {
    return fail(c, "convolution row sizes out of range");
  }
  if (!window(c, p->positions, p->in_positions, p->kernel, p->stride, p->pad, p->dilation) ||
      !window(c, p->out_rows, p->in_rows, p->rows, p->row_stride, p->row_pad, 1)) {
    return 0;
  }
  if (!offsets(c, p->input_offset, p->output_offset) || !activation(c, p->act_min, p->act_max)) return 0;
  const int64_t row_bytes = cmx_conv_row_s8_row_bytes(p);
  if (p->row_bytes != row_bytes || p->wide < 0 || p->wide > 2) return fail(c, "convolution row weights in another layout");
  const int64_t oc = p->out_ch;
  return tensor(c, l->input, (int64_t)p->in_rows * p->in_positions * p->in_ch) &&
         tensor(c, l->output, (int64_t)p->out_rows * p->positions * oc) &&
         constant(c, l->weight, oc * row_bytes * (p->wide == 1 ? 2 : 1), p->wide == 1 ? 4 : 1, 0) &&
         row_constants(c, l->constants, p) &&
         scratch(c, l->scratch, l->scratch_bytes, cmx_conv_row_s8_scratch_bytes(p));
}
#endif

#ifdef CMX_BACKEND_DEPTHWISE_CONV
static int check_depthwise_conv(check* c, const cmx_layer_depthwise_conv* l) {
  if (!dims(c, &l->input_dims) || !dims(c, &l->filter_dims) || !dims(c, &l->output_dims)) return 0;
  return depthwise(c, l, arm_depthwise_conv_wrapper_s8_get_buffer_size(&l->params, &l->input_dims, &l->filter_dims,
                                                                     &l->output_dims),
                   1, volume(&l->filter_dims));
}
#endif

#ifdef CMX_BACKEND_DEPTHWISE_3X3
static int check_depthwise_3x3(check* c, const cmx_layer_depthwise_3x3* l) {
  if (!dims(c, &l->input_dims) || !dims(c, &l->filter_dims) || !dims(c, &l->output_dims)) return 0;
  if (l->filter_dims.h != 3 || l->filter_dims.w != 3) return fail(c, "a 3x3 depthwise layer of another kernel");
  /* none: its four-channel walk; else at least its planar path's plane */
  const int64_t need = l->scratch_bytes == 0 ? 0 : cmx_depthwise_3x3_s8_scratch_bytes(&l->params, &l->input_dims, &l->output_dims);
  return depthwise(c, l, need, 0, volume(&l->filter_dims));
}
#endif

/* The bytes of `count` 4-bit weights, two a byte (the s4 kinds). */
static int64_t nibbles(int64_t count) { return (count + 1) / 2; }

/* The s4 kernels' im2col zeroes `pad` rows of a column before the taps inside the input and the rest
 * after, and their 1x1 path writes an output for every input position: the output must be exactly what
 * the window gives (no patch's or ceil mode's extra outputs, no fewer) and the padding narrower than the
 * kernel, or their writes run past the column or the output (the fuzzed plans find both). */
static int padded_windows(check* c, const cmsis_nn_dims* in, const cmsis_nn_dims* f, const cmsis_nn_dims* out,
                          cmsis_nn_tile stride, cmsis_nn_tile pad, cmsis_nn_tile dilation) {
  if (stride.h < 1 || stride.w < 1 || dilation.h < 1 || dilation.w < 1 || pad.h < 0 || pad.w < 0 ||
      dilation.h >= LIMIT / 4 || dilation.w >= LIMIT / 4 || pad.h >= LIMIT / 4 || pad.w >= LIMIT / 4) {
    return fail(c, "a kernel, stride, padding or dilation out of range");
  }
  const int64_t kh = (int64_t)dilation.h * (f->h - 1) + 1, kw = (int64_t)dilation.w * (f->w - 1) + 1;
  if (pad.h >= kh || pad.w >= kw || (int64_t)in->h + 2 * pad.h < kh || (int64_t)in->w + 2 * pad.w < kw ||
      out->h != ((int64_t)in->h + 2 * pad.h - kh) / stride.h + 1 ||
      out->w != ((int64_t)in->w + 2 * pad.w - kw) / stride.w + 1) {
    return fail(c, "a 4-bit-weight layer's window past its padded input");
  }
  return 1;
}

#ifdef CMX_BACKEND_CONV_S4
static int check_conv_s4(check* c, const cmx_layer_conv_s4* l) {
  if (!conv_shapes(c, &l->params, &l->input_dims, &l->filter_dims, &l->output_dims)) return 0;
  if (l->input_dims.c != l->filter_dims.c) return fail(c, "a grouped convolution with 4-bit weights");
  if (!padded_windows(c, &l->input_dims, &l->filter_dims, &l->output_dims, l->params.stride, l->params.padding,
                      l->params.dilation)) {
    return 0;
  }
  return conv(c, l, arm_convolve_wrapper_s4_get_buffer_size(&l->params, &l->input_dims, &l->filter_dims, &l->output_dims),
              nibbles(volume(&l->filter_dims)), 1);
}
#endif

#ifdef CMX_BACKEND_DEPTHWISE_S4
static int check_depthwise_s4(check* c, const cmx_layer_depthwise_s4* l) {
  if (!dims(c, &l->input_dims) || !dims(c, &l->filter_dims) || !dims(c, &l->output_dims) ||
      !padded_windows(c, &l->input_dims, &l->filter_dims, &l->output_dims, l->params.stride, l->params.padding,
                      l->params.dilation)) {
    return 0;
  }
  return depthwise(c, l, arm_depthwise_conv_wrapper_s4_get_buffer_size(&l->params, &l->input_dims, &l->filter_dims,
                                                                     &l->output_dims),
                   1, nibbles(volume(&l->filter_dims)));
}
#endif

#ifdef CMX_BACKEND_LINEAR_S4
static int check_linear_s4(check* c, const cmx_layer_linear_s4* l) {
  return linear(c, l, nibbles((int64_t)l->filter_dims.n * l->output_dims.c));
}
#endif

#ifdef CMX_BACKEND_FULLY_CONNECTED_S4
static int check_fully_connected_s4(check* c, const cmx_layer_fully_connected_s4* l) {
  if (l->output_dims.c < 1 || l->filter_dims.n < 1 || (int64_t)l->output_dims.c * l->filter_dims.n >= LIMIT / 2) {
    return fail(c, "fully connected sizes out of range");
  }
  return linear(c, l, cmx_fully_connected_s4_weight_bytes(l->output_dims.c, l->filter_dims.n));
}
#endif

#ifdef CMX_BACKEND_LINEAR
static int check_linear(check* c, const cmx_layer_linear* l) {
  return linear(c, l, (int64_t)l->filter_dims.n * l->output_dims.c);
}
#endif

/* The s16 kinds (16-bit activations): zero offsets (symmetric), an int16 range, every tensor 2-byte
 * aligned and twice its elements, the bias int64, and each shift within arm_nn_requantize_s64's (it
 * shifts right by 14 - shift). */
static int s16_quant(check* c, int32_t in_off, int32_t out_off, int32_t lo, int32_t hi, int32_t multipliers,
                     int32_t shifts, int64_t channels) {
  if (in_off != 0 || out_off != 0) return fail(c, "an int16 layer with a zero point");
  if (!activation16(c, lo, hi) || !per_channel(c, multipliers, shifts, channels)) return 0;
  const int32_t* s = (const int32_t*)(c->plan + shifts);
  for (int64_t i = 0; i < channels; ++i) {
    if (s[i] > 14) return fail(c, "an int16 requantization shift above 14");
  }
  return 1;
}

#ifdef CMX_BACKEND_CONV_S16
static int check_conv_s16(check* c, const cmx_layer_conv_s16* l) {
  if (!conv_shapes(c, &l->params, &l->input_dims, &l->filter_dims, &l->output_dims)) return 0;
  if (l->input_dims.c != l->filter_dims.c) return fail(c, "a grouped convolution with int16 activations");
  const int64_t oc = l->output_dims.c;
  return s16_quant(c, l->params.input_offset, l->params.output_offset, l->params.activation.min,
                   l->params.activation.max, l->multipliers, l->shifts, oc) &&
         tensor16(c, l->input, volume(&l->input_dims)) && tensor16(c, l->output, volume(&l->output_dims)) &&
         constant(c, l->weight, volume(&l->filter_dims), 1, 0) && constant(c, l->bias, 8 * oc, 8, 1) &&
         cmsis_scratch(c, l->scratch, l->scratch_bytes,
                       arm_convolve_wrapper_s16_get_buffer_size(&l->params, &l->input_dims, &l->filter_dims,
                                                                &l->output_dims));
}
#endif

#ifdef CMX_BACKEND_DEPTHWISE_S16
static int check_depthwise_s16(check* c, const cmx_layer_depthwise_s16* l) {
  const cmsis_nn_dims *in = &l->input_dims, *f = &l->filter_dims, *out = &l->output_dims;
  const cmsis_nn_dw_conv_params* p = &l->params;
  if (!dims(c, in) || !dims(c, f) || !dims(c, out)) return 0;
  if (out->n != in->n || f->c != out->c || out->c != (int64_t)in->c * p->ch_mult || f->n != 1) {
    return fail(c, "depthwise channels that disagree");
  }
  return window(c, out->h, in->h, f->h, p->stride.h, p->padding.h, p->dilation.h) &&
         window(c, out->w, in->w, f->w, p->stride.w, p->padding.w, p->dilation.w) &&
         s16_quant(c, p->input_offset, p->output_offset, p->activation.min, p->activation.max, l->multipliers,
                   l->shifts, out->c) &&
         tensor16(c, l->input, volume(in)) && tensor16(c, l->output, volume(out)) &&
         constant(c, l->weight, volume(f), 1, 0) && constant(c, l->bias, 8 * (int64_t)out->c, 8, 1) &&
         cmsis_scratch(c, l->scratch, l->scratch_bytes, arm_depthwise_conv_wrapper_s16_get_buffer_size(p, in, f, out));
}
#endif

#ifdef CMX_BACKEND_LINEAR_S16
static int check_linear_s16(check* c, const cmx_layer_linear_s16* l) {
  const int64_t batches = l->input_dims.n, depth = l->filter_dims.n, out = l->output_dims.c;
  if (batches < 1 || depth < 1 || out < 1 || l->output_dims.n != batches || batches * depth >= LIMIT / 2 ||
      batches * out >= LIMIT / 2 || depth * out >= LIMIT) {
    return fail(c, "fully connected sizes that disagree");
  }
  const cmsis_nn_fc_params* p = &l->params;
  if (p->input_offset != 0 || p->filter_offset != 0 || p->output_offset != 0 || p->activation.min < -32768 ||
      p->activation.max > 32767 || p->activation.min > p->activation.max ||
      !requant(c, l->quant.multiplier, l->quant.shift) || l->quant.shift > 14) {
    return fail(c, "fully connected quantization outside CMSIS-NN's s16 range");
  }
  return tensor16(c, l->input, batches * depth) && tensor16(c, l->output, batches * out) &&
         constant(c, l->weight, depth * out, 1, 0) && constant(c, l->bias, 8 * out, 8, 1) &&
         constant(c, l->kernel_sum, 0, 4, 1);
}
#endif

#ifdef CMX_BACKEND_FULLY_CONNECTED
static int check_fully_connected(check* c, const cmx_layer_fully_connected* l) {
  if (l->output_dims.c < 1 || l->filter_dims.n < 1 || (int64_t)l->output_dims.c * l->filter_dims.n >= LIMIT / 2) {
    return fail(c, "fully connected sizes out of range");
  }
  return linear(c, l, cmx_fully_connected_s8_weight_bytes(l->output_dims.c, l->filter_dims.n));
}
#endif

#ifdef CMX_BACKEND_ADD
static int check_add(check* c, const cmx_layer_add* l) {
  if (!elementwise_offset(c, l->input1_offset, 1 << 11) || !elementwise_offset(c, l->input2_offset, 1 << 11) ||
      !offsets(c, 0, l->output_offset) || !requant(c, l->input1_multiplier, l->input1_shift) || !requant(c, l->input2_multiplier, l->input2_shift) ||
      !requant(c, l->output_multiplier, l->output_shift) || l->left_shift < 0 || l->left_shift > 20 ||
      !activation(c, l->act_min, l->act_max)) {
    return 0;
  }
  return elementwise(c, l->input1, l->input2, l->output, l->block, l->count);
}
#endif

#ifdef CMX_BACKEND_MUL
static int check_mul(check* c, const cmx_layer_mul* l) {
  if (!elementwise_offset(c, l->input1_offset, 1 << 15) || !elementwise_offset(c, l->input2_offset, 1 << 15) ||
      !offsets(c, 0, l->output_offset) || !requant(c, l->output_multiplier, l->output_shift) ||
      !activation(c, l->act_min, l->act_max)) {
    return 0;
  }
  return elementwise(c, l->input1, l->input2, l->output, l->block, l->count);
}
#endif

#ifdef CMX_BACKEND_AVG_POOL
static int check_avg_pool(check* c, const cmx_layer_avg_pool* l) {
  if (!pool(c, &l->params, &l->input_dims, &l->filter_dims, &l->output_dims, l->input, l->output, 0)) return 0;
  return cmsis_scratch(c, l->scratch, l->scratch_bytes, arm_avgpool_s8_get_buffer_size(l->output_dims.w, l->input_dims.c));
}
#endif

#ifdef CMX_BACKEND_MAX_POOL
static int check_max_pool(check* c, const cmx_layer_max_pool* l) {
  return pool(c, &l->params, &l->input_dims, &l->filter_dims, &l->output_dims, l->input, l->output, 0);
}
#endif

static int check_copy(check* c, const cmx_layer_copy* l) {
  return tensor(c, l->input, l->nbytes) && tensor(c, l->output, l->nbytes);
}

#ifdef CMX_BACKEND_TRANSPOSE
static int check_transpose(check* c, const cmx_layer_transpose* l) {
  const int64_t n = (int64_t)l->batches * l->rows * l->cols;
  if (l->batches < 1 || l->rows < 1 || l->cols < 1 || n >= LIMIT) return fail(c, "transpose sizes out of range");
  return tensor(c, l->input, n) && tensor(c, l->output, n);
}
#endif

#if defined(CMX_BACKEND_LSTM) || defined(CMX_BACKEND_LSTM_S16)
/* An s16 LSTM gate: s64 requantization shifts (at most 14), int64 effective biases each within int32. */
static int gate64(check* c, const int32_t* g, int64_t hidden, int64_t input) {
  if (g[1] > 14 || g[5] > 14) return fail(c, "an int16 LSTM gate's shift above 14");
  if (!requant(c, g[0], g[1]) || !requant(c, g[4], g[5]) || !constant(c, g[2], hidden * input, 1, 0) ||
      !constant(c, g[3], 8 * hidden, 8, 0) || !constant(c, g[6], hidden * hidden, 1, 0) ||
      !constant(c, g[7], 8 * hidden, 8, 0)) {
    return 0;
  }
  for (int part = 3; part <= 7; part += 4) {
    const int64_t* bias = (const int64_t*)(c->plan + g[part]);
    for (int64_t i = 0; i < hidden; ++i) {
      if (bias[i] < INT32_MIN || bias[i] > INT32_MAX) return fail(c, "an int16 LSTM bias past int32");
    }
  }
  return 1;
}

/* An LSTM record: `wide` for arm_lstm_unidirectional_s16 (int16 steps, int64 effective biases, each
 * within int32, as its Helium path starts its int32 sums from them; offsets 0). */
static int lstm_record(check* c, const cmx_layer_lstm* l, int wide) {
  if (!recurrent_sizes(c, l->batch_size, l->time_steps, l->input_size, l->hidden_size)) return 0;
  const int64_t b = l->batch_size, t = l->time_steps, in = l->input_size, hid = l->hidden_size;
  const int32_t* gates[] = {&l->forget_input_multiplier, &l->input_input_multiplier, &l->cell_input_multiplier,
                            &l->output_input_multiplier};
  for (int g = 0; g < 4; ++g) {
    if (!(wide ? gate64(c, gates[g], hid, in) : gate(c, gates[g], hid, in, 4))) return 0;
  }
  if (!offsets(c, l->input_offset, l->output_offset) || !requant(c, l->output_multiplier, l->output_shift) ||
      !requant(c, l->forget_to_cell_multiplier, l->forget_to_cell_shift) ||
      !requant(c, l->input_to_cell_multiplier, l->input_to_cell_shift) || l->cell_scale_power < -31 ||
      l->cell_scale_power > 31 || l->cell_clip < 0) {
    return 0;
  }
  if (wide && (l->input_offset != 0 || l->output_offset != 0)) return fail(c, "an int16 LSTM with offsets");
  const int64_t need = cmx_lstm_scratch_bytes(l->batch_size, l->time_steps, l->input_size, l->hidden_size,
                                              l->reverse, wide ? 2 : 1);
  return (wide ? tensor16(c, l->input, b * t * in) && tensor16(c, l->output, b * t * hid)
               : tensor(c, l->input, b * t * in) && tensor(c, l->output, b * t * hid)) &&
         scratch(c, l->scratch, need, need);
}
#endif

#ifdef CMX_BACKEND_LSTM
static int check_lstm(check* c, const cmx_layer_lstm* l) { return lstm_record(c, l, 0); }
#endif

#ifdef CMX_BACKEND_LSTM_S16
static int check_lstm_s16(check* c, const cmx_layer_lstm_s16* l) { return lstm_record(c, l, 1); }
#endif

#ifdef CMX_BACKEND_GRU
static int check_gru(check* c, const cmx_layer_gru* l) {
  if (!recurrent_sizes(c, l->batch_size, l->time_steps, l->input_size, l->hidden_size)) return 0;
  const int64_t b = l->batch_size, t = l->time_steps, in = l->input_size, hid = l->hidden_size;
  const int32_t* gates[] = {&l->reset_input_multiplier, &l->update_input_multiplier, &l->candidate_input_multiplier};
  for (int g = 0; g < 3; ++g) {
    if (!gate(c, gates[g], hid, in, 4)) return 0;
  }
  if (!offsets(c, l->hidden_offset, l->output_offset) || !requant(c, l->reset_multiplier, l->reset_shift) ||
      !requant(c, l->hidden_q15_multiplier, l->hidden_q15_shift) || !requant(c, l->output_multiplier, l->output_shift)) {
    return 0;
  }
  const int64_t need = cmx_gru_scratch_bytes(l->hidden_size);
  return tensor(c, l->input, b * t * in) && tensor(c, l->output, b * t * hid) && scratch(c, l->scratch, need, need);
}
#endif

#ifdef CMX_BACKEND_LAYER_NORM
static int check_layer_norm(check* c, const cmx_layer_layer_norm* l) {
  const int64_t n = (int64_t)l->rows * l->channels;
  if (l->rows < 1 || l->channels < 1 || n >= LIMIT) return fail(c, "layer norm sizes out of range");
  if (!offsets(c, l->input_offset, l->output_offset) || l->eps_hi < 0) return fail(c, "layer norm parameters out of range");
  return tensor(c, l->input, n) && tensor(c, l->output, n) && constant(c, l->gains, 4 * (int64_t)l->channels, 4, 0) &&
         constant(c, l->biases, 4 * (int64_t)l->channels, 4, 0);
}
#endif

#ifdef CMX_BACKEND_MEAN
static int check_mean(check* c, const cmx_layer_mean* l) {
  const int64_t n = (int64_t)l->outer * l->count * l->inner;
  if (l->outer < 1 || l->count < 1 || l->inner < 1 || n >= LIMIT) return fail(c, "mean sizes out of range");
  if (!offsets(c, l->input_offset, l->output_offset) || !requant(c, l->multiplier, l->shift)) return 0;
  return tensor(c, l->input, n) && tensor(c, l->output, (int64_t)l->outer * l->inner);
}
#endif

#ifdef CMX_BACKEND_LUT
static int check_lut(check* c, const cmx_layer_lut* l) {
  return tensor(c, l->input, l->count) && tensor(c, l->output, l->count) && constant(c, l->table, 256, 1, 0);
}
#endif

/* An s16 add's or multiplication's common fields: no zero points, its output's requantization and int16 range,
 * two int16 inputs of one shape (no broadcast block). */
static int elementwise16(check* c, const int32_t offsets[3], int32_t multiplier, int32_t shift, int32_t lo, int32_t hi,
                         const int32_t tensors[3], int32_t block, int32_t count) {
  if (offsets[0] != 0 || offsets[1] != 0 || offsets[2] != 0) return fail(c, "an int16 layer with a zero point");
  if (!requant(c, multiplier, shift) || !activation16(c, lo, hi)) return 0;
  if (block != count || count < 1) return fail(c, "an int16 element-wise layer of two shapes");
  return tensor16(c, tensors[0], count) && tensor16(c, tensors[1], count) && tensor16(c, tensors[2], count);
}

#ifdef CMX_BACKEND_ADD_S16
static int check_add_s16(check* c, const cmx_layer_add_s16* l) {
  if (!requant(c, l->input1_multiplier, l->input1_shift) || !requant(c, l->input2_multiplier, l->input2_shift) ||
      l->input1_shift > 0 || l->input2_shift > 0 || l->left_shift != 15) {
    return fail(c, "an int16 add outside CMSIS-NN's arithmetic");
  }
  const int32_t offsets[3] = {l->input1_offset, l->input2_offset, l->output_offset};
  const int32_t tensors[3] = {l->input1, l->input2, l->output};
  return elementwise16(c, offsets, l->output_multiplier, l->output_shift, l->act_min, l->act_max, tensors, l->block,
                       l->count);
}
#endif

#ifdef CMX_BACKEND_MUL_S16
static int check_mul_s16(check* c, const cmx_layer_mul_s16* l) {
  const int32_t offsets[3] = {l->input1_offset, l->input2_offset, l->output_offset};
  const int32_t tensors[3] = {l->input1, l->input2, l->output};
  return elementwise16(c, offsets, l->output_multiplier, l->output_shift, l->act_min, l->act_max, tensors, l->block,
                       l->count);
}
#endif

#ifdef CMX_BACKEND_AVG_POOL_S16
static int check_avg_pool_s16(check* c, const cmx_layer_avg_pool_s16* l) {
  if (!pool(c, &l->params, &l->input_dims, &l->filter_dims, &l->output_dims, l->input, l->output, 1)) return 0;
  return cmsis_scratch(c, l->scratch, l->scratch_bytes, arm_avgpool_s16_get_buffer_size(l->output_dims.w, l->input_dims.c));
}
#endif

#ifdef CMX_BACKEND_MAX_POOL_S16
static int check_max_pool_s16(check* c, const cmx_layer_max_pool_s16* l) {
  return pool(c, &l->params, &l->input_dims, &l->filter_dims, &l->output_dims, l->input, l->output, 1);
}
#endif

#ifdef CMX_BACKEND_LUT_S16
static int check_lut_s16(check* c, const cmx_layer_lut_s16* l) {
  return tensor(c, l->input, l->count) && tensor16(c, l->output, l->count) && constant(c, l->table, 512, 2, 0);
}
#endif

#ifdef CMX_BACKEND_NARROW_S16
static int check_narrow_s16(check* c, const cmx_layer_narrow_s16* l) {
  if (l->steps < 0 || l->steps > 255 || l->lowest < -128 || l->lowest > 127 - l->steps || l->multiplier < 0 ||
      l->multiplier > 32767 || l->shift < 0 || l->shift > 31) {
    return fail(c, "an int16 to int8 requantization outside its range");
  }
  return tensor16(c, l->input, l->count) && tensor(c, l->output, l->count) &&
         (l->steps == 0 || constant(c, l->table, 2 * l->steps, 2, 0));
}
#endif

#ifdef CMX_BACKEND_BMM
static int check_bmm(check* c, const cmx_layer_bmm* l) {
  const int64_t b = l->batches, r = l->rows, k = l->inner, n = l->cols;
  if (b < 1 || r < 1 || k < 1 || n < 1 || b * r * k >= LIMIT || b * k * n >= LIMIT || b * r * n >= LIMIT) {
    return fail(c, "batch matmul sizes out of range");
  }
  if (!offsets(c, l->input1_offset, l->output_offset) || !offsets(c, l->input2_offset, 0) ||
      !requant(c, l->multiplier, l->shift) || l->transposed < 0 || l->transposed > 1) {
    return 0;
  }
  const int64_t need = cmx_bmm_scratch_bytes(l->batches, l->inner, l->cols, l->transposed, 1);
  return tensor(c, l->input1, b * r * k) && tensor(c, l->input2, b * k * n) && tensor(c, l->output, b * r * n) &&
         scratch(c, l->scratch, need, need);
}
#endif

#ifdef CMX_BACKEND_LINEAR_PER_CHANNEL
static int check_linear_per_channel(check* c, const cmx_layer_linear_per_channel* l) {
#if defined(ARM_MATH_MVEI)
  if (l->kernel_sum == -1) return fail(c, "a Helium fully connected layer without its kernel sums");
#endif
  return fc(c, &l->params, &l->input_dims, &l->filter_dims, &l->output_dims, &l->input,
            (int64_t)l->filter_dims.n * l->output_dims.c, 1) &&
         per_channel(c, l->multipliers, l->shifts, l->output_dims.c);
}
#endif

#ifdef CMX_BACKEND_ACTIVATION_S16
static int check_activation_s16(check* c, const cmx_layer_activation_s16* l) {
  if (l->count < 1) return fail(c, "activation sizes out of range");
  /* the input times 3 << left_shift in int32: exact up to 14 */
  if (l->left_shift < -15 || l->left_shift > 14 || l->type < 0 || l->type > 1) {
    return fail(c, "an int16 sigmoid or tanh outside arm_nn_activation_s16's range");
  }
  return tensor16(c, l->input, l->count) && tensor16(c, l->output, l->count);
}
#endif

#ifdef CMX_BACKEND_SOFTMAX_S16
static int check_softmax_s16(check* c, const cmx_layer_softmax_s16* l) {
  const int64_t n = (int64_t)l->rows * l->row_size;
  if (l->rows < 1 || l->row_size < 1 || n >= LIMIT) return fail(c, "softmax sizes out of range");
  if (!requant(c, l->multiplier, l->shift)) return fail(c, "int16 softmax scaling outside CMSIS-NN's range");
  return tensor16(c, l->input, n) && tensor16(c, l->output, n) && constant(c, l->exp_table, 2 * 513, 2, 0) &&
         constant(c, l->one_by_one_table, 2 * 513, 2, 0);
}
#endif

#ifdef CMX_BACKEND_BMM_S16
static int check_bmm_s16(check* c, const cmx_layer_bmm_s16* l) {
  const int64_t b = l->batches, r = l->rows, k = l->inner, n = l->cols;
  if (b < 1 || r < 1 || k < 1 || n < 1 || b * r * k >= LIMIT || b * k * n >= LIMIT || b * r * n >= LIMIT) {
    return fail(c, "batch matmul sizes out of range");
  }
  if (l->input1_offset != 0 || l->input2_offset != 0 || l->output_offset != 0) {
    return fail(c, "an int16 batch matmul with offsets");
  }
  if (!requant(c, l->multiplier, l->shift) || l->shift > 14 || l->transposed < 0 || l->transposed > 1) {
    return fail(c, "an int16 batch matmul's requantization outside CMSIS-NN's s16 range");
  }
  const int64_t need = cmx_bmm_scratch_bytes(l->batches, l->inner, l->cols, l->transposed, 2);
  return tensor16(c, l->input1, b * r * k) && tensor16(c, l->input2, b * k * n) && tensor16(c, l->output, b * r * n) &&
         scratch(c, l->scratch, need, need);
}
#endif

/* One record: 1 if it is safe to run, else 0 with c->why set; one case for each kind compiled in
 * (CMX_PLAN_KINDS_IN, generated from the kinds' records), which calls that kind's check. */
static int layer(check* c, const cmx_layer_head* head) {
  switch (head->op) {
#define CMX_CHECK(K, k) \
  case CMX_OP_##K: return check_##k(c, (const cmx_layer_##k*)head);
    CMX_PLAN_KINDS_IN(CMX_CHECK)
#undef CMX_CHECK
    default: return fail(c, "a layer kind this runtime was not built with");
  }
}

/* The bytes a record of this kind needs (its struct), 0 for a kind unknown here. */
static size_t record_bytes(int32_t op) {
  switch (op) {
#define CMX_BYTES(K, k) \
  case CMX_OP_##K: return sizeof(cmx_layer_##k);
    CMX_PLAN_KINDS(CMX_BYTES)
#undef CMX_BYTES
    default: return 0;
  }
}

int32_t cmx_plan_check(const uint8_t* plan, size_t plan_bytes, const char** why) {
  check c = {plan, (const cmx_plan_header*)plan, NULL, "ok"};
  int32_t bad = -1;
  if (((uintptr_t)plan & 3u) != 0 || plan_bytes < sizeof(cmx_plan_header)) {
    c.why = "a plan shorter than its header or unaligned";
  } else {
    const cmx_plan_header* h = c.h;
    const uint64_t args = (uint64_t)h->n_inputs + h->n_outputs;
    const uint64_t io_end = sizeof(cmx_plan_header) + 8 * args;
    if (h->plan_bytes > plan_bytes || args + 1 > CMX_PLAN_MAX_ARGS || h->layers_offset != io_end ||
        h->data_offset < h->layers_offset || h->data_offset > h->plan_bytes || (h->data_offset & 3u) != 0) {
      c.why = "a plan header whose sections do not fit the plan";
    } else {
      c.io_bytes = (const uint32_t*)(plan + sizeof(cmx_plan_header) + 4 * args);
      const uint8_t* p = plan + h->layers_offset;
      const uint8_t* end = plan + h->data_offset;
      for (uint32_t i = 0; i < h->n_layers; ++i) {
        const cmx_layer_head* head = (const cmx_layer_head*)p;
        if ((size_t)(end - p) < sizeof(cmx_layer_head) || head->size < (int32_t)sizeof(cmx_layer_head) ||
            (head->size & 3) != 0 || head->size > end - p) {
          c.why = "a layer record past the layers";
          bad = (int32_t)i;
          break;
        }
        const size_t need = record_bytes(head->op);
        if (need == 0 || (size_t)head->size < need) {
          c.why = need == 0 ? "a layer kind this runtime does not know" : "a layer record shorter than its kind";
          bad = (int32_t)i;
          break;
        }
        if (!layer(&c, head)) {
          bad = (int32_t)i;
          break;
        }
        p += head->size;
      }
      if (bad < 0) {
        if (why) *why = "ok";
        return 0;
      }
    }
  }
  if (why) *why = c.why;
  return bad + 2; /* 1: the header; 2 + i: layer i */
}
