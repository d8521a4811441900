/* cmx-gen's own int8 kernels (issue 33), called by its CMSIS-NN backend where the plan chose them.
 *
 * Each is bit-exact with the CMSIS-NN function it replaces by construction: the same int32
 * accumulation (bias + sum of weight * (input + input_offset)) and the same requantization
 * (arm_nn_requantize, rounding included); kernels/tests/ compares them byte for byte on the
 * target over random shapes. */
#pragma once

#include <stdint.h>

#include "arm_nn_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A convolution whose every output position reads runs of input positions a fixed distance apart:
 * a 1-D convolution (height 1, one group) at any stride, padding and dilation; a 2-D one (one
 * group, dilation 1, any kernel, stride and padding) computed an output row at a time; or a 1x1
 * convolution at stride 1 without padding read as one row of H*W positions. NHWC int8.
 *
 * Instead of CMSIS-NN's im2col (a copy of every receptive field, then a widening of each copy),
 * a chunk of input positions is widened to int16 once, with the input offset added and the
 * padding as zeros, and the output columns read their fields in place. A 2-D chunk is widened
 * column by column (each input position's `rows` kernel rows of in_ch values together), so an
 * output's field is one contiguous run there too. Weights are the plan's
 * (cmx_conv_row_s8_weights): per output channel, the field's values in the widened order (kernel
 * column, kernel row, channel; dilated 1-D: one run of in_ch values per tap) padded with zeros to
 * a multiple of 4 (per run), row_bytes in all; each group of four stored as (w0, w2, w1, w3) so
 * one SXTB16 and one SXTB16 ROR 8 give the pairs (w0, w1) and (w2, w3) that line up with the
 * widened input; the rows of each channel pair interleaved four bytes at a time, so one LDRD
 * reads both. Same size as CMSIS-NN's filter plus the padding to 4; `wide`: the same layout of
 * int16 values in order (w0, w1, w2, w3), twice the size, 14 instructions per 16 MACs instead
 * of 19. */
typedef struct {
  int32_t positions;    /* output positions of an output row */
  int32_t in_positions; /* input positions of an input row */
  int32_t in_ch;
  int32_t out_ch;
  int32_t kernel;    /* kernel positions of a kernel row */
  int32_t stride;    /* input positions between two output positions */
  int32_t pad;       /* zero positions before the first input position */
  int32_t dilation;  /* input positions between two taps; > 1 needs dilation * in_ch even and rows 1 */
  int32_t rows;      /* kernel rows: 1 for a 1-D or 1x1 convolution */
  int32_t out_rows;  /* output rows: 1 for a 1-D or 1x1 convolution */
  int32_t in_rows;   /* input rows: 1 for a 1-D or 1x1 convolution */
  int32_t row_stride; /* input rows between two output rows */
  int32_t row_pad;   /* zero rows above the first input row */
  int32_t wide;      /* 1: the weights are int16 (twice the bytes; no widening in the inner loop); not dilated */
  int32_t row_bytes; /* weight bytes per output channel (cmx_conv_row_s8_row_bytes) */
  int32_t chunk;     /* output positions per widened chunk (even, >= 2) */
  int32_t input_offset;
  int32_t output_offset;
  int32_t act_min;
  int32_t act_max;
} cmx_conv_row_params;

/* Weight bytes per output channel: rows * kernel * in_ch rounded up to 4; dilated, each tap's
 * in_ch rounded up to 4. */
int32_t cmx_conv_row_s8_row_bytes(const cmx_conv_row_params* p);

/* Scratch the kernel needs, in bytes: one widened chunk (rows values per position) and a few past it. */
int32_t cmx_conv_row_s8_scratch_bytes(const cmx_conv_row_params* p);

/* bias may be NULL. multiplier and shift per output channel, as CMSIS-NN's. */
arm_cmsis_nn_status cmx_conv_row_s8(const cmx_conv_row_params* p, const int8_t* input, const int8_t* weights,
                                    const int32_t* bias, const int32_t* multiplier, const int32_t* shift,
                                    int16_t* scratch, int8_t* output);

/* Lays a CMSIS-NN filter ([out_ch][rows * kernel * in_ch]) out as cmx_conv_row_s8 reads it
 * (out_ch * row_bytes bytes, or int16 values when wide, 2-byte aligned); for tests
 * (cmx-gen's plan does the same in Python, cmx_gen/lower/delegate/layers.py). */
void cmx_conv_row_s8_weights(const cmx_conv_row_params* p, const int8_t* filter, int8_t* out);

