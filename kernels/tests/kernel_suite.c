/* cmx-gen's kernels against the CMSIS-NN functions they replace, on the target (issue 33).
 *
 * For each kernel: random shapes, strides, paddings, offsets, activation ranges, multipliers and
 * shifts from a fixed seed (CMX_SUITE_SEED), then the named edge cases; both functions run on the
 * same inputs and the outputs are compared byte for byte. One line per kernel:
 *   cmx-kernels: <kernel> cases=<n> equal=<n> cmsis_instr=<sum> cmx_instr=<sum>
 * (a named case first prints its own: `cmx-kernels: <kernel> case "<name>" cmsis=<n> cmx=<n> work=<MACs or
 * bytes>`), then `cmx-kernels: PASS` or `cmx-kernels: FAIL ...` naming the first differing case.
 * tests/device/test_kernel_suite.py builds it for each core and runs it on QEMU. */
#include <stdio.h>
#include <string.h>

#include "arm_nnfunctions.h"
#include "cmx_copy_rows.h"
#include "cmx_nn.h"
#include "cmx_platform.h"
#include "cmx_requantize.h"

#ifndef CMX_SUITE_SEED
#define CMX_SUITE_SEED 0x12345678u
#endif
#ifndef CMX_SUITE_CASES
#define CMX_SUITE_CASES 300
#endif

static uint32_t rng_state = CMX_SUITE_SEED;
static uint32_t rnd(void) { /* xorshift32 */
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return rng_state;
}
static int32_t between(int32_t lo, int32_t hi) { return lo + (int32_t)(rnd() % (uint32_t)(hi - lo + 1)); }

#define MAX_IN 8192
#define MAX_W 16384 /* 64 x 64 x 4 */
#define MAX_OUT 16384
#define MAX_CH 64
#define MAX_DW_CH 256 /* a depthwise layer's channels: the walk in chunks of 64 */
#define MAX_SCRATCH 40960 /* a 64 x 64 x 3 x 3 layer's weights staged as int16 (wide 2) */

static int8_t input[MAX_IN] __attribute__((aligned(4))), filter[MAX_W];
static int16_t row_weights_buf[MAX_W + 4 * MAX_CH]; /* int8 or, wide 1, int16 weights */
#define row_weights ((int8_t*)row_weights_buf)
static int32_t row_constants[(MAX_CH + 1) / 2 * CMX_ROW_PAIR_WORDS]; /* cmx_conv_row_s8_constants */
static int8_t out_cmsis[MAX_OUT] __attribute__((aligned(4))), out_cmx[MAX_OUT] __attribute__((aligned(4)));
static int32_t bias[MAX_DW_CH], mult[MAX_DW_CH], shift[MAX_DW_CH];
static int16_t scratch[MAX_SCRATCH / 2];

static char line[200];

/* newlib-nano's printf has no %llu */
static const char* u64(uint64_t v, char* buf) {
  char* at = buf + 21;
  *at = 0;
  do {
    *--at = (char)('0' + v % 10u);
    v /= 10u;
  } while (v);
  return at;
}
static void say(void) { cmx_platform_puts(line); }

typedef struct {
  int32_t cases, equal;
  uint64_t cmsis, cmx;
  char first_failure[120];
} tally;

/* An activation range as layers have them; full_range (or one case in two): all of int8. */
static cmsis_nn_activation random_activation(int full_range) {
  cmsis_nn_activation a;
  a.min = between(-128, 20);
  a.max = between(a.min, 127);
  if (full_range || rnd() % 2) {
    a.min = -128;
    a.max = 127;
  }
  return a;
}

/* An output offset: -128 in a quarter of the cases (a ReLU's output quantization, zero point -128: with the
 * full range a floored layer, cmx_floored, whose kernels take another rounding divide), else any. */
static int32_t draw_output_offset(void) { return rnd() % 4 == 0 ? -128 : between(-128, 127); }

/* Counts one case; a named one prints its figures. 1 when it is the first to differ. */
static int record(tally* t, const char* kernel, const char* name, uint64_t cmsis, uint64_t cmx, int32_t work,
                  int equal) {
  t->cases++;
  t->cmsis += cmsis;
  t->cmx += cmx;
  if (strcmp(name, "random") != 0) {
    char a[22], c[22];
    snprintf(line, sizeof(line), "cmx-kernels: %s case \"%s\" cmsis=%s cmx=%s work=%d\n", kernel, name, u64(cmsis, a),
             u64(cmx, c), (int)work);
    say();
  }
  t->equal += equal;
  return !equal && !t->first_failure[0];
}

/* Non-zero: the biases of the next cases sit at the edge cmx_accumulators_small allows for this
 * many terms at any offset (alternately +, -): accumulators near +-2^30 on the one-SMMULR path. */
static int32_t edge_terms;

static void fill_quant(int32_t out_ch, int slow) {
  for (int32_t c = 0; c < out_ch; ++c) {
    bias[c] = between(-40000, 40000);
    if (edge_terms) bias[c] = (c & 1 ? -1 : 1) * ((1 << 30) - 1 - edge_terms * 256 * 128);
    mult[c] = (int32_t)(0x40000000u + (rnd() & 0x3FFFFFFFu));
    /* shifts as quantization makes them (-12..-1); a slow case adds 0 and left shifts */
    shift[c] = slow ? between(-6, 2) : between(-12, -1);
  }
}

/* A convolution's inputs, filter and quantization drawn for a case (in this order, so a seed gives
 * the same cases), and its parameters: offsets, the window given, an activation range. */
static cmsis_nn_conv_params draw_conv(int32_t in_bytes, int32_t filter_bytes, int32_t out_ch, int slow, int32_t stride_h,
                                      int32_t stride_w, int32_t pad_h, int32_t pad_w, int32_t dilation_h,
                                      int32_t dilation_w, int full_range) {
  for (int32_t i = 0; i < in_bytes; ++i) input[i] = (int8_t)rnd();
  for (int32_t i = 0; i < filter_bytes; ++i) filter[i] = (int8_t)rnd();
  fill_quant(out_ch, slow);
  cmsis_nn_conv_params cp;
  cp.input_offset = between(-127, 128);
  cp.output_offset = draw_output_offset();
  cp.stride.w = stride_w;
  cp.stride.h = stride_h;
  cp.padding.w = pad_w;
  cp.padding.h = pad_h;
  cp.dilation.w = dilation_w;
  cp.dilation.h = dilation_h;
  cp.activation = random_activation(full_range);
  return cp;
}

/* What conv_pair found: whether this case is the tally's first difference, the two statuses, the
 * first differing byte. */
typedef struct {
  int first;
  arm_cmsis_nn_status s1, s2;
  int32_t at;
} conv_outcome;

/* One convolution on the inputs, filter and quantization the caller drew: CMSIS-NN as the plan calls
 * it (arm_convolve_s8 when `general`, else the wrapper) and cmx_conv_row_s8 with geometry `rp` (its
 * offsets and range taken from cp, its weights laid out here), their outputs compared byte for byte
 * and recorded under `kernel`; a case whose buffers the suite cannot hold is skipped. */
static conv_outcome conv_pair(tally* t, const char* kernel, const char* name, const cmsis_nn_conv_params* cp,
                              const cmsis_nn_dims* in_d, const cmsis_nn_dims* f_d, const cmsis_nn_dims* o_d,
                              int general, cmx_conv_row_params rp, int no_bias, int32_t work) {
  conv_outcome o = {0, ARM_CMSIS_NN_SUCCESS, ARM_CMSIS_NN_SUCCESS, 0};
  const int32_t need = general ? arm_convolve_s8_get_buffer_size(in_d, f_d)
                               : arm_convolve_wrapper_s8_get_buffer_size(cp, in_d, f_d, o_d);
  rp.input_offset = cp->input_offset;
  rp.output_offset = cp->output_offset;
  rp.act_min = cp->activation.min;
  rp.act_max = cp->activation.max;
  rp.row_bytes = cmx_conv_row_s8_row_bytes(&rp);
  if (rp.out_ch * rp.row_bytes * (rp.wide == 1 ? 2 : 1) > (int32_t)sizeof(row_weights_buf)) return o;
  if (need > MAX_SCRATCH || cmx_conv_row_s8_scratch_bytes(&rp) > MAX_SCRATCH || rp.out_ch > MAX_CH) return o;
  cmx_conv_row_s8_weights(&rp, filter, row_weights);
  const int32_t* b = no_bias ? NULL : bias;
  const int32_t n = o_d->n * o_d->h * o_d->w * o_d->c;
  const cmsis_nn_per_channel_quant_params q = {mult, shift};
  const cmsis_nn_dims b_d = {1, 1, 1, rp.out_ch};
  memset(out_cmsis, 0x55, (size_t)n);
  memset(out_cmx, 0x66, (size_t)n);
  cmsis_nn_context ctx = {scratch, need};
  uint64_t t0 = cmx_platform_counter();
  o.s1 = general ? arm_convolve_s8(&ctx, cp, &q, in_d, input, f_d, filter, &b_d, b, NULL, o_d, out_cmsis)
                 : arm_convolve_wrapper_s8(&ctx, cp, &q, in_d, input, f_d, filter, &b_d, b, o_d, out_cmsis);
  uint64_t t1 = cmx_platform_counter();
  cmx_conv_row_s8_constants(&rp, b, mult, shift, row_constants);
  o.s2 = cmx_conv_row_s8(&rp, input, row_weights, row_constants, scratch, out_cmx);
  uint64_t t2 = cmx_platform_counter();
  const int equal =
      o.s1 == ARM_CMSIS_NN_SUCCESS && o.s2 == ARM_CMSIS_NN_SUCCESS && memcmp(out_cmsis, out_cmx, (size_t)n) == 0;
  o.first = record(t, kernel, name, t1 - t0, t2 - t1, work, equal);
  while (o.at < n && out_cmsis[o.at] == out_cmx[o.at]) ++o.at;
  if (o.at == n) o.at = 0;
  return o;
}

/* One 1-D (or 1x1-as-a-row) case: the same convolution through CMSIS-NN and cmx_conv_row_s8.
 * two_d_1x1: H x W positions, kernel 1, stride 1, no padding. */
