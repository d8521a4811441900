/* cmx-gen's own int8 kernels (issue 33), called by its CMSIS-NN backend where the plan chose them.
 *
 * Each is bit-exact with the CMSIS-NN function it replaces by construction: the same int32
 * accumulation (bias + sum of weight * (input + input_offset)) and the same requantization
 * (arm_nn_requantize, rounding included); kernels/tests/ compares them byte for byte on the
 * target over random shapes.
 *
 * The contract, as arm_nnfunctions.h writes CMSIS-NN's: each function's @param says the format
 * (int8 NHWC unless said), the range the kernel accepts and who owns the memory:
 *   caller      an activation: the backend's working memory or a delegate argument, read or written
 *               in this call only
 *   plan        a constant the plan made ahead of time (cmx_gen/lower/delegate/), read-only, in flash
 *   scratch     the caller's, word-aligned, of the size the kernel's *_scratch_bytes gives; its
 *               contents are undefined before and after the call
 * and @return each status: ARM_CMSIS_NN_SUCCESS; ARM_CMSIS_NN_ARG_ERROR for arguments outside the
 * contract, checked before anything is read or written; ARM_CMSIS_NN_NO_IMPL_ERROR for a kernel built
 * for a core without the extension it is written for. The plan check (kernels/backend/cmx_plan_check.c)
 * holds every plan inside these contracts before a layer runs. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "arm_nn_types.h"
#include "cmx_nn_layout.h"

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
 * column by column (each input position's `rows` kernel rows of in_ch values together, a zero after
 * them where their count and the stride are odd: cmx_conv_row_s8_column), so an output's field is one
 * contiguous run there too, every column on a word. Weights are the plan's
 * (cmx_conv_row_s8_weights): per output channel, the field's values in the widened order (kernel
 * column, kernel row, channel, a column's zero; dilated 1-D: one run of in_ch values per tap) padded with zeros to
 * a multiple of 4 (per run), row_bytes in all; each group of four stored as (w0, w2, w1, w3) so
 * one SXTB16 and one SXTB16 ROR 8 give the pairs (w0, w1) and (w2, w3) that line up with the
 * widened input; the rows of each channel pair interleaved four bytes at a time, so one LDRD
 * reads both. Same size as CMSIS-NN's filter plus the padding to 4; `wide`: the same layout of
 * int16 values in order (w0, w1, w2, w3), twice the size, 14 instructions per 16 MACs instead
 * of 19; `wide` 2: the int8 layout in the plan, widened to the int16 one in the scratch at each call
 * (the plan's weights read once a call: for a board whose flash waits). */
/* Its parameters: cmx_conv_row_params (cmx_nn_layout.h, with the layout and scratch functions). */

/**
 * @brief The convolution above (cmx_conv_row_params), the result of arm_convolve_wrapper_s8 for it.
 * @param[in]  p          sizes >= 1; chunk even and >= 2; row_bytes = cmx_conv_row_s8_row_bytes(p);
 *                        dilation > 1 only with rows 1, not wide and dilation * in_ch even
 * @param[in]  input      caller: [in_rows][in_positions][in_ch]
 * @param[in]  weights    plan: out_ch * row_bytes bytes in cmx_conv_row_s8_weights' layout (int16 and
 *                        word-aligned when p->wide is 1)
 * @param[in]  constants  plan: cmx_conv_row_s8_constants_words(out_ch) int32, each channel's bias and CMSIS-NN's
 *                        per-channel multiplier and shift (in [-31, 31]) as cmx_conv_row_s8_constants lays them
 *                        out for p->output_offset
 * @param[in]  scratch    scratch: cmx_conv_row_s8_scratch_bytes(p) bytes
 * @param[out] output     caller: [out_rows][positions][out_ch]
 * @return     ARM_CMSIS_NN_SUCCESS; ARM_CMSIS_NN_ARG_ERROR for parameters outside the above;
 *             ARM_CMSIS_NN_NO_IMPL_ERROR on a core without the DSP extension
 */
