/* Generated from cmx_gen/lower/delegate/plan_fields.py by `python -m cmx_gen.lower.delegate.layer_kinds`:
 * edit the records there, not this file (tests/lower/test_layer_kinds.py fails when it is stale). */
#pragma once

#include "arm_nn_types.h"
#include "cmx_nn.h"

typedef struct {
  cmx_layer_head head;
  int32_t input, output, weight, bias, multipliers, shifts, scratch, scratch_bytes;
  cmsis_nn_conv_params params;
  cmsis_nn_dims input_dims, filter_dims, bias_dims, output_dims;
} cmx_layer_conv;

/* cmx_conv_helium_s8 (kernels/nn/): a convolution of one group on a Helium core, weight in
 * cmx_fully_connected_s8's layout, constants (kernel sums, multipliers, shifts) in its own. */
typedef struct {
  cmx_layer_head head;
  int32_t input, output, weight, constants, scratch, scratch_bytes;
  cmsis_nn_conv_params params;
  cmsis_nn_dims input_dims, filter_dims, bias_dims, output_dims;
} cmx_layer_conv_helium;

/* cmx_conv_row_s8 (kernels/nn/), a convolution of one group on a DSP core; weight and constants (biases,
 * multipliers, shifts by channel pair) in its layouts. */
typedef struct {
  cmx_layer_head head;
  int32_t input, output, weight, constants, scratch, scratch_bytes;
  cmx_conv_row_params params;
} cmx_layer_conv_row;

typedef struct {
  cmx_layer_head head;
  int32_t input, output, weight, bias, multipliers, shifts, scratch, scratch_bytes;
  cmsis_nn_dw_conv_params params;
  cmsis_nn_dims input_dims, filter_dims, bias_dims, output_dims;
} cmx_layer_depthwise_conv;

typedef struct {
  cmx_layer_head head;
  int32_t input, output, weight, bias, kernel_sum;
  cmsis_nn_per_tensor_quant_params quant;
  cmsis_nn_fc_params params;
  cmsis_nn_dims input_dims, filter_dims, bias_dims, output_dims;
} cmx_layer_linear;

/* arm_fully_connected_per_channel_s8: as linear, a multiplier and a shift per output channel (constants);
 * kernel_sum (the Helium path's input offset times each row's sum, plus the bias) in place of the bias there. */
typedef struct {
  cmx_layer_head head;
  int32_t input, output, weight, bias, kernel_sum, multipliers, shifts;
  cmsis_nn_fc_params params;
  cmsis_nn_dims input_dims, filter_dims, bias_dims, output_dims;
} cmx_layer_linear_per_channel;

typedef struct {
  cmx_layer_head head;
  int32_t input1, input2, output;
  int32_t input1_offset, input1_multiplier, input1_shift;
  int32_t input2_offset, input2_multiplier, input2_shift;
  int32_t left_shift, output_offset, output_multiplier, output_shift;
  int32_t act_min, act_max, block, count;
} cmx_layer_add;

typedef struct {
  cmx_layer_head head;
  int32_t input1, input2, output;
  int32_t input1_offset, input2_offset, output_offset, output_multiplier, output_shift;
  int32_t act_min, act_max, block, count;
} cmx_layer_mul;

typedef struct {
  cmx_layer_head head;
  int32_t input, output, scratch, scratch_bytes;
  cmsis_nn_pool_params params;
  cmsis_nn_dims input_dims, filter_dims, output_dims;
} cmx_layer_avg_pool;

typedef struct {
  cmx_layer_head head;
  int32_t input, output;
  cmsis_nn_pool_params params;
  cmsis_nn_dims input_dims, filter_dims, output_dims;
} cmx_layer_max_pool;

/* ranges: a masked softmax's allowed [lo, hi) columns, int32 pairs, row r taking pair r % mask_rows
 * (a constant attention mask); -1: every column. */
typedef struct {
  cmx_layer_head head;
  int32_t input, output, rows, row_size, multiplier, shift, diff_min, ranges, mask_rows;
} cmx_layer_softmax;

/* arm_softmax_s16 over rows of row_size int16 values into Q0.15; exp_table, one_by_one_table: its two
 * tables, 513 int16 each (TFLite's gen_lut: exp over [-10, 0], 1 / (1 + x) over [0, 1]). */
typedef struct {
  cmx_layer_head head;
  int32_t input, output, rows, row_size, multiplier, shift, exp_table, one_by_one_table;
} cmx_layer_softmax_s16;