static void conv_row_case(tally* t, int32_t in_ch, int32_t out_ch, int32_t length, int32_t kernel, int32_t stride,
                          int32_t pad, int32_t dilation, int32_t chunk, int two_d_1x1, int32_t height, int slow,
                          int no_bias, int full_range, int wide, const char* name) {
  const int32_t span = (kernel - 1) * dilation + 1;
  const int32_t positions = two_d_1x1 ? height * length : (length + 2 * pad - span) / stride + 1;
  const int32_t in_positions = two_d_1x1 ? height * length : length;
  if (length + 2 * pad < span || positions < 1 || in_positions * in_ch > MAX_IN || positions * out_ch > MAX_OUT ||
      out_ch * kernel * in_ch > MAX_W || out_ch > MAX_CH) {
    return;
  }
  const cmsis_nn_conv_params cp =
      draw_conv(in_positions * in_ch, out_ch * kernel * in_ch, out_ch, slow, 1, stride, 0, pad, 1, dilation, full_range);
  const cmsis_nn_dims in_d = {1, two_d_1x1 ? height : 1, length, in_ch};
  const cmsis_nn_dims f_d = {out_ch, 1, kernel, in_ch};
  const cmsis_nn_dims o_d = {1, two_d_1x1 ? height : 1, two_d_1x1 ? length : positions, out_ch};
  /* The plan's CMSIS-NN call for the layer: the wrapper, except for a 1-D convolution, where it
   * calls arm_convolve_s8 (the wrapper's 1xN path goes there on DSP; on MVE it refuses or misreads
   * some strided padded cases, cmx_gen/lower/delegate/kernel_choice.py conv_kind). */
  const cmx_conv_row_params rp = {.positions = positions, .in_positions = in_positions, .in_ch = in_ch,
                                  .out_ch = out_ch, .kernel = kernel, .stride = stride, .pad = pad,
                                  .dilation = dilation, .rows = 1, .out_rows = 1, .in_rows = 1, .row_stride = 1,
                                  .row_pad = 0, .wide = wide, .chunk = chunk};
  const conv_outcome o = conv_pair(t, "conv_row", name, &cp, &in_d, &f_d, &o_d, !two_d_1x1, rp, no_bias,
                                   positions * out_ch * kernel * in_ch);
  if (o.first) {
    snprintf(t->first_failure, sizeof(t->first_failure),
             "%s in%d out%d len%d k%d s%d p%d d%d chunk%d h%d status %d/%d byte %d: %d vs %d", name,
             (int)in_ch, (int)out_ch, (int)length, (int)kernel, (int)stride, (int)pad, (int)dilation, (int)chunk,
             (int)height, (int)o.s1, (int)o.s2, (int)o.at, out_cmsis[o.at], out_cmx[o.at]);
  }
}

static void conv_row_suite(tally* t) {
  /* named edge cases first */
  conv_row_case(t, 1, 1, 1, 1, 1, 0, 1, 2, 0, 1, 0, 0, 0, 0, "1x1x1");
  conv_row_case(t, 1, 8, 64, 9, 1, 4, 1, 2, 0, 1, 0, 0, 0, 0, "one input channel, k9 pad4");
  conv_row_case(t, 3, 5, 17, 3, 2, 1, 1, 4, 0, 1, 0, 0, 0, 0, "odd channels, stride 2");
  conv_row_case(t, 8, 16, 64, 5, 1, 0, 1, 8, 0, 1, 0, 0, 1, 0, "issue 37 layer 1");
  conv_row_case(t, 16, 16, 60, 3, 1, 0, 1, 8, 0, 1, 0, 0, 1, 0, "issue 37 layer 2");
  conv_row_case(t, 16, 16, 60, 3, 1, 0, 1, 8, 0, 1, 1, 0, 0, 0, "zero and left shifts");
  conv_row_case(t, 16, 15, 61, 3, 1, 1, 1, 6, 0, 1, 0, 1, 0, 0, "no bias, odd out, odd positions");
  conv_row_case(t, 7, 9, 5, 5, 1, 4, 1, 2, 0, 1, 0, 0, 0, 0, "padding wider than the input");
  conv_row_case(t, 8, 8, 12, 1, 1, 0, 1, 16, 1, 12, 0, 0, 0, 0, "1x1 over 12x12");
  conv_row_case(t, 13, 7, 9, 1, 1, 0, 1, 4, 1, 7, 0, 0, 0, 0, "1x1 odd channels 7x9");
  conv_row_case(t, 64, 64, 5, 1, 1, 0, 1, 4, 1, 25, 0, 0, 1, 0, "DS-CNN pointwise 64x64 over 25x5");
  conv_row_case(t, 16, 16, 60, 3, 1, 2, 2, 8, 0, 1, 0, 0, 1, 0, "TCN: k3 dilation 2, same padding");
  conv_row_case(t, 6, 10, 101, 3, 1, 4, 4, 8, 0, 1, 0, 0, 0, 0, "k3 dilation 4, six channels");
  conv_row_case(t, 3, 5, 40, 5, 2, 3, 2, 4, 0, 1, 0, 1, 0, 0, "k5 stride 2 dilation 2, odd out, no bias");
  conv_row_case(t, 32, 32, 12, 1, 1, 0, 1, 4, 1, 12, 0, 0, 1, 0, "MobileNet pointwise 32x32 over 12x12");
  conv_row_case(t, 64, 64, 5, 1, 1, 0, 1, 4, 1, 25, 0, 0, 1, 1, "wide: DS-CNN pointwise 64x64 over 25x5");
  conv_row_case(t, 16, 16, 60, 3, 1, 0, 1, 8, 0, 1, 0, 0, 1, 1, "wide: issue 37 layer 2");
  conv_row_case(t, 13, 7, 9, 1, 1, 0, 1, 4, 1, 7, 1, 1, 0, 1, "wide: odd channels and positions, slow, no bias");
  conv_row_case(t, 8, 16, 24, 1, 1, 0, 1, 16, 1, 24, 0, 0, 1, 1, "wide: MobileNet pointwise 8 -> 16 over 24x24");
  for (int i = 0; i < 12; ++i) { /* positions_k8's position pairs, an odd chunk's last position alone */
    conv_row_case(t, 8, 2 * between(1, 12), between(1, 25), 1, 1, 0, 1, 2 * between(1, 12), 0, 1, 0, 0, 1, 1,
                  "wide: 8 values a position, random");
  }
  conv_row_case(t, 64, 64, 5, 1, 1, 0, 1, 4, 1, 25, 0, 0, 1, 2, "staged: DS-CNN pointwise 64x64 over 25x5");
  conv_row_case(t, 13, 7, 9, 1, 1, 0, 1, 4, 1, 7, 1, 1, 0, 2, "staged: odd channels and positions, slow, no bias");
  for (int i = 0; i < CMX_SUITE_CASES; ++i) {
    const int two_d = rnd() % 4 == 0;
    const int32_t kernel = two_d ? 1 : between(1, 9);
    const int32_t stride = two_d ? 1 : between(1, 3);
    const int32_t pad = two_d ? 0 : between(0, kernel - 1);
    const int32_t in_ch = between(1, 40);
    int32_t dilation = two_d ? 1 : between(1, 4);
    if ((dilation * in_ch) % 2) dilation = 1; /* cmx_nn.h: dilation * in_ch even */
    const int32_t span = (kernel - 1) * dilation + 1;
    const int32_t length = two_d ? between(1, 12) : between(span > 2 * pad ? span - 2 * pad : 1, 80);
    const int32_t chunk = 2 * between(1, 12);
    conv_row_case(t, in_ch, between(1, 40), length, kernel, stride, pad, dilation, chunk, two_d,
                  two_d ? between(1, 12) : 1, rnd() % 5 == 0, rnd() % 7 == 0, 0, dilation == 1 && rnd() % 2, "random");
  }
  /* 1x1 layers three positions at a time (cmx_row_triples_s8), the rest of a chunk after */
  conv_row_case(t, 128, 64, 6, 1, 1, 0, 1, 12, 1, 6, 0, 0, 1, 0, "triples: VWW pointwise 128 -> 64 over 6x6");
  conv_row_case(t, 64, 32, 3, 1, 1, 0, 1, 10, 1, 3, 0, 0, 1, 0, "triples: 9 positions in a chunk of 10");
  conv_row_case(t, 16, 2, 4, 1, 1, 0, 1, 4, 1, 1, 0, 0, 1, 0, "triples: one and a position over");
  conv_row_case(t, 64, 64, 5, 1, 1, 0, 1, 12, 1, 25, 0, 0, 1, 1, "triples, wide: DS-CNN pointwise 64x64 over 25x5");
  conv_row_case(t, 32, 10, 7, 1, 1, 0, 1, 12, 1, 5, 0, 0, 1, 2, "triples, staged: 32 values a position");
  conv_row_case(t, 24, 10, 7, 1, 1, 0, 1, 12, 1, 5, 0, 0, 1, 0, "not triples: 24 values (an odd count of group pairs)");
  conv_row_case(t, 256, 32, 3, 1, 1, 0, 1, 12, 1, 3, 0, 0, 1, 0, "triples: 256 values (16 iterations)");
  conv_row_case(t, 96, 16, 4, 1, 1, 0, 1, 12, 1, 3, 0, 0, 1, 1, "triples, wide: 96 values");
  conv_row_case(t, 48, 16, 4, 1, 1, 0, 1, 12, 1, 3, 0, 0, 1, 1, "triples, wide: 48 values");
  for (int i = 0; i < CMX_SUITE_CASES / 2; ++i) {
    conv_row_case(t, 16 * between(1, 4), 2 * between(1, 32), between(1, 12), 1, 1, 0, 1, 2 * between(1, 8), 1,
                  between(1, 12), rnd() % 5 == 0, rnd() % 7 == 0, 1, (int)(rnd() % 3), "triples: random");
  }
  edge_terms = 8; /* a 1x1 layer of 8 input channels: 8 terms a row */
  conv_row_case(t, 8, 16, 24, 1, 1, 0, 1, 16, 1, 24, 0, 0, 1, 0, "biases at the edge of the one-SMMULR requantization");
  conv_row_case(t, 8, 16, 24, 1, 1, 0, 1, 16, 1, 24, 0, 0, 1, 1, "wide: biases at the edge of the one-SMMULR requantization");
  edge_terms = 0;
  /* 5 to 8 values a position, wide, all of int8, even channels: the kernel's positions_k8 loop */
  conv_row_case(t, 8, 2, 7, 1, 1, 0, 1, 4, 1, 3, 0, 0, 1, 1, "wide, 8 values a position: two channels, 21 positions");
  conv_row_case(t, 6, 24, 13, 1, 1, 0, 1, 6, 1, 1, 0, 0, 1, 1, "wide, 6 values a position (zero-padded to 8)");
  conv_row_case(t, 4, 10, 30, 2, 2, 1, 1, 8, 0, 1, 0, 0, 1, 1, "wide, k2 over 4 channels, stride 2, padding 1");
  for (int i = 0; i < CMX_SUITE_CASES / 5; ++i) {
    const int32_t kernel = between(1, 2), in_ch = kernel == 1 ? between(5, 8) : between(3, 4);
    conv_row_case(t, in_ch, 2 * between(1, 20), between(kernel, 40), kernel, between(1, 2), 0, 1, 2 * between(1, 12), 0,
                  1, 0, 0, 1, 1 + (i & 1), "random");
  }
}

/* One 2-D case: a kh x kw convolution (dilation 1) through CMSIS-NN (the plan's call for it
 * otherwise) and cmx_conv_row_s8 computing it an output row at a time. */