arm_cmsis_nn_status cmx_conv_row_s8(const cmx_conv_row_params* p, const int8_t* input, const int8_t* weights,
                                    const int32_t* constants, int16_t* scratch, int8_t* output);

/**
 * @brief Scratch of cmx_depthwise_3x3_s8's banded paths (a channel's rows, or a band of rows, at a time)
 *        on a DSP core without Helium; 0 where it has none.
 * @return bytes of scratch
 */
int32_t cmx_depthwise_3x3_s8_scratch_bytes(const cmsis_nn_dw_conv_params* params, const cmsis_nn_dims* input_dims,
                                           const cmsis_nn_dims* output_dims);
/**
 * @brief A 3x3 depthwise convolution with one output channel per input channel, any stride and padding:
 *        arm_depthwise_conv_wrapper_s8's arguments and result. With ctx holding
 *        cmx_depthwise_3x3_s8_scratch_bytes (word-aligned) on a DSP core without Helium it runs a banded
 *        path (cmx_depthwise_3x3_s8.c); with less, or ctx NULL, four channels a pixel.
 * @param[in]  ctx          scratch, or NULL
 * @param[in]  params       ch_mult 1, dilation 1 x 1; offsets and activation as CMSIS-NN's
 * @param[in]  quant        plan: per-channel multipliers and shifts, [c] int32 each
 * @param[in]  input_dims   [n][h][w][c], c = output_dims->c
 * @param[in]  input        caller
 * @param[in]  filter_dims  [1][3][3][c]
 * @param[in]  filter       plan: [3][3][c] int8
 * @param[in]  bias         plan: [c] int32, or NULL for none
 * @param[in]  output_dims  [n][out_h][out_w][c]
 * @param[out] output       caller
 * @return     ARM_CMSIS_NN_SUCCESS; ARM_CMSIS_NN_ARG_ERROR for another kernel size, channel multiplier or
 *             dilation, or channels that differ
 */
arm_cmsis_nn_status cmx_depthwise_3x3_s8(const cmsis_nn_context* ctx, const cmsis_nn_dw_conv_params* params,
                                         const cmsis_nn_per_channel_quant_params* quant, const cmsis_nn_dims* input_dims,
                                         const int8_t* input, const cmsis_nn_dims* filter_dims, const int8_t* filter,
                                         const int32_t* bias, const cmsis_nn_dims* output_dims, int8_t* output);

/**
 * @brief An int8 fully connected layer: arm_fully_connected_s8's arguments and result (per-tensor
 *        quantization; no scratch), its weights in the plan's layout.
 * @param[in]  params       filter_offset 0; offsets and activation as CMSIS-NN's
 * @param[in]  quant        per-tensor multiplier and shift
 * @param[in]  input_dims   n: the batches
 * @param[in]  input        caller: [n][cols]
 * @param[in]  filter_dims  n: cols, a multiple of CMX_FC_COLS (cmx_fully_connected_s8.c)
 * @param[in]  weights      plan: cmx_fully_connected_s8_weights' layout, word-aligned
 * @param[in]  bias         plan: [rows] int32, or NULL; read by the DSP cores
 * @param[in]  kernel_sum   plan: [rows] int32, bias + input offset x each row's sum (the cortex_m pass's);
 *                          required on Helium, which reads it as CMSIS-NN's MVE path does
 * @param[in]  output_dims  c: rows
 * @param[out] output       caller: [n][rows]
 * @return     ARM_CMSIS_NN_SUCCESS; ARM_CMSIS_NN_ARG_ERROR for a filter offset, a column count or a weight
 *             alignment outside the above, or no kernel_sum on Helium; ARM_CMSIS_NN_NO_IMPL_ERROR on a core
 *             with neither DSP nor Helium
 */
arm_cmsis_nn_status cmx_fully_connected_s8(const cmsis_nn_fc_params* params,
                                           const cmsis_nn_per_tensor_quant_params* quant,
                                           const cmsis_nn_dims* input_dims, const int8_t* input,
                                           const cmsis_nn_dims* filter_dims, const int8_t* weights,
                                           const int32_t* bias, const int32_t* kernel_sum,
                                           const cmsis_nn_dims* output_dims, int8_t* output);