/* arm_nn_activation_s16: sigmoid (type 0) or tanh (1) of `count` int16 values read as Q3.12 after
 * `left_shift`, into Q0.15. */
typedef struct {
  cmx_layer_head head;
  int32_t input, output, count, left_shift, type;
} cmx_layer_activation_s16;

typedef struct {
  cmx_layer_head head;
  int32_t input, output, nbytes;
} cmx_layer_copy;

/* A box of an NHWC image moved between two row strides: `rows` runs of `row_bytes`, from
 * `input_at` bytes into the input, `input_stride` apart, to `output_at` bytes into the output,
 * `output_stride` apart (patch-based execution gathers each patch's input and scatters its output
 * with it; cmx_gen/lower/delegate/patches.py). */
typedef struct {
  cmx_layer_head head;
  int32_t input, input_at, output, output_at, rows, row_bytes, input_stride, output_stride;
} cmx_layer_copy_region;

/* A layout change (a _clone_dim_order between dim orders): cmx_transpose_s8. */
typedef struct {
  cmx_layer_head head;
  int32_t input, output, batches, rows, cols;
} cmx_layer_transpose;

/* arm_lstm_unidirectional_s8: cmsis_nn_lstm_params without its pointers (each gate's weights and
 * effective biases are plan constants; the runtime builds the struct); scratch holds the int16 cell
 * state and the two int16 gate buffers, batch_size * hidden_size each, and, with `reverse` the steps run last to first (a bidirectional layer's backward direction),
 * the input's and output's steps in reverse order (the kernel runs forwards only). */
typedef struct {
  cmx_layer_head head;
  int32_t input, output, scratch;
  int32_t time_major, batch_size, time_steps, input_size, hidden_size, reverse, input_offset, forget_to_cell_multiplier, forget_to_cell_shift, input_to_cell_multiplier, input_to_cell_shift, cell_clip, cell_scale_power, output_multiplier, output_shift, output_offset;
  int32_t forget_input_multiplier, forget_input_shift, forget_input_weights, forget_input_bias, forget_hidden_multiplier, forget_hidden_shift, forget_hidden_weights, forget_hidden_bias, forget_activation;
  int32_t input_input_multiplier, input_input_shift, input_input_weights, input_input_bias, input_hidden_multiplier, input_hidden_shift, input_hidden_weights, input_hidden_bias, input_activation;
  int32_t cell_input_multiplier, cell_input_shift, cell_input_weights, cell_input_bias, cell_hidden_multiplier, cell_hidden_shift, cell_hidden_weights, cell_hidden_bias, cell_activation;
  int32_t output_input_multiplier, output_input_shift, output_input_weights, output_input_bias, output_hidden_multiplier, output_hidden_shift, output_hidden_weights, output_hidden_bias, output_activation;
} cmx_layer_lstm;

/* cmx_gru_s8 (kernels/nn/): cmx_gru_params without its pointers (each gate's weights and effective
 * biases are plan constants); scratch: 4 * hidden_size int16 and hidden_size int8; with `reverse` the steps run last to first (a bidirectional layer's backward direction). */
typedef struct {
  cmx_layer_head head;
  int32_t input, output, scratch;
  int32_t time_major, batch_size, time_steps, input_size, hidden_size, reverse, hidden_offset, output_offset, reset_multiplier, reset_shift, hidden_q15_multiplier, hidden_q15_shift, output_multiplier, output_shift;
  int32_t reset_input_multiplier, reset_input_shift, reset_input_weights, reset_input_bias, reset_hidden_multiplier, reset_hidden_shift, reset_hidden_weights, reset_hidden_bias;
  int32_t update_input_multiplier, update_input_shift, update_input_weights, update_input_bias, update_hidden_multiplier, update_hidden_shift, update_hidden_weights, update_hidden_bias;
  int32_t candidate_input_multiplier, candidate_input_shift, candidate_input_weights, candidate_input_bias, candidate_hidden_multiplier, candidate_hidden_shift, candidate_hidden_weights, candidate_hidden_bias;
} cmx_layer_gru;

/* cmx_layer_norm_s8 (kernels/nn/): LayerNorm over the last dimension; eps: the 64-bit epsilon term. */
typedef struct {
  cmx_layer_head head;
  int32_t input, output, rows, channels, input_offset, output_offset;
  int32_t eps_lo, eps_hi, gains, biases;
} cmx_layer_layer_norm;