static void conv_2d_case(tally* t, int32_t in_ch, int32_t out_ch, int32_t in_h, int32_t in_w, int32_t kh, int32_t kw,
                         int32_t stride_h, int32_t stride_w, int32_t pad_h, int32_t pad_w, int32_t chunk, int slow,
                         int no_bias, int full_range, int wide, const char* name) {
  if (in_h + 2 * pad_h < kh || in_w + 2 * pad_w < kw) return;
  const int32_t out_h = (in_h + 2 * pad_h - kh) / stride_h + 1, out_w = (in_w + 2 * pad_w - kw) / stride_w + 1;
  const int32_t n = out_h * out_w * out_ch, cols = kh * kw * in_ch;
  if (in_h * in_w * in_ch > MAX_IN || n > MAX_OUT || out_ch * cols > MAX_W || out_ch > MAX_CH) return;
  const cmsis_nn_conv_params cp = draw_conv(in_h * in_w * in_ch, out_ch * cols, out_ch, slow, stride_h, stride_w, pad_h,
                                             pad_w, 1, 1, full_range);
  const cmsis_nn_dims in_d = {1, in_h, in_w, in_ch}, f_d = {out_ch, kh, kw, in_ch};
  const cmsis_nn_dims o_d = {1, out_h, out_w, out_ch};
  /* As the plan: the wrapper, but arm_convolve_s8 where the wrapper's 1xN path would take the layer
   * (with MVE it misreads some strided ones: cmx_gen/lower/delegate/kernel_choice.py conv_kind). */
  const cmx_conv_row_params rp = {.positions = out_w, .in_positions = in_w, .in_ch = in_ch, .out_ch = out_ch,
                                  .kernel = kw, .stride = stride_w, .pad = pad_w, .dilation = 1, .rows = kh,
                                  .out_rows = out_h, .in_rows = in_h, .row_stride = stride_h, .row_pad = pad_h,
                                  .wide = wide, .chunk = chunk};
  const conv_outcome o = conv_pair(t, "conv_row_2d", name, &cp, &in_d, &f_d, &o_d, in_h == 1 && kh == 1, rp,
                                   no_bias, n * cols);
  if (o.first) {
    snprintf(t->first_failure, sizeof(t->first_failure),
             "%s in%d out%d %dx%d k%dx%d s%d,%d p%d,%d chunk%d status %d/%d byte %d: %d vs %d", name, (int)in_ch,
             (int)out_ch, (int)in_h, (int)in_w, (int)kh, (int)kw, (int)stride_h, (int)stride_w, (int)pad_h, (int)pad_w,
             (int)chunk, (int)o.s1, (int)o.s2, (int)o.at, out_cmsis[o.at], out_cmx[o.at]);
  }
}

static void conv_2d_suite(tally* t) {
  conv_2d_case(t, 1, 64, 49, 10, 10, 4, 2, 2, 4, 1, 6, 0, 0, 1, 0, "DS-CNN first layer: 10x4 stride 2 over 49x10x1");
  conv_2d_case(t, 3, 16, 32, 32, 3, 3, 1, 1, 1, 1, 4, 0, 0, 1, 0, "ResNet first layer: 3x3 over 32x32x3");
  conv_2d_case(t, 16, 16, 16, 16, 3, 3, 1, 1, 1, 1, 2, 0, 0, 1, 0, "ResNet 3x3 16 -> 16 over 16x16");
  conv_2d_case(t, 16, 32, 16, 16, 3, 3, 2, 2, 1, 1, 2, 0, 0, 1, 0, "ResNet 3x3 stride 2, 16 -> 32");
  conv_2d_case(t, 3, 8, 48, 48, 3, 3, 2, 2, 1, 1, 4, 0, 0, 1, 0, "MobileNet first layer: 3x3 stride 2 over 48x48x3");
  conv_2d_case(t, 5, 7, 4, 3, 5, 5, 1, 1, 2, 2, 2, 1, 1, 0, 0, "padding on every side wider than the input");
  conv_2d_case(t, 2, 3, 9, 9, 2, 3, 3, 1, 0, 2, 8, 1, 0, 0, 0, "uneven kernel and strides, zero and left shifts");
  conv_2d_case(t, 1, 64, 49, 10, 10, 4, 2, 2, 5, 1, 6, 0, 0, 1, 1, "wide: DS-CNN first layer, padding 5, 1");
  conv_2d_case(t, 16, 16, 16, 16, 3, 3, 1, 1, 1, 1, 2, 0, 0, 1, 1, "wide: ResNet 3x3 16 -> 16 over 16x16");
  conv_2d_case(t, 3, 8, 48, 48, 3, 3, 2, 2, 1, 1, 16, 0, 0, 1, 1, "wide: MobileNet stem 3x3 stride 2, 3 -> 8");
  conv_2d_case(t, 16, 16, 16, 16, 3, 3, 1, 1, 1, 1, 2, 0, 0, 1, 2, "staged: ResNet 3x3 16 -> 16 over 16x16");
  conv_2d_case(t, 3, 8, 48, 48, 3, 3, 2, 2, 1, 1, 16, 0, 0, 1, 2, "staged: MobileNet stem 3x3 stride 2, 3 -> 8");
  for (int i = 0; i < CMX_SUITE_CASES; ++i) {
    const int32_t kh = between(1, 5), kw = between(1, 5);
    const int32_t pad_h = between(0, kh - 1), pad_w = between(0, kw - 1);
    const int32_t in_h = between(kh > 2 * pad_h ? kh - 2 * pad_h : 1, 16);
    const int32_t in_w = between(kw > 2 * pad_w ? kw - 2 * pad_w : 1, 16);
    conv_2d_case(t, between(1, 24), between(1, 24), in_h, in_w, kh, kw, between(1, 3), between(1, 3), pad_h, pad_w,
                 2 * between(1, 8), rnd() % 5 == 0, rnd() % 7 == 0, 0, i % 3, "random");
  }
  /* RGB stems: rows a multiple of four bytes (widen_rgb_quads from the first column on a word) and not */
  for (int i = 0; i < 40; ++i) {
    const int32_t stride = between(1, 2), pad = between(0, 1);
    const int32_t in_w = i % 4 == 3 ? between(3, 40) : 4 * between(1, 12);
    conv_2d_case(t, 3, 2 * between(1, 8), between(3, 12), in_w, 3, 3, stride, stride, pad, pad, 2 * between(1, 8),
                 rnd() % 5 == 0, rnd() % 7 == 0, 1, i % 3, "random RGB stem");
  }
}

/* Non-zero: the next depthwise cases run cmx's kernel in place, its input this many bytes above its
 * output in one buffer (a plan's lead, cmx_gen/lower/delegate/overlap.py); CMSIS-NN's on apart buffers. */
static int32_t in_place_bytes;

/* cmx_depthwise_3x3_s8 against arm_depthwise_conv_wrapper_s8. */
static void depthwise_case(tally* t, int32_t ch, int32_t in_h, int32_t in_w, int32_t stride, int32_t pad, int slow,
                           int no_bias, int full_range, int planar, const char* name) {
  const int32_t out_h = (in_h + 2 * pad - 3) / stride + 1, out_w = (in_w + 2 * pad - 3) / stride + 1;
  if (in_h + 2 * pad < 3 || in_w + 2 * pad < 3 || ch > MAX_DW_CH || in_h * in_w * ch > MAX_IN ||
      out_h * out_w * ch > MAX_OUT) {
    return;
  }
  for (int32_t i = 0; i < in_h * in_w * ch; ++i) input[i] = (int8_t)rnd();
  for (int32_t i = 0; i < 9 * ch; ++i) filter[i] = (int8_t)rnd();
  fill_quant(ch, slow);
  cmsis_nn_dw_conv_params dp;
  dp.input_offset = between(-127, 128);
  dp.output_offset = draw_output_offset();
  dp.ch_mult = 1;
  dp.stride.h = dp.stride.w = stride;
  dp.padding.h = dp.padding.w = pad;
  dp.dilation.h = dp.dilation.w = 1;
  dp.activation = random_activation(full_range);
  cmsis_nn_per_channel_quant_params q = {mult, shift};
  const cmsis_nn_dims in_d = {1, in_h, in_w, ch}, f_d = {1, 3, 3, ch}, b_d = {1, 1, 1, ch};
  const cmsis_nn_dims o_d = {1, out_h, out_w, ch};
  const int32_t need = arm_depthwise_conv_wrapper_s8_get_buffer_size(&dp, &in_d, &f_d, &o_d);
  if (need > MAX_SCRATCH) return;
  const int32_t* b = no_bias ? NULL : bias;
  /* CMSIS-NN gets zeros for no bias: its MVE path (arm_depthwise_conv_s8_opt) passes `bias + 124` to
   * its second block of channels, and read a bias from address 496 past 124 channels (its generic
   * kernel agrees with cmx's). The backend never passes it none: ExecuTorch's aten_to_cortex_m_pass
   * gives every grouped convolution without a bias zeros, for this very reason. */
  static int32_t zero_bias[MAX_DW_CH];
  const int32_t n = out_h * out_w * ch;
  memset(out_cmsis, 0x55, (size_t)n);
  memset(out_cmx, 0x66, (size_t)n);
  cmsis_nn_context ctx = {scratch, need};
  uint64_t t0 = cmx_platform_counter();
  arm_cmsis_nn_status s1 = arm_depthwise_conv_wrapper_s8(&ctx, &dp, &q, &in_d, input, &f_d, filter, &b_d,
                                                         no_bias ? zero_bias : bias, &o_d, out_cmsis);
  uint64_t t1 = cmx_platform_counter();
  /* the planar path where the kernel takes it, the four-channel walk with no scratch */
  const int32_t plane = planar ? cmx_depthwise_3x3_s8_scratch_bytes(&dp, &in_d, &o_d) : 0;
  if (plane > MAX_SCRATCH) return;
  cmsis_nn_context own = {scratch, plane};
  const int8_t* x = input;
  if (in_place_bytes) { /* the input copied to in_place_bytes past the output's start */
    if (in_place_bytes + in_h * in_w * ch > MAX_OUT) return;
    memcpy(out_cmx + in_place_bytes, input, (size_t)(in_h * in_w * ch));
    x = out_cmx + in_place_bytes;
  }
  const uint64_t t1b = cmx_platform_counter();
  arm_cmsis_nn_status s2 = cmx_depthwise_3x3_s8(plane ? &own : NULL, &dp, &q, &in_d, x, &f_d, filter, b, &o_d, out_cmx);
  uint64_t t2 = cmx_platform_counter();
  const int equal =
      s1 == ARM_CMSIS_NN_SUCCESS && s2 == ARM_CMSIS_NN_SUCCESS && memcmp(out_cmsis, out_cmx, (size_t)n) == 0;
  /* the path the kernel took by shape (cmx_depthwise_3x3.h: planar_shape, else grouped where it asks
   * scratch; a grouped shape fast and full runs the walk in assembly, cmx_dw3x3_walk_in_assembly; a narrow
   * planar shape, rows of six, tallied as planar where its range is full, which it runs when fast too) */
  const int narrow = cmx_dw3x3_planar_narrow(stride, stride, out_w);
  const int planar_shape = cmx_dw3x3_planar(stride, stride, out_w) && (!narrow || full_range);
  const char* path = !(planar && plane) ? "depthwise_3x3" : planar_shape ? "depthwise_3x3_planar" : "depthwise_3x3_grouped";
  if (record(t, path, name, t1 - t0, t2 - t1b, n * 9, equal)) {
    int32_t at = 0;
    while (at < n && out_cmsis[at] == out_cmx[at]) ++at;
    snprintf(t->first_failure, sizeof(t->first_failure), "%s c%d %dx%d s%d p%d status %d/%d byte %d: %d vs %d", name,
             (int)ch, (int)in_h, (int)in_w, (int)stride, (int)pad, (int)s1, (int)s2, (int)at,
             at < n ? out_cmsis[at] : 0, at < n ? out_cmx[at] : 0);
  }
}