/**
 * @brief A fully connected layer with 4-bit weights: the result of arm_fully_connected_s4 (per-tensor
 *        quantization) on the DSP cores, its weights in cmx_fully_connected_s4_weights' layout.
 * @param[in]  params       input_offset in [-127, 128], filter_offset 0, output_offset, activation
 * @param[in]  quant        per-tensor multiplier and shift
 * @param[in]  input_dims   n: batches
 * @param[in]  input        caller: [n][cols] int8
 * @param[in]  filter_dims  n: cols, >= 1
 * @param[in]  weights      plan: cmx_fully_connected_s4_weights' layout, word-aligned
 * @param[in]  bias         plan: [rows] int32, or NULL
 * @param[in]  output_dims  c: rows, >= 1
 * @param[out] output       caller: [n][rows]
 * @return     ARM_CMSIS_NN_SUCCESS; ARM_CMSIS_NN_ARG_ERROR for a filter offset, an unaligned weight
 *             pointer or no rows or columns; ARM_CMSIS_NN_NO_IMPL_ERROR on a core without DSP or with Helium
 */
arm_cmsis_nn_status cmx_fully_connected_s4(const cmsis_nn_fc_params* params,
                                           const cmsis_nn_per_tensor_quant_params* quant,
                                           const cmsis_nn_dims* input_dims, const int8_t* input,
                                           const cmsis_nn_dims* filter_dims, const uint8_t* weights,
                                           const int32_t* bias, const cmsis_nn_dims* output_dims, int8_t* output);

/**
 * @brief Scratch of cmx_conv_helium_s8: none for a 1x1 convolution of stride 1 without padding, else a
 *        few receptive fields.
 * @return bytes of scratch
 */
int32_t cmx_conv_helium_s8_scratch_bytes(const cmsis_nn_conv_params* params, const cmsis_nn_dims* input_dims,
                                         const cmsis_nn_dims* filter_dims);

/**
 * @brief A convolution of one group (any kernel, stride, padding and dilation): the result of
 *        arm_convolve_wrapper_s8 for it (per-channel quantization), on Helium; the DSP cores run
 *        cmx_conv_row_s8.
 * @param[in]  ctx          scratch: cmx_conv_helium_s8_scratch_bytes bytes
 * @param[in]  params       offsets, stride, padding, dilation and activation as CMSIS-NN's
 * @param[in]  input_dims   [n][h][w][in_ch]
 * @param[in]  input        caller
 * @param[in]  filter_dims  [out_ch][kh][kw][in_ch]: one group
 * @param[in]  weights      plan: [out_ch][kh * kw * in_ch] in cmx_fully_connected_s8_weights' Helium layout
 * @param[in]  constants    plan: per output channel its kernel sum (bias + input offset x the sum of its
 *                          weights, arm_vector_sum_s8's), multiplier and shift (cmx_conv_helium_s8_constants)
 * @param[in]  output_dims  [n][out_h][out_w][out_ch]
 * @param[out] output       caller
 * @return     ARM_CMSIS_NN_SUCCESS; ARM_CMSIS_NN_ARG_ERROR for a grouped convolution, batches or channels
 *             that disagree, or less scratch; ARM_CMSIS_NN_NO_IMPL_ERROR on a core without Helium
 */
arm_cmsis_nn_status cmx_conv_helium_s8(const cmsis_nn_context* ctx, const cmsis_nn_conv_params* params,
                                       const cmsis_nn_dims* input_dims, const int8_t* input,
                                       const cmsis_nn_dims* filter_dims, const int8_t* weights,
                                       const int32_t* constants, const cmsis_nn_dims* output_dims, int8_t* output);

/**
 * @brief output[b][c][r] = input[b][r][c]: a batch of 2-D transposes (a layout change between dim orders).
 * @param[in]  input                 caller: [batches][rows][cols] int8
 * @param[out] output                caller: [batches][cols][rows] int8, not overlapping input
 * @param[in]  batches, rows, cols   >= 1
 * @return     ARM_CMSIS_NN_SUCCESS; ARM_CMSIS_NN_ARG_ERROR for a size below 1
 */