/* A 3x3 depthwise convolution with one output channel per input channel (ch_mult 1), any stride
 * and padding, dilation 1: arm_depthwise_conv_wrapper_s8's arguments and result (bias may be NULL).
 * On a DSP core without Helium, a horizontal stride of 1 or 2 and ctx holding
 * cmx_depthwise_3x3_s8_scratch_bytes (word-aligned), it runs its planar path (a channel's rows at a
 * time, cmx_depthwise_3x3_s8.c); with less (ctx may be NULL), four channels a pixel.
 * ARM_CMSIS_NN_ARG_ERROR for any other shape. */
int32_t cmx_depthwise_3x3_s8_scratch_bytes(const cmsis_nn_dw_conv_params* params, const cmsis_nn_dims* input_dims,
                                           const cmsis_nn_dims* output_dims);
arm_cmsis_nn_status cmx_depthwise_3x3_s8(const cmsis_nn_context* ctx, const cmsis_nn_dw_conv_params* params,
                                         const cmsis_nn_per_channel_quant_params* quant, const cmsis_nn_dims* input_dims,
                                         const int8_t* input, const cmsis_nn_dims* filter_dims, const int8_t* filter,
                                         const int32_t* bias, const cmsis_nn_dims* output_dims, int8_t* output);

/* An int8 fully connected layer: arm_fully_connected_s8's arguments and result (per-tensor
 * quantization, filter_offset 0; bias may be NULL; no scratch), its weights in the plan's layout
 * (cmx_fully_connected_s8_weights). kernel_sum: the cortex_m pass's sums (bias + input offset times
 * each row's sum), which Helium reads as CMSIS-NN's MVE path does; the DSP cores read bias and need
 * a multiple of 4 columns. ARM_CMSIS_NN_ARG_ERROR otherwise. */
arm_cmsis_nn_status cmx_fully_connected_s8(const cmsis_nn_fc_params* params,
                                           const cmsis_nn_per_tensor_quant_params* quant,
                                           const cmsis_nn_dims* input_dims, const int8_t* input,
                                           const cmsis_nn_dims* filter_dims, const int8_t* weights,
                                           const int32_t* bias, const int32_t* kernel_sum,
                                           const cmsis_nn_dims* output_dims, int8_t* output);

/* Lays a CMSIS-NN fully connected filter ([rows][cols]) out as cmx_fully_connected_s8 reads it:
 * rows in blocks of four, each group of G columns (DSP 4, Helium 16; each row padded with zeros to
 * a multiple of G) of a block's rows side by side (row r's G bytes, then row r + 1's, ...); the last
 * rows % 4 rows each on its own. rows * cols rounded up to G bytes per row. For tests (cmx-gen's
 * plan does the same in Python, cmx_gen/lower/delegate/own_kernels.py). */
void cmx_fully_connected_s8_weights(int32_t rows, int32_t cols, const int8_t* filter, int8_t* out);

/* G: the columns of a row stored side by side with its block's other rows (the plan reads the two
 * plain defines: cmx_gen's kernel_facts.py). */
#define CMX_FC_GROUP_MVE 16
#define CMX_FC_GROUP_DSP 4
#if defined(ARM_MATH_MVEI)
#define CMX_FC_GROUP CMX_FC_GROUP_MVE
#else
#define CMX_FC_GROUP CMX_FC_GROUP_DSP
#endif

/* The bytes cmx_fully_connected_s8_weights lays `rows` x `cols` out in (each row padded to G): also
 * cmx_conv_helium_s8's weights. */
static inline int32_t cmx_fully_connected_s8_weight_bytes(int32_t rows, int32_t cols) {
  return rows * ((cols + CMX_FC_GROUP - 1) / CMX_FC_GROUP * CMX_FC_GROUP);
}

/* A convolution of one group (filter [out_ch][kh][kw][in_ch]; any stride, padding and dilation): the
 * result of arm_convolve_wrapper_s8 for it (per-channel quantization), on Helium only
 * (ARM_CMSIS_NN_NO_IMPL_ERROR elsewhere; the DSP cores run cmx_conv_row_s8). weights: the filter as
 * [out_ch][kh * kw * in_ch] in cmx_fully_connected_s8_weights' Helium layout; constants: per output
 * channel its kernel sum (bias + input offset x the sum of its weights, arm_vector_sum_s8's), its
 * multiplier and its shift, laid out by cmx_conv_helium_s8_constants. ctx:
 * cmx_conv_helium_s8_scratch_bytes bytes (none for a 1x1 convolution of stride 1 without padding).
 * ARM_CMSIS_NN_ARG_ERROR for a grouped one. */
int32_t cmx_conv_helium_s8_scratch_bytes(const cmsis_nn_conv_params* params, const cmsis_nn_dims* input_dims,
                                         const cmsis_nn_dims* filter_dims);
arm_cmsis_nn_status cmx_conv_helium_s8(const cmsis_nn_context* ctx, const cmsis_nn_conv_params* params,
                                       const cmsis_nn_dims* input_dims, const int8_t* input,
                                       const cmsis_nn_dims* filter_dims, const int8_t* weights,
                                       const int32_t* constants, const cmsis_nn_dims* output_dims, int8_t* output);