static void depthwise_suite(tally* t) {
  depthwise_case(t, 64, 25, 5, 1, 1, 0, 0, 1, 1, "DS-CNN: 64 channels, 25 x 5, stride 1");
  depthwise_case(t, 64, 25, 5, 1, 1, 0, 0, 1, 0, "DS-CNN: 64 channels, 25 x 5, stride 1, no scratch");
  depthwise_case(t, 32, 16, 16, 2, 1, 0, 0, 1, 1, "MobileNet: 32 channels, 16 x 16, stride 2");
  depthwise_case(t, 8, 32, 32, 1, 1, 0, 0, 1, 1, "MobileNet: 8 channels, 32 x 32, stride 1");
  depthwise_case(t, 32, 12, 12, 1, 1, 0, 0, 1, 1, "MobileNet: 32 channels, 12 x 12, stride 1");
  depthwise_case(t, 16, 16, 16, 2, 0, 0, 0, 1, 1, "stride 2 over an even input, no padding");
  depthwise_case(t, 7, 6, 5, 1, 1, 1, 1, 0, 1, "odd channels, zero and left shifts, no bias");
  depthwise_case(t, 4, 3, 3, 1, 0, 0, 0, 0, 1, "one output pixel");
  depthwise_case(t, 5, 1, 1, 1, 1, 0, 0, 0, 1, "a 1 x 1 input, all padding");
  for (int i = 0; i < CMX_SUITE_CASES; ++i) {
    depthwise_case(t, between(1, 40), between(1, 16), between(1, 16), between(1, 2), between(0, 1), rnd() % 5 == 0,
                   rnd() % 7 == 0, 0, rnd() % 4 != 0, "random");
  }
  edge_terms = 9;
  depthwise_case(t, 16, 8, 8, 2, 1, 0, 0, 1, 1, "biases at the edge of the one-SMMULR requantization");
  edge_terms = 0;
  /* more channels than the walk's chunk (64): its assembly a chunk at a time */
  depthwise_case(t, 128, 6, 6, 1, 1, 0, 0, 1, 0, "MobileNet: 128 channels, 6 x 6, stride 1, no scratch");
  depthwise_case(t, 256, 3, 3, 1, 1, 0, 0, 1, 0, "MobileNet: 256 channels, 3 x 3, stride 1, no scratch");
  depthwise_case(t, 128, 6, 6, 2, 1, 0, 0, 1, 0, "MobileNet: 128 channels, 6 x 6 -> 3 x 3, stride 2, no scratch");
  depthwise_case(t, 100, 5, 4, 1, 1, 0, 0, 1, 0, "100 channels: a chunk of 64 and one of 36");
  for (int i = 0; i < 40; ++i) {
    depthwise_case(t, 4 * between(17, 64), between(1, 6), between(1, 6), between(1, 2), between(0, 1), rnd() % 5 == 0,
                   rnd() % 7 == 0, rnd() % 2, 0, "random, 68 to 256 channels");
  }
  /* in place, the output a band's lead (a row and two pixels, at least) below the input: the walk's
   * chunks write each channel over its own (cmx_dw3x3_walk_in_assembly), with or without the scratch */
  in_place_bytes = (6 + 2) * 128;
  depthwise_case(t, 128, 6, 6, 1, 1, 0, 0, 1, 0, "in place: 128 channels, 6 x 6, a row and two pixels");
  in_place_bytes = (6 + 2) * 128 + 4; /* the walk's own lead: four channels past a pixel (C, not the chunks) */
  depthwise_case(t, 128, 6, 6, 1, 1, 0, 0, 1, 0, "in place: 128 channels, 6 x 6, a row, two pixels and 4 bytes");
  in_place_bytes = 3 * 7 * 128; /* the grouped path's band of two rows and its halo (rows of six run the plane) */
  depthwise_case(t, 128, 6, 7, 1, 1, 0, 0, 1, 1, "in place: 128 channels, 6 x 7, the grouped path's lead");
  in_place_bytes = 6 * 6 * 128; /* rows of six (cmx_dw_plane_rows): a band of six rows, the whole map */
  depthwise_case(t, 128, 6, 6, 1, 1, 0, 0, 1, 1, "in place: 128 channels, 6 x 6, the plane's band");
  in_place_bytes = 12 * 96;
  depthwise_case(t, 96, 6, 6, 2, 1, 0, 0, 1, 1, "in place: 96 channels, 6 x 6 -> 3 x 3, two rows");
  in_place_bytes = 3 * 3 * 256; /* rows of three (cmx_dw_plane_rows3): a band of three rows, the whole map */
  depthwise_case(t, 256, 3, 3, 1, 1, 0, 0, 1, 1, "in place: 256 channels, 3 x 3, the plane's band");
  in_place_bytes = 0;
}

/* The planar path's shapes (DSP cores: stride 1, rows of 8 to 61 outputs; elsewhere the same cases
 * take the kernel's other paths). */
static void depthwise_planar_suite(tally* t) {
  depthwise_case(t, 2, 4, 61, 1, 1, 0, 0, 1, 1, "the widest row the plane takes (61 outputs)");
  depthwise_case(t, 2, 4, 62, 1, 1, 0, 0, 1, 1, "62 outputs: the four-channel walk");
  depthwise_case(t, 3, 11, 10, 1, 0, 1, 1, 0, 1, "8 outputs a row, no padding, a band and one row");
  depthwise_case(t, 256, 3, 3, 1, 1, 0, 0, 1, 1, "MobileNet: 256 channels, 3 x 3 (rows of three)");
  depthwise_case(t, 128, 6, 6, 1, 1, 0, 0, 1, 1, "MobileNet: 128 channels, 6 x 6 (rows of six)");
  depthwise_case(t, 5, 5, 5, 1, 0, 0, 0, 1, 1, "rows of three, no padding (the plane filled row by row)");
  depthwise_case(t, 9, 11, 3, 1, 1, 0, 0, 1, 1, "rows of three, eleven rows: a band and three");
  for (int i = 0; i < 40; ++i) { /* rows of three and six, padded or not, any height */
    const int32_t pad = between(0, 1), w = (rnd() % 2 ? 3 : 6) + 2 - 2 * pad;
    depthwise_case(t, between(1, 40), between(1, 12), w, 1, pad, rnd() % 5 == 0, rnd() % 7 == 0, rnd() % 4 != 0, 1,
                   "random, rows of three or six");
  }
  for (int i = 0; i < CMX_SUITE_CASES; ++i) {
    const int32_t pad = between(0, 1);
    depthwise_case(t, between(1, 24), between(1, 12), between(10 - 2 * pad, 28), 1, pad, rnd() % 5 == 0,
                   rnd() % 7 == 0, rnd() % 3 == 0, 1, "random");
  }
  edge_terms = 9;
  depthwise_case(t, 8, 12, 12, 1, 1, 0, 0, 1, 1, "biases at the edge of the one-SMMULR requantization");
  depthwise_case(t, 8, 6, 6, 1, 1, 0, 0, 1, 1, "rows of six: biases at the edge of the one-SMMULR requantization");
  edge_terms = 0;
  /* rows of six (cmx_dw_plane_rows where fast and full; the grouped path or the walk otherwise) */
  depthwise_case(t, 128, 6, 6, 1, 1, 0, 0, 1, 1, "MobileNet: 128 channels, 6 x 6, stride 1: rows of six");
  depthwise_case(t, 7, 6, 6, 1, 1, 1, 1, 1, 1, "rows of six: 7 channels, slow, no bias");
  depthwise_case(t, 12, 8, 8, 1, 0, 0, 0, 1, 1, "rows of six, no padding (8 x 8 in)");
  depthwise_case(t, 5, 21, 6, 1, 1, 0, 0, 1, 1, "rows of six, 21 rows: bands of 8, 8 and 5");
  depthwise_case(t, 16, 6, 6, 1, 1, 0, 0, 0, 1, "rows of six, a narrower activation range: not the plane");
  for (int i = 0; i < 60; ++i) {
    const int32_t pad = between(0, 1);
    depthwise_case(t, between(1, 40), between(1, 20), 8 - 2 * pad, 1, pad, rnd() % 5 == 0, rnd() % 7 == 0,
                   rnd() % 4 != 0, 1, "random rows of six");
  }
}

/* The grouped path's shapes (DSP cores: channels a multiple of four, stride 2 or rows of 4 to 7
 * outputs; elsewhere the same cases take the kernel's other paths). */
static void depthwise_grouped_suite(tally* t) {
  depthwise_case(t, 64, 6, 6, 1, 1, 0, 0, 1, 1, "MobileNet: 64 channels, 6 x 6, stride 1");
  depthwise_case(t, 32, 16, 16, 2, 1, 0, 0, 1, 1, "MobileNet: 32 channels, 16 x 16 -> 8 x 8, stride 2");
  depthwise_case(t, 64, 12, 12, 2, 1, 0, 0, 1, 1, "MobileNet: 64 channels, 12 x 12 -> 6 x 6, stride 2");
  depthwise_case(t, 8, 9, 9, 2, 0, 0, 0, 1, 1, "stride 2 over an odd input, no padding");
  depthwise_case(t, 4, 4, 4, 1, 1, 0, 0, 0, 1, "4 outputs a row: the narrowest it takes");
  depthwise_case(t, 4, 3, 3, 1, 1, 0, 0, 0, 1, "3 outputs a row: the four-channel walk");
  depthwise_case(t, 12, 19, 7, 1, 1, 1, 1, 0, 1, "7 outputs a row, 19 rows: bands of 2 and a last row, slow, no bias");
  depthwise_case(t, 8, 40, 9, 2, 1, 0, 0, 0, 1, "stride 2, 20 output rows: ten bands");
  for (int i = 0; i < CMX_SUITE_CASES; ++i) {
    const int32_t stride = between(1, 2), pad = between(0, 1);
    /* stride 2: any width with 4 outputs or more; stride 1: rows of 4 to 7 outputs */
    const int32_t in_w = stride == 2 ? between(9 - 2 * pad, 24) : between(6 - 2 * pad, 9 - 2 * pad);
    depthwise_case(t, 4 * between(1, 12), between(1, 20), in_w, stride, pad, rnd() % 5 == 0, rnd() % 7 == 0,
                   rnd() % 3 == 0, 1, "random");
  }
  edge_terms = 9;
  depthwise_case(t, 16, 6, 6, 1, 1, 0, 0, 1, 1, "biases at the edge of the one-SMMULR requantization");
  edge_terms = 0;
}

/* cmx_transpose_s8 against arm_transpose_s8 ([1, batches, rows, cols] permuted {0, 1, 3, 2}). */
static void transpose_case(tally* t, int32_t batches, int32_t rows, int32_t cols, const char* name) {
  const int32_t n = batches * rows * cols;
  if (n > MAX_IN || n > MAX_OUT || n < 1) return;
  for (int32_t i = 0; i < n; ++i) input[i] = (int8_t)rnd();
  memset(out_cmsis, 0x55, (size_t)n);
  memset(out_cmx, 0x66, (size_t)n);
  static const uint32_t perm[4] = {0, 1, 3, 2};
  const cmsis_nn_transpose_params tp = {4, perm};
  const cmsis_nn_dims in_d = {1, batches, rows, cols};
  const cmsis_nn_dims out_d = {1, batches, cols, rows};
  uint64_t t0 = cmx_platform_counter();
  arm_cmsis_nn_status s1 = arm_transpose_s8(input, out_cmsis, &in_d, &out_d, &tp);
  uint64_t t1 = cmx_platform_counter();
  arm_cmsis_nn_status s2 = cmx_transpose_s8(input, out_cmx, batches, rows, cols);
  uint64_t t2 = cmx_platform_counter();
  const int equal = s1 == ARM_CMSIS_NN_SUCCESS && s2 == ARM_CMSIS_NN_SUCCESS && memcmp(out_cmsis, out_cmx, (size_t)n) == 0;
  if (record(t, "transpose", name, t1 - t0, t2 - t1, n, equal)) {
    snprintf(t->first_failure, sizeof(t->first_failure), "%s %dx%dx%d status %d", name, (int)batches, (int)rows,
             (int)cols, (int)s1);
  }
}