arm_cmsis_nn_status cmx_transpose_s8(const int8_t* input, int8_t* output, int32_t batches, int32_t rows,
                                     int32_t cols);

/**
 * @brief output[b][c][r] = input[b][r][c] for int16 elements (an int16 batch matmul's b transposed).
 * @param[in]  input                 caller: [batches][rows][cols] int16
 * @param[out] output                caller: [batches][cols][rows] int16, not overlapping input
 * @param[in]  batches, rows, cols   >= 1
 * @return     ARM_CMSIS_NN_SUCCESS; ARM_CMSIS_NN_ARG_ERROR for a size below 1
 */
arm_cmsis_nn_status cmx_transpose_s16(const int16_t* input, int16_t* output, int32_t batches, int32_t rows,
                                      int32_t cols);


/* A GRU layer with zero initial state (PyTorch's equations; cmx_gen/lower/ops/gru.py has the
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

/**
 * @brief The GRU layer above.
 * @param[in]  input    caller: [batch][time][input_size] int8 ([time][batch] when time_major)
 * @param[out] output   caller: [batch][time][hidden_size] int8, the same order; not overlapping input
 * @param[in]  params   sizes >= 1; gate weights and biases: plan constants
 * @param[in]  scratch  scratch: 4 * hidden_size int16 and hidden_size int8
 * @return     ARM_CMSIS_NN_SUCCESS; ARM_CMSIS_NN_ARG_ERROR for a size below 1 or no scratch
 */
arm_cmsis_nn_status cmx_gru_s8(const int8_t* input, int8_t* output, const cmx_gru_params* params, void* scratch);


/**
 * @brief LayerNorm over the last dimension, in integers (layer_models.layer_norm_s8 is the same
 *        arithmetic): d = x + input_offset, S1 and S2 its sum and sum of squares,
 *        R = isqrt((C S2 - S1^2 + eps) << 16), y = round((256 (C d - S1) gain / R + bias) / 2^16) + output_offset.
 * @param[in]  input           caller: [rows][channels] int8
 * @param[out] output          caller: [rows][channels] int8; may be input (each row is read before written)
 * @param[in]  rows, channels  >= 1
 * @param[in]  input_offset    in [-127, 128]: minus the input's zero point
 * @param[in]  output_offset   in [-128, 127]: the output's zero point
 * @param[in]  eps             >= 0: the epsilon term, C^2 eps in the input's steps squared
 * @param[in]  gains, biases   plan: [channels] int32 each, in 2^-16 output steps
 * @return     ARM_CMSIS_NN_SUCCESS; ARM_CMSIS_NN_ARG_ERROR for a size below 1, a negative eps or no gains
 *             or biases
 */
arm_cmsis_nn_status cmx_layer_norm_s8(const int8_t* input, int8_t* output, int32_t rows, int32_t channels,
                                      int32_t input_offset, int32_t output_offset, int64_t eps, const int32_t* gains,
                                      const int32_t* biases);

/**
 * @brief The mean over the middle dimension: int32 sums (input offset added), arm_nn_requantize (1 / count
 *        folded into the multiplier), output offset, saturated to int8.
 * @param[in]  input                 caller: [outer][count][inner] int8
 * @param[out] output                caller: [outer][inner] int8, not overlapping input
 * @param[in]  outer, count, inner   >= 1
 * @param[in]  multiplier, shift     CMSIS-NN's requantization
 * @param[in]  input_offset    in [-127, 128]: minus the input's zero point
 * @param[in]  output_offset   in [-128, 127]: the output's zero point
 * @return     ARM_CMSIS_NN_SUCCESS; ARM_CMSIS_NN_ARG_ERROR for a size below 1
 */