/* The channel constants as cmx_conv_helium_s8 reads them: per block of four channels their four kernel
 * sums, four multipliers, four shifts; then each of the last rows % 4 channels' sum, multiplier and
 * shift (3 x rows words). For tests (cmx-gen's plan does the same in Python,
 * cmx_gen/lower/delegate/own_kernels.py). */
void cmx_conv_helium_s8_constants(int32_t rows, const int32_t* kernel_sum, const int32_t* multiplier,
                                  const int32_t* shift, int32_t* out);

/* output[b][c][r] = input[b][r][c]: int8 [batches][rows][cols] -> [batches][cols][rows]. */
void cmx_transpose_s8(const int8_t* input, int8_t* output, int32_t batches, int32_t rows, int32_t cols);


/* A GRU layer with zero initial state (PyTorch's equations; cmx_gen/lower/gru.py has the
 * quantization, kernel_models.gru_s8 the same arithmetic on the host): CMSIS-NN has no GRU, so
 * it is built from CMSIS-NN's LSTM blocks, arm_nn_vec_mat_mul_result_acc_s8_s16 for the gates'
 * int16 Q3.12 pre-activations and arm_nn_activation_s16 for sigmoid and tanh. Input [batch][time]
 * [input_size] (time_major: [time][batch]); output the int8 hidden state of every step, the same
 * layout. reverse: the steps run from the last to the first, each output at its own step (a
 * bidirectional GRU's backward direction). scratch: 4 * hidden_size int16 and hidden_size int8. */
typedef struct {
  int32_t input_multiplier, input_shift;
  const int8_t* input_weights;  /* [hidden][input] */
  const int32_t* input_bias;    /* effective: bias + input offset times the row sums */
  int32_t hidden_multiplier, hidden_shift;
  const int8_t* hidden_weights; /* [hidden][hidden] */
  const int32_t* hidden_bias;   /* effective: (candidate: its bias) - hidden zero point times the row sums */
} cmx_gru_gate;

typedef struct {
  int32_t time_major, batch_size, time_steps, input_size, hidden_size, reverse;
  int32_t hidden_offset, output_offset;
  int32_t reset_multiplier, reset_shift;         /* r (Q0.15) x hidden part (Q3.12) -> Q3.12 */
  int32_t hidden_q15_multiplier, hidden_q15_shift; /* int8 hidden state -> Q0.15 */
  int32_t output_multiplier, output_shift;       /* (32768 - z) n + z h (Q0.30) -> int8 */
  cmx_gru_gate reset, update, candidate;
} cmx_gru_params;

arm_cmsis_nn_status cmx_gru_s8(const int8_t* input, int8_t* output, const cmx_gru_params* params, void* scratch);


/* LayerNorm over the last dimension of [rows][channels] int8, in integers (kernel_models.layer_norm_s8
 * is the same arithmetic): d = x + input_offset, S1 and S2 its sum and sum of squares,
 * R = isqrt((C S2 - S1^2 + eps) << 16), y = round((256 (C d - S1) gain / R + bias) / 2^16) + output_offset,
 * gain and bias per channel in 2^-16 output steps. */
void cmx_layer_norm_s8(const int8_t* input, int8_t* output, int32_t rows, int32_t channels, int32_t input_offset,
                       int32_t output_offset, int64_t eps, const int32_t* gains, const int32_t* biases);

/* The mean over the middle dimension of [outer][count][inner] int8: int32 sums (input offset added),
 * arm_nn_requantize, output offset. */
void cmx_mean_s8(const int8_t* input, int8_t* output, int32_t outer, int32_t count, int32_t inner,
                 int32_t multiplier, int32_t shift, int32_t input_offset, int32_t output_offset);

/* arm_elementwise_add_s8 with its arguments and its result, byte for byte: on a DSP core, where every
 * shift is right, each element's three requantizations in registers (cmx_add_s8.c); else
 * arm_elementwise_add_s8 itself. Reads and writes one element at a time, in order. */
arm_cmsis_nn_status cmx_add_s8(const int8_t* input_1, const int8_t* input_2, int32_t input_1_offset,
                               int32_t input_1_mult, int32_t input_1_shift, int32_t input_2_offset,
                               int32_t input_2_mult, int32_t input_2_shift, int32_t left_shift, int8_t* output,
                               int32_t out_offset, int32_t out_mult, int32_t out_shift, int32_t out_activation_min,
                               int32_t out_activation_max, int32_t block_size);

/* output[i] = table[input[i] + 128]: an element-wise operator the plan tabulated. */
void cmx_lut_s8(const int8_t* input, int8_t* output, int32_t count, const int8_t* table);

#ifdef __cplusplus
}
#endif