/* cmx_copy_rows against memmove run by run (what copy_region called before), on one buffer: the box
 * written anywhere beside the box read or over it (a patch copies a box over its own input), word-aligned
 * or not. */
static void copy_rows_case(tally* t, int32_t rows, int32_t bytes, int32_t in_stride, int32_t out_stride, int32_t from,
                           int32_t to, const char* name) {
  const int32_t n = MAX_OUT / 2;
  for (int32_t i = 0; i < n; ++i) out_cmsis[i] = out_cmx[i] = (int8_t)rnd();
  const uint64_t t0 = cmx_platform_counter();
  for (int32_t r = 0; r < rows; ++r) memmove(out_cmsis + to + r * out_stride, out_cmsis + from + r * in_stride, (size_t)bytes);
  const uint64_t t1 = cmx_platform_counter();
  cmx_copy_rows(out_cmx + to, out_cmx + from, rows, bytes, in_stride, out_stride);
  const uint64_t t2 = cmx_platform_counter();
  if (record(t, "copy_rows", name, t1 - t0, t2 - t1, rows * bytes, memcmp(out_cmsis, out_cmx, (size_t)n) == 0)) {
    snprintf(t->first_failure, sizeof(t->first_failure), "%s rows %ld bytes %ld strides %ld %ld at %ld -> %ld", name,
             (long)rows, (long)bytes, (long)in_stride, (long)out_stride, (long)from, (long)to);
  }
}

static void copy_rows_suite(tally* t) {
  copy_rows_case(t, 256, 8, 8, 16, 0, 4096, "a U-Net's concat: 8-byte pixels into 16-byte ones");
  copy_rows_case(t, 16, 64, 64, 128, 64, 2048, "a depth-to-space: rows of 64 bytes to every other row");
  copy_rows_case(t, 64, 8, 8, 8, 0, 4, "over its own input, 4 bytes on");
  copy_rows_case(t, 32, 12, 12, 12, 100, 0, "over its own input, to lower addresses");
  copy_rows_case(t, 10, 6, 7, 9, 1, 3001, "unaligned runs and strides");
  copy_rows_case(t, 0, 8, 8, 8, 0, 512, "no rows");
  for (int i = 0; i < CMX_SUITE_CASES; ++i) {
    const int32_t word = rnd() % 2, unit = word ? 4 : 1;
    const int32_t rows = between(1, 24), bytes = unit * between(1, 16);
    const int32_t in_stride = bytes + unit * between(0, 8), out_stride = bytes + unit * between(0, 8);
    const int32_t span = (rows - 1) * (in_stride > out_stride ? in_stride : out_stride) + bytes;
    const int32_t from = unit * between(0, 512), to = unit * between(0, (MAX_OUT / 2 - span) / unit - 1);
    copy_rows_case(t, rows, bytes, in_stride, out_stride, from, to, "random");
  }
}

/* cmx_transpose_s16 against arm_transpose_s8 on its bytes: [batches][rows][cols][2] permuted {0, 2, 1, 3}. */
static void transpose16_case(tally* t, int32_t batches, int32_t rows, int32_t cols, const char* name) {
  const int32_t n = 2 * batches * rows * cols;
  if (n > MAX_IN || n > MAX_OUT || n < 2) return;
  for (int32_t i = 0; i < n; ++i) input[i] = (int8_t)rnd();
  memset(out_cmsis, 0x55, (size_t)n);
  memset(out_cmx, 0x66, (size_t)n);
  static const uint32_t perm[4] = {0, 2, 1, 3};
  const cmsis_nn_transpose_params tp = {4, perm};
  const cmsis_nn_dims in_d = {batches, rows, cols, 2};
  const cmsis_nn_dims out_d = {batches, cols, rows, 2};
  int16_t* in16 = (int16_t*)(void*)input;
  uint64_t t0 = cmx_platform_counter();
  arm_cmsis_nn_status s1 = arm_transpose_s8(input, out_cmsis, &in_d, &out_d, &tp);
  uint64_t t1 = cmx_platform_counter();
  arm_cmsis_nn_status s2 = cmx_transpose_s16(in16, (int16_t*)(void*)out_cmx, batches, rows, cols);
  uint64_t t2 = cmx_platform_counter();
  const int equal = s1 == ARM_CMSIS_NN_SUCCESS && s2 == ARM_CMSIS_NN_SUCCESS && memcmp(out_cmsis, out_cmx, (size_t)n) == 0;
  if (record(t, "transpose", name, t1 - t0, t2 - t1, n / 2, equal)) {
    snprintf(t->first_failure, sizeof(t->first_failure), "s16 %s %dx%dx%d status %d", name, (int)batches, (int)rows,
             (int)cols, (int)s1);
  }
}

static void transpose_suite(tally* t) {
  transpose_case(t, 1, 8, 64, "NCL -> NLC, 8 x 64 (issue 37's input)");
  transpose_case(t, 1, 14, 16, "NHWC -> NCHW before a flatten, 14 x 16");
  transpose_case(t, 1, 1, 1, "one byte");
  transpose_case(t, 3, 1, 7, "rows of one");
  for (int i = 0; i < CMX_SUITE_CASES; ++i) transpose_case(t, between(1, 4), between(1, 40), between(1, 40), "random");
  transpose16_case(t, 2, 16, 8, "s16: an attention's v, 2 heads of 16 x 8");
  transpose16_case(t, 1, 1, 1, "s16: one element");
  for (int i = 0; i < CMX_SUITE_CASES; ++i) transpose16_case(t, between(1, 4), between(1, 30), between(1, 30), "s16 random");
}

/* A fully connected case's parameters: offsets, activation, requantization and bias, drawn in one
 * order for the s8 and s4 cases. */
static int32_t fc_bias[MAX_CH * 16];
static void draw_fc(int32_t rows, int slow, int full_range, cmsis_nn_fc_params* fp,
                    cmsis_nn_per_tensor_quant_params* q) {
  for (int32_t r = 0; r < rows; ++r) fc_bias[r] = between(-40000, 40000);
  fp->input_offset = between(-127, 128);
  fp->filter_offset = 0;
  fp->output_offset = between(-128, 127);
  fp->activation = random_activation(full_range);
  q->multiplier = (int32_t)(0x40000000u + (rnd() & 0x3FFFFFFFu));
  q->shift = slow ? between(-6, 2) : between(-12, -1);
}

/* A fully connected case's outputs compared and recorded, with the first byte that differs. */
static void record_fc(tally* t, const char* kernel, const char* name, uint64_t t0, uint64_t t1, uint64_t t2,
                      int32_t batches, int32_t cols, int32_t rows, arm_cmsis_nn_status s1, arm_cmsis_nn_status s2) {
  const int32_t n = batches * rows;
  const int equal =
      s1 == ARM_CMSIS_NN_SUCCESS && s2 == ARM_CMSIS_NN_SUCCESS && memcmp(out_cmsis, out_cmx, (size_t)n) == 0;
  if (record(t, kernel, name, t1 - t0, t2 - t1, batches * rows * cols, equal)) {
    int32_t at = 0;
    while (at < n && out_cmsis[at] == out_cmx[at]) ++at;
    snprintf(t->first_failure, sizeof(t->first_failure), "%s n%d cols%d rows%d status %d/%d byte %d: %d vs %d", name,
             (int)batches, (int)cols, (int)rows, (int)s1, (int)s2, (int)at, at < n ? out_cmsis[at] : 0,
             at < n ? out_cmx[at] : 0);
  }
}

/* cmx_fully_connected_s8 against arm_fully_connected_s8 (its kernel sums, which the MVE path
 * needs, from arm_vector_sum_s8 as the cortex_m pass gives them). */
static int32_t kernel_sum[MAX_OUT];
static void fc_case(tally* t, int32_t batches, int32_t cols, int32_t rows, int slow, int no_bias, int full_range,
                    const char* name) {
  if (batches * cols > MAX_IN || batches * rows > MAX_OUT || rows * ((cols + 15) & ~15) > MAX_W || rows > MAX_CH * 16) {
    return;
  }
  for (int32_t i = 0; i < batches * cols; ++i) input[i] = (int8_t)rnd();
  for (int32_t i = 0; i < rows * cols; ++i) filter[i] = (int8_t)rnd();
  cmsis_nn_fc_params fp;
  cmsis_nn_per_tensor_quant_params q;
  draw_fc(rows, slow, full_range, &fp, &q);
  const cmsis_nn_dims in_d = {batches, 1, 1, cols}, f_d = {cols, 1, 1, rows}, b_d = {1, 1, 1, rows};
  const cmsis_nn_dims o_d = {batches, 1, 1, rows};
  const int32_t* b = no_bias ? NULL : fc_bias;
  arm_vector_sum_s8(kernel_sum, cols, rows, filter, fp.input_offset, 0, b);
  cmx_fully_connected_s8_weights(rows, cols, filter, row_weights);
  const int32_t n = batches * rows;
  memset(out_cmsis, 0x55, (size_t)n);
  memset(out_cmx, 0x66, (size_t)n);
  cmsis_nn_context ctx = {kernel_sum, 0};
  uint64_t t0 = cmx_platform_counter();
  arm_cmsis_nn_status s1 = arm_fully_connected_s8(&ctx, &fp, &q, &in_d, input, &f_d, filter, &b_d, b, &o_d, out_cmsis);
  uint64_t t1 = cmx_platform_counter();
  arm_cmsis_nn_status s2 =
      cmx_fully_connected_s8(&fp, &q, &in_d, input, &f_d, row_weights, b, kernel_sum, &o_d, out_cmx);
  uint64_t t2 = cmx_platform_counter();
  record_fc(t, "fully_connected", name, t0, t1, t2, batches, cols, rows, s1, s2);
}

#if defined(ARM_MATH_MVEI)
#define FC_COLS 1 /* Helium: any column count */
#else
#define FC_COLS 4 /* the DSP kernel: a multiple of four */
#endif

static void fc_suite(tally* t) {
  fc_case(t, 1, 640, 16, 0, 0, 1, "AD first layer, 640 -> 16 of its 128 rows");
  fc_case(t, 1, 128, 128, 0, 0, 1, "AD 128 -> 128");
  fc_case(t, 1, 8, 128, 0, 0, 1, "AD bottleneck 8 -> 128");
  fc_case(t, 1, 64, 12, 0, 0, 0, "DS-CNN classifier 64 -> 12");
  fc_case(t, 3, 20, 7, 1, 1, 0, "a batch of 3, odd rows, no bias, zero and left shifts");
  fc_case(t, 1, 4, 1, 0, 0, 0, "one row of four");
  if (FC_COLS == 1) fc_case(t, 2, 37, 9, 0, 0, 0, "Helium: 37 columns (a predicated last group), 9 rows");
  for (int i = 0; i < CMX_SUITE_CASES; ++i) {
    fc_case(t, between(1, 3), FC_COLS * between(1, 256 / FC_COLS), between(1, 96), rnd() % 5 == 0, rnd() % 7 == 0, 0,
            "random");
  }
}