arm_cmsis_nn_status cmx_mean_s8(const int8_t* input, int8_t* output, int32_t outer, int32_t count, int32_t inner,
                                int32_t multiplier, int32_t shift, int32_t input_offset, int32_t output_offset);

/**
 * @brief arm_elementwise_add_s8 with its arguments and its result, byte for byte: where every shift is
 *        right, each element's three requantizations in registers (cmx_add_s8.c, DSP and Helium); else
 *        arm_elementwise_add_s8 itself. Reads and writes one element at a time, in order, so output may
 *        be input_1.
 * @param[in]  input_1, input_2  caller: [block_size] int8 each
 * @param[out] output            caller: [block_size] int8
 * @param      others            as arm_elementwise_add_s8's (arm_nnfunctions.h)
 * @return     ARM_CMSIS_NN_SUCCESS, as arm_elementwise_add_s8
 */
arm_cmsis_nn_status cmx_add_s8(const int8_t* input_1, const int8_t* input_2, int32_t input_1_offset,
                               int32_t input_1_mult, int32_t input_1_shift, int32_t input_2_offset,
                               int32_t input_2_mult, int32_t input_2_shift, int32_t left_shift, int8_t* output,
                               int32_t out_offset, int32_t out_mult, int32_t out_shift, int32_t out_activation_min,
                               int32_t out_activation_max, int32_t block_size);

/**
 * @brief arm_avgpool_s8 with its arguments and its result, byte for byte: on a DSP core, where the
 *        channels are a multiple of four and src is word-aligned, four channels a step summed in int16
 *        lanes (SXTAB16) without the scratch (cmx_avgpool_s8.c); else arm_avgpool_s8 itself. Writes an
 *        output pixel's channels after reading them over its window, so output may lie over input where
 *        the plan's lead for a pooling layer puts it.
 * @param[in]  ctx          caller: arm_avgpool_s8_get_buffer_size's scratch (only its fallback reads it)
 * @param[in]  src          caller: [n][h][w][c] int8
 * @param[out] dst          caller: [n][output h][output w][c] int8
 * @param      others       as arm_avgpool_s8's (arm_nnfunctions.h)
 * @return     ARM_CMSIS_NN_SUCCESS; ARM_CMSIS_NN_ARG_ERROR for an output pixel whose window lies outside
 *             the input, or as arm_avgpool_s8
 */
arm_cmsis_nn_status cmx_avgpool_s8(const cmsis_nn_context* ctx, const cmsis_nn_pool_params* pool_params,
                                   const cmsis_nn_dims* input_dims, const int8_t* src, const cmsis_nn_dims* filter_dims,
                                   const cmsis_nn_dims* output_dims, int8_t* dst);

/**
 * @brief output[i] = table[input[i] + 128]: an element-wise operator the plan tabulated.
 * @param[in]  input   caller: [count] int8
 * @param[out] output  caller: [count] int8; may be input
 * @param[in]  count   >= 1
 * @param[in]  table   plan: [256] int8, the output for each input from -128 to 127
 * @return     ARM_CMSIS_NN_SUCCESS; ARM_CMSIS_NN_ARG_ERROR for a count below 1 or no table
 */
arm_cmsis_nn_status cmx_lut_s8(const int8_t* input, int8_t* output, int32_t count, const int8_t* table);

/**
 * @brief output[i] = table[input[i] + 128], int8 in, int16 out: where an int8 layer's output meets a layer
 *        of 16-bit activations, the requantization the plan tabulated.
 * @param[in]  input   caller: [count] int8
 * @param[out] output  caller: [count] int16, 2-byte aligned; may start at input (written last to first)
 * @param[in]  count   >= 1
 * @param[in]  table   plan: [256] int16, the output for each input from -128 to 127
 * @return     ARM_CMSIS_NN_SUCCESS; ARM_CMSIS_NN_ARG_ERROR for a count below 1 or no table
 */
arm_cmsis_nn_status cmx_lut_s8_s16(const int8_t* input, int16_t* output, int32_t count, const int16_t* table);