/* cmx_mean_s8 (kernels/nn/): a mean over the middle of [outer][count][inner]. */
typedef struct {
  cmx_layer_head head;
  int32_t input, output, outer, count, inner, multiplier, shift, input_offset, output_offset;
} cmx_layer_mean;

/* cmx_lut_s8 (kernels/nn/): an element-wise operator as a 256-entry table. */
typedef struct {
  cmx_layer_head head;
  int32_t input, output, count, table;
} cmx_layer_lut;

/* cmx_narrow_s16_s8 (kernels/nn/): int16 in, int8 out (where an int16 layer meets an int8 one): lowest plus
 * the thresholds (table [steps] int16) at or below each input; multiplier and shift guess where to look. */
typedef struct {
  cmx_layer_head head;
  int32_t input, output, count, table, steps, lowest, multiplier, shift;
} cmx_layer_narrow_s16;

/* arm_batch_matmul_s8: input1 [batches][rows][inner] times input2 [batches][inner][cols] (or, when
 * transposed, [batches][cols][inner]); scratch: input2 transposed unless it is, then the MVE kernel's
 * cols int32 sums. */
typedef struct {
  cmx_layer_head head;
  int32_t input1, input2, output, scratch, batches, rows, inner, cols, transposed;
  int32_t input1_offset, input2_offset, output_offset, multiplier, shift;
} cmx_layer_bmm;

/* arm_convolve_s8 itself, for a convolution its wrapper would send to a path that refuses it. */
typedef cmx_layer_conv cmx_layer_conv_general;

/* cmx_depthwise_3x3_s8 (kernels/nn/): a 3x3 depthwise layer on a DSP core, CMSIS-NN's arguments. */
typedef cmx_layer_depthwise_conv cmx_layer_depthwise_3x3;

/* arm_convolve_wrapper_s4: weight [out][kh][kw][in] as 4-bit values, two a byte, low nibble first. */
typedef cmx_layer_conv cmx_layer_conv_s4;

/* arm_depthwise_conv_wrapper_s4: weight [kh][kw][channels] as 4-bit values, two a byte, low nibble first. */
typedef cmx_layer_depthwise_conv cmx_layer_depthwise_s4;

/* arm_fully_connected_s4: weight [out][in] as 4-bit values, two a byte, low nibble first. */
typedef cmx_layer_linear cmx_layer_linear_s4;

/* cmx_fully_connected_s4 (kernels/nn/): a fully connected layer with 4-bit weights on a DSP core, CMSIS-NN's
 * arguments, weight in its layout (kernel_sum unused). */
typedef cmx_layer_linear cmx_layer_fully_connected_s4;

/* arm_convolve_wrapper_s16: int16 input and output, weight [out][kh][kw][in] int8, bias int64. */
typedef cmx_layer_conv cmx_layer_conv_s16;

/* arm_depthwise_conv_wrapper_s16: int16 input and output, weight [1][kh][kw][channels] int8, bias int64. */
typedef cmx_layer_depthwise_conv cmx_layer_depthwise_s16;

/* arm_elementwise_add_s16: int16 inputs and output, offsets 0, left_shift 15. */
typedef cmx_layer_add cmx_layer_add_s16;

/* arm_elementwise_mul_s16: int16 inputs and output, offsets 0. */
typedef cmx_layer_mul cmx_layer_mul_s16;

/* arm_avgpool_s16: int16 input and output (one scale). */
typedef cmx_layer_avg_pool cmx_layer_avg_pool_s16;

/* arm_max_pool_s16: int16 input and output (one scale). */
typedef cmx_layer_max_pool cmx_layer_max_pool_s16;

/* cmx_lut_s8_s16 (kernels/nn/): int8 in, int16 out (where an int8 layer meets an int16 one); table [256] int16. */
typedef cmx_layer_lut cmx_layer_lut_s16;

/* arm_fully_connected_s16: int16 input and output, weight [out][in] int8, bias int64. */
typedef cmx_layer_linear cmx_layer_linear_s16;

/* arm_batch_matmul_s16: int16 operands and output, offsets 0; scratch: b transposed (int16), unless it is. */
typedef cmx_layer_bmm cmx_layer_bmm_s16;

/* arm_lstm_unidirectional_s16: int16 input and output (offsets 0), int64 effective biases; scratch as
 * lstm's, the reversed steps int16. */
typedef cmx_layer_lstm cmx_layer_lstm_s16;

/* cmx_fully_connected_s8 (kernels/nn/): a fully connected layer on a DSP core, CMSIS-NN's arguments,
 * weight in its layout. */
typedef cmx_layer_linear cmx_layer_fully_connected;