#if !defined(ARM_MATH_MVEI)
/* cmx_fully_connected_s4 against arm_fully_connected_s4: the same 4-bit weights (values in [-8, 7]),
 * CMSIS-NN's packed two a byte, cmx-gen's in its own layout. DSP cores (and Helium none: there the plan
 * calls arm_fully_connected_s4 itself). */
static uint8_t s4_packed[MAX_W / 2 + 1];
static void fc_s4_case(tally* t, int32_t batches, int32_t cols, int32_t rows, int slow, int no_bias, int full_range,
                       const char* name) {
  if (batches * cols > MAX_IN || batches * rows > MAX_OUT || rows * cols > MAX_W ||
      cmx_fully_connected_s4_weight_bytes(rows, cols) > (int32_t)sizeof(row_weights_buf) || rows > MAX_CH * 16) {
    return;
  }
  for (int32_t i = 0; i < batches * cols; ++i) input[i] = (int8_t)rnd();
  for (int32_t i = 0; i < rows * cols; ++i) filter[i] = (int8_t)between(-8, 7);
  memset(s4_packed, 0, sizeof(s4_packed));
  for (int32_t i = 0; i < rows * cols; ++i) s4_packed[i / 2] |= (uint8_t)((filter[i] & 0x0F) << (4 * (i % 2)));
  cmsis_nn_fc_params fp;
  cmsis_nn_per_tensor_quant_params q;
  draw_fc(rows, slow, full_range, &fp, &q);
  const cmsis_nn_dims in_d = {batches, 1, 1, cols}, f_d = {cols, 1, 1, rows}, b_d = {1, 1, 1, rows};
  const cmsis_nn_dims o_d = {batches, 1, 1, rows};
  const int32_t* b = no_bias ? NULL : fc_bias;
  uint8_t* cmx_weights = (uint8_t*)row_weights_buf;
  cmx_fully_connected_s4_weights(rows, cols, filter, cmx_weights);
  const int32_t n = batches * rows;
  memset(out_cmsis, 0x55, (size_t)n);
  memset(out_cmx, 0x66, (size_t)n);
  cmsis_nn_context ctx = {NULL, 0};
  uint64_t t0 = cmx_platform_counter();
  arm_cmsis_nn_status s1 =
      arm_fully_connected_s4(&ctx, &fp, &q, &in_d, input, &f_d, (const int8_t*)s4_packed, &b_d, b, &o_d, out_cmsis);
  uint64_t t1 = cmx_platform_counter();
  arm_cmsis_nn_status s2 = cmx_fully_connected_s4(&fp, &q, &in_d, input, &f_d, cmx_weights, b, &o_d, out_cmx);
  uint64_t t2 = cmx_platform_counter();
  record_fc(t, "fully_connected_s4", name, t0, t1, t2, batches, cols, rows, s1, s2);
}

static void fc_s4_suite(tally* t) {
  fc_s4_case(t, 1, 640, 16, 0, 0, 1, "AD first layer, 640 -> 16 of its 128 rows");
  fc_s4_case(t, 1, 128, 128, 0, 0, 1, "AD 128 -> 128");
  fc_s4_case(t, 1, 8, 128, 0, 0, 1, "AD bottleneck 8 -> 128");
  fc_s4_case(t, 1, 45, 10, 0, 0, 0, "45 columns (a group of 5), 10 rows");
  fc_s4_case(t, 3, 21, 7, 1, 1, 0, "a batch of 3, odd rows and columns, no bias, zero and left shifts");
  fc_s4_case(t, 1, 1, 1, 0, 0, 0, "one weight");
  for (int i = 0; i < CMX_SUITE_CASES; ++i) {
    fc_s4_case(t, between(1, 3), between(1, 256), between(1, 96), rnd() % 5 == 0, rnd() % 7 == 0, 0, "random");
  }
}
#endif

#if defined(ARM_MATH_MVEI)
/* cmx_conv_helium_s8 against CMSIS-NN: arm_convolve_wrapper_s8 for a 1x1 convolution of stride 1
 * without padding (its 1x1 path, the plan's call otherwise), arm_convolve_s8 for any other (the
 * wrapper's MVE 1xN path misreads some strided ones: kernel_choice.py conv_kind); its kernel sums
 * from arm_vector_sum_s8. */
static int32_t helium_constants[3 * MAX_CH];
static void conv_helium_case(tally* t, int32_t in_ch, int32_t out_ch, int32_t in_h, int32_t in_w, int32_t kh,
                             int32_t kw, int32_t stride_h, int32_t stride_w, int32_t pad_h, int32_t pad_w,
                             int32_t dilation, int slow, int no_bias, int full_range, const char* name) {
  const int32_t span_h = (kh - 1) * dilation + 1, span_w = (kw - 1) * dilation + 1;
  if (in_h + 2 * pad_h < span_h || in_w + 2 * pad_w < span_w) return;
  const int32_t out_h = (in_h + 2 * pad_h - span_h) / stride_h + 1, out_w = (in_w + 2 * pad_w - span_w) / stride_w + 1;
  const int32_t cols = kh * kw * in_ch, n = out_h * out_w * out_ch;
  if (in_h * in_w * in_ch > MAX_IN || n > MAX_OUT || out_ch * ((cols + 15) & ~15) > MAX_W || out_ch > MAX_CH) return;
  const cmsis_nn_conv_params cp = draw_conv(in_h * in_w * in_ch, out_ch * cols, out_ch, slow, stride_h, stride_w, pad_h,
                                             pad_w, dilation, dilation, full_range);
  const cmsis_nn_dims in_d = {1, in_h, in_w, in_ch}, f_d = {out_ch, kh, kw, in_ch}, b_d = {1, 1, 1, out_ch};
  const cmsis_nn_dims o_d = {1, out_h, out_w, out_ch};
  const int one_by_one = kh == 1 && kw == 1 && stride_h == 1 && stride_w == 1 && pad_h == 0 && pad_w == 0;
  const int32_t need = one_by_one ? arm_convolve_wrapper_s8_get_buffer_size(&cp, &in_d, &f_d, &o_d)
                                  : arm_convolve_s8_get_buffer_size(&in_d, &f_d);
  const int32_t own = cmx_conv_helium_s8_scratch_bytes(&cp, &in_d, &f_d);
  if (need > MAX_SCRATCH || own > MAX_SCRATCH) return;
  const int32_t* b = no_bias ? NULL : bias;
  arm_vector_sum_s8(kernel_sum, cols, out_ch, filter, cp.input_offset, 0, b);
  cmx_conv_helium_s8_constants(out_ch, kernel_sum, mult, shift, helium_constants);
  cmx_fully_connected_s8_weights(out_ch, cols, filter, row_weights);
  const cmsis_nn_per_channel_quant_params q = {mult, shift};
  memset(out_cmsis, 0x55, (size_t)n);
  memset(out_cmx, 0x66, (size_t)n);
  cmsis_nn_context ctx = {scratch, need}, own_ctx = {scratch, own};
  uint64_t t0 = cmx_platform_counter();
  arm_cmsis_nn_status s1 =
      one_by_one ? arm_convolve_wrapper_s8(&ctx, &cp, &q, &in_d, input, &f_d, filter, &b_d, b, &o_d, out_cmsis)
                 : arm_convolve_s8(&ctx, &cp, &q, &in_d, input, &f_d, filter, &b_d, b, NULL, &o_d, out_cmsis);
  uint64_t t1 = cmx_platform_counter();
  arm_cmsis_nn_status s2 =
      cmx_conv_helium_s8(&own_ctx, &cp, &in_d, input, &f_d, row_weights, helium_constants, &o_d, out_cmx);
  uint64_t t2 = cmx_platform_counter();
  const int equal =
      s1 == ARM_CMSIS_NN_SUCCESS && s2 == ARM_CMSIS_NN_SUCCESS && memcmp(out_cmsis, out_cmx, (size_t)n) == 0;
  if (record(t, "conv_helium", name, t1 - t0, t2 - t1, n * cols, equal)) {
    int32_t at = 0;
    while (at < n && out_cmsis[at] == out_cmx[at]) ++at;
    snprintf(t->first_failure, sizeof(t->first_failure),
             "%s in%d out%d %dx%d k%dx%d s%d,%d p%d,%d d%d status %d/%d byte %d: %d vs %d", name, (int)in_ch,
             (int)out_ch, (int)in_h, (int)in_w, (int)kh, (int)kw, (int)stride_h, (int)stride_w, (int)pad_h,
             (int)pad_w, (int)dilation, (int)s1, (int)s2, (int)at, at < n ? out_cmsis[at] : 0,
             at < n ? out_cmx[at] : 0);
  }
}

static void conv_helium_suite(tally* t) {
  conv_helium_case(t, 64, 64, 25, 5, 1, 1, 1, 1, 0, 0, 1, 0, 0, 1, "DS-CNN pointwise 64 -> 64 over 25 x 5");
  conv_helium_case(t, 8, 16, 24, 24, 1, 1, 1, 1, 0, 0, 1, 0, 0, 1, "MobileNet pointwise 8 -> 16 over 24 x 24");
  conv_helium_case(t, 32, 64, 12, 12, 1, 1, 1, 1, 0, 0, 1, 0, 0, 1, "MobileNet pointwise 32 -> 64 over 12 x 12");
  conv_helium_case(t, 1, 64, 49, 10, 10, 4, 2, 2, 4, 1, 1, 0, 0, 1, "DS-CNN first layer: 10x4 stride 2 over 49x10x1");
  conv_helium_case(t, 3, 16, 32, 32, 3, 3, 1, 1, 1, 1, 1, 0, 0, 1, "ResNet first layer: 3x3 over 32x32x3");
  conv_helium_case(t, 16, 16, 16, 16, 3, 3, 1, 1, 1, 1, 1, 0, 0, 1, "ResNet 3x3 16 -> 16 over 16x16");
  conv_helium_case(t, 16, 32, 16, 16, 3, 3, 2, 2, 1, 1, 1, 0, 0, 1, "ResNet 3x3 stride 2, 16 -> 32");
  conv_helium_case(t, 3, 8, 48, 48, 3, 3, 2, 2, 1, 1, 1, 0, 0, 1, "MobileNet stem 3x3 stride 2 over 48x48x3");
  conv_helium_case(t, 8, 8, 12, 12, 3, 3, 1, 1, 1, 1, 1, 0, 0, 1, "U-Net 3x3 8 -> 8: fields copied, inside ones by rows");
  conv_helium_case(t, 37, 9, 5, 3, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, "1x1, 37 inputs (a predicated last group), 9 outputs");
  conv_helium_case(t, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 0, "1 x 1 x 1");
  conv_helium_case(t, 5, 7, 4, 3, 5, 5, 1, 1, 2, 2, 1, 1, 1, 0, "padding on every side wider than the input");
  conv_helium_case(t, 6, 5, 11, 13, 3, 3, 1, 2, 2, 2, 2, 0, 0, 0, "dilation 2, stride 1 x 2, padding 2");
  conv_helium_case(t, 16, 16, 1, 60, 1, 3, 1, 1, 0, 1, 1, 0, 0, 1, "1-D: one row, k3, padding 1");
  conv_helium_case(t, 4, 8, 1, 21, 1, 6, 1, 2, 0, 2, 1, 0, 0, 0, "1-D: strided 1 x 6 with padding");
  for (int i = 0; i < CMX_SUITE_CASES; ++i) {
    const int32_t kh = between(1, 5), kw = between(1, 5), dilation = rnd() % 5 == 0 ? 2 : 1;
    const int32_t pad_h = between(0, kh - 1), pad_w = between(0, kw - 1);
    conv_helium_case(t, between(1, 48), between(1, MAX_CH), between(1, 14), between(1, 14), kh, kw, between(1, 3),
                     between(1, 3), pad_h, pad_w, dilation, rnd() % 5 == 0, rnd() % 7 == 0, 0, "random");
  }
}
#endif