/**
 * @brief output[i] = lowest + how many thresholds are at or below input[i], int16 in, int8 out: where a layer
 *        of 16-bit activations meets an int8 one, the requantization the plan tabulated as the int16 values at
 *        which the int8 output steps up (65,536 inputs, at most 255 steps). Where to start looking is guessed
 *        as ((input[i] - thresholds[0]) * multiplier >> shift) + 1, the thresholds' mean spacing inverted; the
 *        guess decides the time, never the value.
 * @param[in]  input       caller: [count] int16, 2-byte aligned
 * @param[out] output      caller: [count] int8; may start at input (written first to last)
 * @param[in]  count       >= 1
 * @param[in]  thresholds  plan: [steps] int16, non-decreasing
 * @param[in]  steps       0 to 255
 * @param[in]  lowest      the output for -32768: -128 to 127 - steps
 * @param[in]  multiplier  0 to 32767
 * @param[in]  shift       0 to 31
 * @return     ARM_CMSIS_NN_SUCCESS; ARM_CMSIS_NN_ARG_ERROR for a count below 1, steps outside 0 to 255, or no
 *             thresholds for steps
 */
arm_cmsis_nn_status cmx_narrow_s16_s8(const int16_t* input, int8_t* output, int32_t count, const int16_t* thresholds,
                                      int32_t steps, int32_t lowest, int32_t multiplier, int32_t shift);

/* The most entries a softmax's table of exponentials has: one per difference from 0 to -255. */
#define CMX_SOFTMAX_TABLE 256
/* The elements (rows x row size) from which the backend runs a softmax on cmx_softmax_s8: its table's
 * exponentials, up to 256, cost what about 128 elements' two each cost in arm_softmax_s8. */
#define CMX_SOFTMAX_TABLE_FROM 128

/**
 * @brief The entries cmx_softmax_s8_table fills for a layer's diff_min: one per difference from 0 down
 *        to diff_min, at most CMX_SOFTMAX_TABLE.
 * @param[in]  diff_min  <= 0, as arm_softmax_s8's
 * @return     1..CMX_SOFTMAX_TABLE
 */
int32_t cmx_softmax_s8_table_entries(int32_t diff_min);

/**
 * @brief A softmax layer's exponentials: table[k] = arm_nn_softmax_common_s8's exponential of the
 *        difference -k (EXP_ON_NEG(MUL_SAT(-k * 2^shift, mult))), for k below
 *        cmx_softmax_s8_table_entries(diff_min). Computed with CMSIS-NN's own functions.
 * @param[in]  mult, shift, diff_min  as arm_softmax_s8's; shift 0..31, diff_min <= 0
 * @param[out] table     caller: [cmx_softmax_s8_table_entries(diff_min)] int32
 * @return     ARM_CMSIS_NN_SUCCESS; ARM_CMSIS_NN_ARG_ERROR for no table or arguments out of range
 */
arm_cmsis_nn_status cmx_softmax_s8_table(int32_t mult, int32_t shift, int32_t diff_min, int32_t* table);

/**
 * @brief arm_softmax_s8's result, byte for byte (its C path, arm_nn_softmax_common_s8), each
 *        exponential read from the layer's table instead of computed twice per element: cheaper
 *        from CMX_SOFTMAX_TABLE_FROM elements (the backend's choice). Reads each input byte
 *        before it writes that output byte, so output may be input.
 * @param[in]  input     caller: [num_rows][row_size] int8
 * @param[in]  num_rows, row_size  >= 1
 * @param[in]  diff_min  <= 0, the diff_min the table was made for
 * @param[in]  table     caller: cmx_softmax_s8_table's for the layer
 * @param[out] output    caller: [num_rows][row_size] int8
 * @return     ARM_CMSIS_NN_SUCCESS; ARM_CMSIS_NN_ARG_ERROR for a size below 1, diff_min above 0 or a
 *             missing pointer
 */
arm_cmsis_nn_status cmx_softmax_s8(const int8_t* input, int32_t num_rows, int32_t row_size, int32_t diff_min,
                                   const int32_t* table, int8_t* output);

#ifdef __cplusplus
}
#endif