/* cmx_requantize_right (SMMULR on twice the accumulator) against arm_nn_requantize, the int32
 * results compared, over accumulators anywhere inside (-2^30, 2^30) the kernels give it
 * (cmx_accumulators_small), every right shift and multiplier; then cmx_accumulators_small's edge:
 * a bias at the room it leaves takes the form, one past it does not. */
static void requantize_one(tally* t, int32_t acc, int32_t m, int32_t s, const char* name) {
  const uint64_t t0 = cmx_platform_counter();
  const int32_t want = arm_nn_requantize(acc, m, s);
  const uint64_t t1 = cmx_platform_counter();
  const int32_t got = cmx_requantize_right(acc, m, -s);
  const uint64_t t2 = cmx_platform_counter();
  if (record(t, "requantize", name, t1 - t0, t2 - t1, 1, want == got)) {
    snprintf(t->first_failure, sizeof(t->first_failure), "%s acc %ld m %ld shift %d: %ld vs %ld", name, (long)acc,
             (long)m, (int)s, (long)want, (long)got);
  }
}

static void requantize_suite(tally* t) {
  const int32_t top = (1 << 30) - 1;
  requantize_one(t, top, 0x7FFFFFFF, -1, "the largest accumulator, multiplier and the least shift");
  requantize_one(t, -top, 0x7FFFFFFF, -1, "the most negative accumulator");
  requantize_one(t, -top, 0x40000000, -31, "the least multiplier, the largest shift");
  requantize_one(t, -1, 0x40000000, -1, "minus one: a tie rounded away from zero");
  requantize_one(t, 1, 0x40000000, -1, "one: a tie rounded away from zero");
  requantize_one(t, -3, 0x40000000, -2, "a negative tie below a multiple");
  for (int i = 0; i < 4 * CMX_SUITE_CASES; ++i) {
    int32_t acc = (int32_t)(rnd() & 0x3FFFFFFFu);
    if (i % 4 == 1) acc >>= between(0, 29); /* small accumulators too: most layers' */
    if (rnd() & 1) acc = -acc;
    const int32_t m = (int32_t)(0x40000000u + (rnd() & 0x3FFFFFFFu));
    requantize_one(t, acc, m, between(-31, -1), "random");
  }
  /* the bound: 9 terms at an offset of 128 leave 2^30 - 1 - 9 * 256 * 128 */
  int32_t b[2] = {(1 << 30) - 1 - 9 * 256 * 128, 0};
  const int at_room = cmx_accumulators_small(b, 2, 9, 128);
  b[0] = -b[0];
  const int at_minus_room = cmx_accumulators_small(b, 2, 9, -128);
  b[1] = (1 << 30) - 9 * 256 * 128;
  const int past_room = cmx_accumulators_small(b, 2, 9, 128);
  const int no_room = cmx_accumulators_small(NULL, 0, 65536, 0); /* 65536 * 128 * 128 = 2^30 */
  if (record(t, "requantize", "the accumulator bound: a bias at the room, one past it, terms past 2^30", 0, 0, 0,
             at_room && at_minus_room && !past_room && !no_room)) {
    snprintf(t->first_failure, sizeof(t->first_failure), "bound: %d %d %d %d", at_room, at_minus_room, past_room,
             no_room);
  }
}

/* cmx_add_s8 against arm_elementwise_add_s8: n elements, quantization as an add's (input multipliers
 * below one, left shift 16-22), or (slow 1) any shift and left shift, which takes CMSIS-NN's own, or
 * (slow 2) as TFLite quantizes a residual add. */
static void add_case(tally* t, int32_t n, int slow, const char* name) {
  for (int32_t i = 0; i < n; ++i) {
    input[i] = (int8_t)rnd();
    filter[i] = (int8_t)rnd();
  }
  const int32_t off1 = between(-127, 128), off2 = between(-127, 128), out_off = between(-128, 127);
  int32_t m1 = (int32_t)(0x40000000u + (rnd() & 0x3FFFFFFFu));
  const int32_t m2 = (int32_t)(0x40000000u + (rnd() & 0x3FFFFFFFu));
  const int32_t mo = (int32_t)(0x40000000u + (rnd() & 0x3FFFFFFFu));
  int32_t s1 = slow == 1 ? between(-8, 2) : between(-8, -1);
  const int32_t s2 = slow == 1 ? between(-8, 2) : between(-8, -1);
  const int32_t so = slow == 1 ? between(-24, 1) : between(-24, -12);
  const int32_t left = slow == 1 ? between(0, 24) : between(16, 22);
  cmsis_nn_activation act = random_activation(0);
  if (slow == 2) { /* as TFLite quantizes a residual add (ResNet-8's): input 1 at 0.5, shift 0; all of int8 */
    m1 = 1 << 30, s1 = 0, act.min = -128, act.max = 127;
  }
  const uint64_t t0 = cmx_platform_counter();
  arm_elementwise_add_s8(input, filter, off1, m1, s1, off2, m2, s2, left, out_cmsis, out_off, mo, so, act.min,
                         act.max, n);
  const uint64_t t1 = cmx_platform_counter();
  cmx_add_s8(input, filter, off1, m1, s1, off2, m2, s2, left, out_cmx, out_off, mo, so, act.min, act.max, n);
  const uint64_t t2 = cmx_platform_counter();
  int32_t at = 0;
  while (at < n && out_cmsis[at] == out_cmx[at]) ++at;
  if (record(t, "add", name, t1 - t0, t2 - t1, n, at == n)) {
    snprintf(t->first_failure, sizeof(t->first_failure), "%s n %d: element %d %d vs %d (shifts %d %d %d, left %d)",
             name, (int)n, (int)at, out_cmsis[at], out_cmx[at], (int)s1, (int)s2, (int)so, (int)left);
  }
}

static void add_suite(tally* t) {
  add_case(t, 4096, 2, "ResNet-8: 16 x 16 x 16, input 1 at 0.5 (shift 0), all of int8");
  add_case(t, 4096, 0, "4096 elements, right shifts, an activation range or all of int8");
  add_case(t, 1, 0, "one element");
  add_case(t, 7, 0, "seven: a paired block and a tail of three");
  for (int i = 0; i < CMX_SUITE_CASES; ++i) add_case(t, between(1, 300), (int)(rnd() % 3), "random");
}

/* cmx_softmax_s8 (its table) against arm_softmax_s8: rows x row_size int8 scores, a softmax's
 * quantization as upstream makes it (multiplier and shift from the input scale, diff_min from them);
 * wide (0) or narrow (1) score ranges, so that diff_min cuts some elements and not others. */
static void softmax_case(tally* t, int32_t rows, int32_t row_size, int narrow, const char* name) {
  const int32_t n = rows * row_size;
  if (n > MAX_IN || n > MAX_OUT) return;
  const int32_t spread = narrow ? between(1, 40) : 256;
  for (int32_t i = 0; i < n; ++i) input[i] = (int8_t)(127 - (int32_t)(rnd() % (uint32_t)spread));
  const int32_t mult = (int32_t)(0x40000000u + (rnd() & 0x3FFFFFFFu));
  const int32_t shift = between(16, 26);
  const int32_t diff_min = -between(1, 400);
  static int32_t table[CMX_SOFTMAX_TABLE];
  const uint64_t t0 = cmx_platform_counter();
  arm_softmax_s8(input, rows, row_size, mult, shift, diff_min, out_cmsis);
  const uint64_t t1 = cmx_platform_counter();
  arm_cmsis_nn_status status = cmx_softmax_s8_table(mult, shift, diff_min, table);
  if (status == ARM_CMSIS_NN_SUCCESS) status = cmx_softmax_s8(input, rows, row_size, diff_min, table, out_cmx);
  const uint64_t t2 = cmx_platform_counter();
  int32_t at = 0;
  while (at < n && out_cmsis[at] == out_cmx[at]) ++at;
  if (record(t, "softmax", name, t1 - t0, t2 - t1, n, at == n && status == ARM_CMSIS_NN_SUCCESS)) {
    snprintf(t->first_failure, sizeof(t->first_failure), "%s %dx%d: element %d %d vs %d (mult %ld shift %d diff_min %d)",
             name, (int)rows, (int)row_size, (int)at, at < n ? out_cmsis[at] : 0, at < n ? out_cmx[at] : 0, (long)mult,
             (int)shift, (int)diff_min);
  }
}

static void softmax_suite(tally* t) {
  softmax_case(t, 160, 49, 0, "attention: 4 heads x 40 queries over 49 keys");
  softmax_case(t, 1, 10, 0, "a classifier's 10 outputs");
  softmax_case(t, 1, 1, 0, "one element");
  softmax_case(t, 8, 64, 1, "narrow scores: every element inside diff_min");
  for (int i = 0; i < CMX_SUITE_CASES; ++i) softmax_case(t, between(1, 16), between(1, 100), (int)(rnd() & 1), "random");
}

/* cmx_avgpool_s8 against arm_avgpool_s8: an image of ch channels, a window, stride and padding (a window
 * larger than the image with padding 0: a global pool); values near one end of int8 or anywhere, so that
 * sums over many positions run past an int16 lane's 256 values and round on both sides of zero. */
static void avgpool_case(tally* t, int32_t n, int32_t ch, int32_t in_h, int32_t in_w, int32_t kh, int32_t kw,
                         int32_t stride, int32_t pad, const char* name) {
  const int32_t out_h = (in_h + 2 * pad - kh) / stride + 1, out_w = (in_w + 2 * pad - kw) / stride + 1;
  if (out_h < 1 || out_w < 1 || n * in_h * in_w * ch > MAX_IN || n * out_h * out_w * ch > MAX_OUT || pad >= kh ||
      pad >= kw) {
    return;
  }
  const int32_t bias = (int32_t)(rnd() % 3) - 1; /* 0: any value; -1, 1: near -128 or 127 */
  for (int32_t i = 0; i < n * in_h * in_w * ch; ++i) {
    input[i] = (int8_t)(bias ? bias * 120 + (int32_t)(rnd() % 8) * bias * -1 : (int32_t)(int8_t)rnd());
  }
  const cmsis_nn_pool_params pp = {{stride, stride}, {pad, pad}, random_activation(0)};
  const cmsis_nn_dims in_d = {n, in_h, in_w, ch}, f_d = {1, kh, kw, 1}, out_d = {n, out_h, out_w, ch};
  const cmsis_nn_context ctx = {scratch, arm_avgpool_s8_get_buffer_size(out_w, ch)};
  const uint64_t t0 = cmx_platform_counter();
  const arm_cmsis_nn_status a = arm_avgpool_s8(&ctx, &pp, &in_d, input, &f_d, &out_d, out_cmsis);
  const uint64_t t1 = cmx_platform_counter();
  const arm_cmsis_nn_status b = cmx_avgpool_s8(&ctx, &pp, &in_d, input, &f_d, &out_d, out_cmx);
  const uint64_t t2 = cmx_platform_counter();
  const int32_t total = n * out_h * out_w * ch;
  int32_t at = 0;
  while (at < total && out_cmsis[at] == out_cmx[at]) ++at;
  if (record(t, "avgpool", name, t1 - t0, t2 - t1, total, at == total && a == b)) {
    snprintf(t->first_failure, sizeof(t->first_failure), "%s %dx%dx%dx%d k%dx%d s%d p%d: element %d %d vs %d", name,
             (int)n, (int)in_h, (int)in_w, (int)ch, (int)kh, (int)kw, (int)stride, (int)pad, (int)at,
             at < total ? out_cmsis[at] : 0, at < total ? out_cmx[at] : 0);
  }
}

static void avgpool_suite(tally* t) {
  avgpool_case(t, 1, 64, 25, 5, 25, 5, 1, 0, "DS-CNN's global pool: 25 x 5 x 64");
  avgpool_case(t, 1, 64, 8, 8, 8, 8, 1, 0, "ResNet-8's global pool: 8 x 8 x 64");
  avgpool_case(t, 1, 8, 40, 25, 40, 25, 1, 0, "1,000 positions: int16 lanes moved into int32 three times");
  avgpool_case(t, 1, 16, 12, 12, 3, 3, 2, 1, "3 x 3, stride 2, padding 1");
  avgpool_case(t, 2, 12, 6, 6, 2, 2, 2, 0, "a batch of two, 2 x 2");
  avgpool_case(t, 1, 6, 5, 5, 5, 5, 1, 0, "six channels: arm_avgpool_s8 itself");
  const int32_t named = t->cases;
  for (int i = 0; t->cases < named + CMX_SUITE_CASES && i < 10 * CMX_SUITE_CASES; ++i) { /* shapes that fit */
    const int32_t kh = between(1, 5), kw = between(1, 5);
    avgpool_case(t, between(1, 2), 4 * between(1, 16) + (rnd() % 8 == 0 ? between(1, 3) : 0), between(kh, 16),
                 between(kw, 16), kh, kw, between(1, 3), between(0, (kh < kw ? kh : kw) - 1), "random");
  }
}

/* cmx_lut_s8 against the table read one value at a time (its definition): random tables and counts, the
 * output in place or apart (Helium gathers sixteen values at a time and predicates the tail). */
static void lut_case(tally* t, int32_t n, int in_place, const char* name) {
  if (n > MAX_IN || n > MAX_OUT) return;
  static int8_t table[256];
  for (int32_t i = 0; i < 256; ++i) table[i] = (int8_t)rnd();
  for (int32_t i = 0; i < n; ++i) input[i] = (int8_t)rnd();
  const uint64_t t0 = cmx_platform_counter();
  for (int32_t i = 0; i < n; ++i) out_cmsis[i] = table[input[i] + 128];
  const uint64_t t1 = cmx_platform_counter();
  int8_t* out = in_place ? input : out_cmx;
  const arm_cmsis_nn_status status = cmx_lut_s8(input, out, n, table);
  const uint64_t t2 = cmx_platform_counter();
  int32_t at = 0;
  while (at < n && out_cmsis[at] == out[at]) ++at;
  if (record(t, "lut", name, t1 - t0, t2 - t1, n, at == n && status == ARM_CMSIS_NN_SUCCESS)) {
    snprintf(t->first_failure, sizeof(t->first_failure), "%s n %d in place %d: element %d %d vs %d", name, (int)n,
             in_place, (int)at, at < n ? out_cmsis[at] : 0, at < n ? out[at] : 0);
  }
}

static void lut_suite(tally* t) {
  lut_case(t, 4096, 0, "a 16 x 16 x 16 hardswish clamp");
  lut_case(t, 4096, 1, "the same in place");
  lut_case(t, 1, 0, "one element");
  lut_case(t, 17, 1, "seventeen in place: a vector and a predicated tail of one");
  for (int i = 0; i < CMX_SUITE_CASES; ++i) lut_case(t, between(1, 600), (int)(rnd() & 1), "random");
}

/* cmx_narrow_s16_s8 against its definition (lowest plus the thresholds at or below the value, counted one by
 * one): random staircases (steps of 0 to 255, spacings from 0 up, as a requantization's), the guess its
 * multiplier gives right, or a random one (the walk still lands), the output over its input or apart. */
static void narrow_case(tally* t, int32_t n, int32_t steps, int32_t spacing, int wrong_guess, int in_place,
                        const char* name) {
  static int16_t values[MAX_IN / 2] __attribute__((aligned(4))), thresholds[255];
  if (n > MAX_IN / 2) return;
  int32_t at_value = between(-32768, 32767 - steps * spacing);
  for (int32_t j = 0; j < steps; ++j) {
    thresholds[j] = (int16_t)at_value;
    at_value += spacing > 1 ? between(spacing - 1, spacing + 1) : between(0, spacing);
    if (at_value > 32767) at_value = 32767;
  }
  const int32_t lowest = between(-128, 127 - steps);
  int32_t multiplier = 0;
  if (steps > 1 && thresholds[steps - 1] > thresholds[0]) {
    const int32_t m = (int32_t)(((int64_t)(steps - 1) << 15) / (thresholds[steps - 1] - thresholds[0]));
    multiplier = m > 32767 ? 32767 : m;
  } else if (steps > 1) {
    multiplier = 32767;
  }
  if (wrong_guess) multiplier = between(0, 32767);
  for (int32_t i = 0; i < n; ++i) values[i] = (int16_t)between(-32768, 32767);
  const uint64_t t0 = cmx_platform_counter();
  for (int32_t i = 0; i < n; ++i) {
    int32_t k = 0;
    while (k < steps && thresholds[k] <= values[i]) ++k;
    out_cmsis[i] = (int8_t)(lowest + k);
  }
  const uint64_t t1 = cmx_platform_counter();
  int8_t* out = in_place ? (int8_t*)values : out_cmx;
  const arm_cmsis_nn_status status = cmx_narrow_s16_s8(values, out, n, thresholds, steps, lowest, multiplier, 15);
  const uint64_t t2 = cmx_platform_counter();
  int32_t at = 0;
  while (at < n && out_cmsis[at] == out[at]) ++at;
  if (record(t, "narrow", name, t1 - t0, t2 - t1, n, at == n && status == ARM_CMSIS_NN_SUCCESS)) {
    snprintf(t->first_failure, sizeof(t->first_failure), "%s n %d steps %d spacing %d guess %d: element %d %d vs %d",
             name, (int)n, (int)steps, (int)spacing, (int)multiplier, (int)at, at < n ? out_cmsis[at] : 0,
             at < n ? out[at] : 0);
  }
}

static void narrow_suite(tally* t) {
  narrow_case(t, 4096, 255, 128, 0, 0, "the denoiser's conv1 into conv2: 4,096 values, 255 steps 128 apart");
  narrow_case(t, 4096, 255, 128, 0, 1, "the same in place");
  narrow_case(t, 4096, 255, 0, 0, 0, "every step at one value");
  narrow_case(t, 7, 0, 1, 0, 1, "no step: one value for all, seven in place (a vector and a tail of three)");
  narrow_case(t, 1, 255, 1, 1, 0, "one element, steps 1 apart, a wrong guess");
  for (int i = 0; i < CMX_SUITE_CASES; ++i) {
    const int32_t steps = between(0, 255), spacing = between(0, 250);
    narrow_case(t, between(1, 600), steps, spacing, rnd() % 4 == 0, (int)(rnd() & 1), "random");
  }
}

/* One line per kernel; 1 when any case differed. */
static int report(const char* kernel, const tally* t) {
  char a[22], b[22];
  snprintf(line, sizeof(line), "cmx-kernels: %s cases=%d equal=%d cmsis_%s=%s cmx_%s=%s\n", kernel, (int)t->cases,
           (int)t->equal, cmx_platform_counter_name(), u64(t->cmsis, a), cmx_platform_counter_name(), u64(t->cmx, b));
  say();
  if (t->equal == t->cases) return 0;
  snprintf(line, sizeof(line), "cmx-kernels: %s first difference: %s\n", kernel, t->first_failure);
  say();
  return 1;
}

int main(void) {
  cmx_platform_init();
  tally conv = {0}, conv_2d = {0}, depthwise = {0}, planar = {0}, grouped = {0}, transpose = {0}, fc = {0};
  tally requantize = {0}, add = {0}, softmax = {0}, avgpool = {0}, lut = {0}, copy_rows = {0}, narrow = {0};
  conv_row_suite(&conv);
  conv_2d_suite(&conv_2d);
  depthwise_suite(&depthwise);
  depthwise_planar_suite(&planar);
  transpose_suite(&transpose);
  fc_suite(&fc);
  requantize_suite(&requantize);
  depthwise_grouped_suite(&grouped); /* last: the other kernels' seeded cases as before them */
#if defined(ARM_MATH_MVEI)
  tally conv_helium = {0};
  conv_helium_suite(&conv_helium);
#endif
  add_suite(&add);
  softmax_suite(&softmax);
  avgpool_suite(&avgpool); /* last: the other kernels' seeded cases as before it */
#if !defined(ARM_MATH_MVEI)
  tally fc_s4 = {0};
  fc_s4_suite(&fc_s4); /* after them: their seeded cases as before */
#endif
  lut_suite(&lut); /* last: the other kernels' seeded cases as before it */
  copy_rows_suite(&copy_rows); /* after them: their seeded cases as before */
  narrow_suite(&narrow); /* after them: their seeded cases as before */
  int failed = report("requantize", &requantize);
  failed |= report("conv_row", &conv);
  failed |= report("conv_row_2d", &conv_2d);
  failed |= report("depthwise_3x3", &depthwise);
  failed |= report("depthwise_3x3_planar", &planar);
  failed |= report("depthwise_3x3_grouped", &grouped);
  failed |= report("transpose", &transpose);
  failed |= report("fully_connected", &fc);
  failed |= report("add", &add);
  failed |= report("softmax", &softmax);
  failed |= report("avgpool", &avgpool);
  failed |= report("lut", &lut);
  failed |= report("narrow", &narrow);
  failed |= report("copy_rows", &copy_rows);
#if defined(ARM_MATH_MVEI)
  failed |= report("conv_helium", &conv_helium);
#else
  failed |= report("fully_connected_s4", &fc_s4);
#endif
  cmx_platform_puts(failed ? "cmx-kernels: FAIL\n" : "cmx-kernels: PASS\n");
  cmx_platform_exit(failed);
  return failed;
}
