/* One plan record run: the kernel its kind names, called with the record's arguments, as cmx-gen's
 * backend runs it (cmx_backend.cpp) and the host fuzz test does (tests/lower/plan_run_host.cpp). C++,
 * no ExecuTorch: every pointer comes from the record, the working memory and the arguments, which
 * cmx_plan_check checked. The includer chooses the layer kinds (CMX_BACKEND_<KIND>) and may define
 * CMX_RUN_NOW() to time each kernel call. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

extern "C" {
#include "arm_nnfunctions.h"
}
#include "cmx_copy_rows.h"
#include "cmx_plan.h"

#ifndef CMX_RUN_NOW
#define CMX_RUN_NOW() 0
#endif

namespace cmx_run {

/* When the kernel call of the last layer started and ended (CMX_RUN_NOW's ticks). */
struct Ticks {
  uint64_t start, end;
};

inline int8_t* tensor_at(int32_t operand, uint8_t* work, void* const* io) {
  return operand >= 0 ? reinterpret_cast<int8_t*>(work + operand) : static_cast<int8_t*>(io[-1 - operand]);
}

/* An int16 tensor of the working memory or an argument (the plan places them 2-byte aligned). */
inline int16_t* tensor16_at(int32_t operand, uint8_t* work, void* const* io) {
  return reinterpret_cast<int16_t*>(tensor_at(operand, work, io));
}

template <typename T>
inline const T* constant_at(const uint8_t* plan, int32_t offset) {
  return offset >= 0 ? reinterpret_cast<const T*>(plan + offset) : nullptr;
}

/* A CMSIS-NN layer's per-channel requantization: its multipliers and shifts, plan constants. */
inline cmsis_nn_per_channel_quant_params per_channel(const uint8_t* plan, int32_t multipliers, int32_t shifts) {
  return {const_cast<int32_t*>(constant_at<int32_t>(plan, multipliers)),
          const_cast<int32_t*>(constant_at<int32_t>(plan, shifts))};
}

/* Scratch for a kernel that takes none as a NULL buffer: `bytes` at `at` in the working memory. */
inline cmsis_nn_context optional_scratch(uint8_t* work, int32_t at, int32_t bytes) {
  return {bytes > 0 ? work + at : nullptr, bytes};
}

/* The elements of an NHWC tensor. */
inline size_t volume(const cmsis_nn_dims& d) { return (size_t)d.n * d.h * d.w * d.c; }

#if defined(CMX_BACKEND_LSTM) || defined(CMX_BACKEND_LSTM_S16)
/* One gate's nine words (cmx_layer_lstm): multipliers and shifts, weight and bias offsets; the effective
 * biases int32 (arm_lstm_unidirectional_s8) or int64 (_s16). */
template <typename Bias>
inline cmsis_nn_lstm_gate lstm_gate(const uint8_t* plan, const int32_t* g) {
  return cmsis_nn_lstm_gate{g[0],
                            g[1],
                            constant_at<int8_t>(plan, g[2]),
                            constant_at<Bias>(plan, g[3]),
                            g[4],
                            g[5],
                            constant_at<int8_t>(plan, g[6]),
                            constant_at<Bias>(plan, g[7]),
                            nullptr,
                            static_cast<arm_nn_activation_type>(g[8])};
}
#endif

/* A sequence's steps in reverse order, from `in` to `out`: rows of `row` bytes, [batch][time] or
 * (time_major) [time][batch]. */
inline void reverse_steps(const int8_t* in, int8_t* out, int32_t time_major, int32_t batch, int32_t steps,
                          int32_t row) {
  for (int32_t b = 0; b < batch; ++b) {
    for (int32_t t = 0; t < steps; ++t) {
      const int32_t from = time_major ? t * batch + b : b * steps + t;
      const int32_t to = time_major ? (steps - 1 - t) * batch + b : b * steps + (steps - 1 - t);
      memmove(out + (size_t)to * row, in + (size_t)from * row, (size_t)row);
    }
  }
}

#ifdef CMX_BACKEND_GRU
inline cmx_gru_gate gru_gate(const uint8_t* plan, const int32_t* g) {
  /* one gate's eight words (cmx_layer_gru) */
  return cmx_gru_gate{g[0], g[1], constant_at<int8_t>(plan, g[2]), constant_at<int32_t>(plan, g[3]),
                      g[4], g[5], constant_at<int8_t>(plan, g[6]), constant_at<int32_t>(plan, g[7])};
}
#endif

/* Each kind's run: its record `l`, the plan, the working memory and the arguments; it sets its output,
 * the output's bytes (for the trace) and the ticks around its kernel call, and returns CMSIS-NN's status. */
#define CMX_RUN_ARGS                                                                                       \
  [[maybe_unused]] const uint8_t *plan, [[maybe_unused]] uint8_t *work, [[maybe_unused]] void *const *io, \
      int8_t *&out, size_t &out_bytes, Ticks &ticks
#define CMX_KERNEL(...)           \
  do {                            \
    ticks.start = CMX_RUN_NOW();  \
    __VA_ARGS__;                  \
    ticks.end = CMX_RUN_NOW();    \
  } while (0)
#define CMX_OUT_BYTES(expr) out_bytes = (expr)

#ifdef CMX_BACKEND_CONV
inline arm_cmsis_nn_status run_conv(const cmx_layer_conv* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  cmsis_nn_context ctx = optional_scratch(work, l->scratch, l->scratch_bytes);
  const cmsis_nn_per_channel_quant_params q = per_channel(plan, l->multipliers, l->shifts);
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES(volume(l->output_dims));
  CMX_KERNEL(status = arm_convolve_wrapper_s8(&ctx, &l->params, &q, &l->input_dims, tensor_at(l->input, work, io),
                                   &l->filter_dims, constant_at<int8_t>(plan, l->weight), &l->bias_dims,
                                   constant_at<int32_t>(plan, l->bias), &l->output_dims, out));
  return status;
}
#endif

#ifdef CMX_BACKEND_CONV_GENERAL
inline arm_cmsis_nn_status run_conv_general(const cmx_layer_conv_general* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  cmsis_nn_context ctx{work + l->scratch, l->scratch_bytes};
  const cmsis_nn_per_channel_quant_params q = per_channel(plan, l->multipliers, l->shifts);
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES(volume(l->output_dims));
  CMX_KERNEL(status = arm_convolve_s8(&ctx, &l->params, &q, &l->input_dims, tensor_at(l->input, work, io),
                                      &l->filter_dims, constant_at<int8_t>(plan, l->weight), &l->bias_dims,
                                      constant_at<int32_t>(plan, l->bias), nullptr, &l->output_dims, out));
  return status;
}
#endif

#ifdef CMX_BACKEND_CONV_ROW
inline arm_cmsis_nn_status run_conv_row(const cmx_layer_conv_row* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES((size_t)l->params.out_rows * l->params.positions * l->params.out_ch); /* every row of a 2-D layer */
  CMX_KERNEL(status = cmx_conv_row_s8(&l->params, tensor_at(l->input, work, io), constant_at<int8_t>(plan, l->weight),
                                      constant_at<int32_t>(plan, l->constants),
                                      reinterpret_cast<int16_t*>(work + l->scratch), out));
  return status;
}
#endif

#ifdef CMX_BACKEND_CONV_HELIUM
inline arm_cmsis_nn_status run_conv_helium(const cmx_layer_conv_helium* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  cmsis_nn_context ctx{work + l->scratch, l->scratch_bytes};
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES(volume(l->output_dims));
  CMX_KERNEL(status = cmx_conv_helium_s8(&ctx, &l->params, &l->input_dims, tensor_at(l->input, work, io),
                                         &l->filter_dims, constant_at<int8_t>(plan, l->weight),
                                         constant_at<int32_t>(plan, l->constants), &l->output_dims, out));
  return status;
}
#endif

#ifdef CMX_BACKEND_DEPTHWISE_3X3
inline arm_cmsis_nn_status run_depthwise_3x3(const cmx_layer_depthwise_3x3* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  const cmsis_nn_per_channel_quant_params q = per_channel(plan, l->multipliers, l->shifts);
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES(volume(l->output_dims));
  cmsis_nn_context ctx = optional_scratch(work, l->scratch, l->scratch_bytes);
  CMX_KERNEL(status = cmx_depthwise_3x3_s8(&ctx, &l->params, &q, &l->input_dims, tensor_at(l->input, work, io),
                                           &l->filter_dims, constant_at<int8_t>(plan, l->weight),
                                           constant_at<int32_t>(plan, l->bias), &l->output_dims, out));
  return status;
}
#endif

#ifdef CMX_BACKEND_DEPTHWISE_CONV
inline arm_cmsis_nn_status run_depthwise_conv(const cmx_layer_depthwise_conv* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  cmsis_nn_context ctx = optional_scratch(work, l->scratch, l->scratch_bytes);
  const cmsis_nn_per_channel_quant_params q = per_channel(plan, l->multipliers, l->shifts);
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES(volume(l->output_dims));
  CMX_KERNEL(status = arm_depthwise_conv_wrapper_s8(&ctx, &l->params, &q, &l->input_dims,
                                         tensor_at(l->input, work, io), &l->filter_dims,
                                         constant_at<int8_t>(plan, l->weight), &l->bias_dims,
                                         constant_at<int32_t>(plan, l->bias), &l->output_dims, out));
  return status;
}
#endif

#ifdef CMX_BACKEND_LINEAR
inline arm_cmsis_nn_status run_linear(const cmx_layer_linear* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  cmsis_nn_context ctx{const_cast<int32_t*>(constant_at<int32_t>(plan, l->kernel_sum)), 0};
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES((size_t)l->output_dims.n * l->output_dims.c);
  CMX_KERNEL(status = arm_fully_connected_s8(&ctx, &l->params, &l->quant, &l->input_dims, tensor_at(l->input, work, io),
                                  &l->filter_dims, constant_at<int8_t>(plan, l->weight), &l->bias_dims,
                                  constant_at<int32_t>(plan, l->bias), &l->output_dims, out));
  return status;
}
#endif

#ifdef CMX_BACKEND_CONV_S4
inline arm_cmsis_nn_status run_conv_s4(const cmx_layer_conv_s4* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  cmsis_nn_context ctx = optional_scratch(work, l->scratch, l->scratch_bytes);
  const cmsis_nn_per_channel_quant_params q = per_channel(plan, l->multipliers, l->shifts);
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES(volume(l->output_dims));
  CMX_KERNEL(status = arm_convolve_wrapper_s4(&ctx, &l->params, &q, &l->input_dims, tensor_at(l->input, work, io),
                                              &l->filter_dims, constant_at<int8_t>(plan, l->weight), &l->bias_dims,
                                              constant_at<int32_t>(plan, l->bias), &l->output_dims, out));
  return status;
}
#endif

#ifdef CMX_BACKEND_DEPTHWISE_S4
inline arm_cmsis_nn_status run_depthwise_s4(const cmx_layer_depthwise_s4* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  cmsis_nn_context ctx = optional_scratch(work, l->scratch, l->scratch_bytes);
  const cmsis_nn_per_channel_quant_params q = per_channel(plan, l->multipliers, l->shifts);
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES(volume(l->output_dims));
  CMX_KERNEL(status = arm_depthwise_conv_wrapper_s4(&ctx, &l->params, &q, &l->input_dims,
                                                    tensor_at(l->input, work, io), &l->filter_dims,
                                                    constant_at<int8_t>(plan, l->weight), &l->bias_dims,
                                                    constant_at<int32_t>(plan, l->bias), &l->output_dims, out));
  return status;
}
#endif

#ifdef CMX_BACKEND_LINEAR_S4
inline arm_cmsis_nn_status run_linear_s4(const cmx_layer_linear_s4* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  cmsis_nn_context ctx{nullptr, 0};
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES((size_t)l->output_dims.n * l->output_dims.c);
  CMX_KERNEL(status = arm_fully_connected_s4(&ctx, &l->params, &l->quant, &l->input_dims, tensor_at(l->input, work, io),
                                             &l->filter_dims, constant_at<int8_t>(plan, l->weight), &l->bias_dims,
                                             constant_at<int32_t>(plan, l->bias), &l->output_dims, out));
  return status;
}
#endif

#ifdef CMX_BACKEND_FULLY_CONNECTED_S4
inline arm_cmsis_nn_status run_fully_connected_s4(const cmx_layer_fully_connected_s4* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES((size_t)l->output_dims.n * l->output_dims.c);
  CMX_KERNEL(status = cmx_fully_connected_s4(&l->params, &l->quant, &l->input_dims, tensor_at(l->input, work, io),
                                             &l->filter_dims, constant_at<uint8_t>(plan, l->weight),
                                             constant_at<int32_t>(plan, l->bias), &l->output_dims, out));
  return status;
}
#endif

#ifdef CMX_BACKEND_CONV_S16
inline arm_cmsis_nn_status run_conv_s16(const cmx_layer_conv_s16* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  cmsis_nn_context ctx = optional_scratch(work, l->scratch, l->scratch_bytes);
  const cmsis_nn_per_channel_quant_params q = per_channel(plan, l->multipliers, l->shifts);
  const cmsis_nn_bias_data bias = {constant_at<int64_t>(plan, l->bias), false};
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES(2 * volume(l->output_dims));
  CMX_KERNEL(status = arm_convolve_wrapper_s16(&ctx, &l->params, &q, &l->input_dims, tensor16_at(l->input, work, io),
                                               &l->filter_dims, constant_at<int8_t>(plan, l->weight), &l->bias_dims,
                                               &bias, &l->output_dims, reinterpret_cast<int16_t*>(out)));
  return status;
}
#endif

#ifdef CMX_BACKEND_DEPTHWISE_S16
inline arm_cmsis_nn_status run_depthwise_s16(const cmx_layer_depthwise_s16* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  cmsis_nn_context ctx = optional_scratch(work, l->scratch, l->scratch_bytes);
  const cmsis_nn_per_channel_quant_params q = per_channel(plan, l->multipliers, l->shifts);
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES(2 * volume(l->output_dims));
  CMX_KERNEL(status = arm_depthwise_conv_wrapper_s16(&ctx, &l->params, &q, &l->input_dims,
                                                     tensor16_at(l->input, work, io), &l->filter_dims,
                                                     constant_at<int8_t>(plan, l->weight), &l->bias_dims,
                                                     constant_at<int64_t>(plan, l->bias), &l->output_dims,
                                                     reinterpret_cast<int16_t*>(out)));
  return status;
}
#endif

#ifdef CMX_BACKEND_LINEAR_S16
inline arm_cmsis_nn_status run_linear_s16(const cmx_layer_linear_s16* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  cmsis_nn_context ctx{nullptr, 0};
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES(2 * (size_t)l->output_dims.n * l->output_dims.c);
  CMX_KERNEL(status = arm_fully_connected_s16(&ctx, &l->params, &l->quant, &l->input_dims,
                                              tensor16_at(l->input, work, io), &l->filter_dims,
                                              constant_at<int8_t>(plan, l->weight), &l->bias_dims,
                                              constant_at<int64_t>(plan, l->bias), &l->output_dims,
                                              reinterpret_cast<int16_t*>(out)));
  return status;
}
#endif

#ifdef CMX_BACKEND_FULLY_CONNECTED
inline arm_cmsis_nn_status run_fully_connected(const cmx_layer_fully_connected* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES((size_t)l->output_dims.n * l->output_dims.c);
  CMX_KERNEL(status = cmx_fully_connected_s8(&l->params, &l->quant, &l->input_dims, tensor_at(l->input, work, io),
                                             &l->filter_dims, constant_at<int8_t>(plan, l->weight),
                                             constant_at<int32_t>(plan, l->bias),
                                             constant_at<int32_t>(plan, l->kernel_sum), &l->output_dims, out));
  return status;
}
#endif

#ifdef CMX_BACKEND_ADD
inline arm_cmsis_nn_status run_add(const cmx_layer_add* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  const int8_t* a = tensor_at(l->input1, work, io);
  const int8_t* b = tensor_at(l->input2, work, io);
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES((size_t)l->count);
  CMX_KERNEL(for (int32_t at = 0; at < l->count && status == ARM_CMSIS_NN_SUCCESS; at += l->block) {
    status = cmx_add_s8(a + at, b, l->input1_offset, l->input1_multiplier, l->input1_shift, l->input2_offset,
                        l->input2_multiplier, l->input2_shift, l->left_shift, out + at, l->output_offset,
                        l->output_multiplier, l->output_shift, l->act_min, l->act_max, l->block);
  });
  return status;
}
#endif

#ifdef CMX_BACKEND_MUL
inline arm_cmsis_nn_status run_mul(const cmx_layer_mul* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  const int8_t* a = tensor_at(l->input1, work, io);
  const int8_t* b = tensor_at(l->input2, work, io);
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES((size_t)l->count);
  CMX_KERNEL(for (int32_t at = 0; at < l->count && status == ARM_CMSIS_NN_SUCCESS; at += l->block) {
    status = arm_elementwise_mul_s8(a + at, b, l->input1_offset, l->input2_offset, out + at, l->output_offset,
                                    l->output_multiplier, l->output_shift, l->act_min, l->act_max, l->block);
  });
  return status;
}
#endif

#ifdef CMX_BACKEND_AVG_POOL
inline arm_cmsis_nn_status run_avg_pool(const cmx_layer_avg_pool* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  cmsis_nn_context ctx = optional_scratch(work, l->scratch, l->scratch_bytes);
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES(volume(l->output_dims));
  CMX_KERNEL(status = cmx_avgpool_s8(&ctx, &l->params, &l->input_dims, tensor_at(l->input, work, io), &l->filter_dims,
                          &l->output_dims, out));
  return status;
}
#endif

#ifdef CMX_BACKEND_MAX_POOL
inline arm_cmsis_nn_status run_max_pool(const cmx_layer_max_pool* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  cmsis_nn_context ctx{nullptr, 0};
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES(volume(l->output_dims));
  CMX_KERNEL(status = arm_max_pool_s8(&ctx, &l->params, &l->input_dims, tensor_at(l->input, work, io), &l->filter_dims,
                           &l->output_dims, out));
  return status;
}
#endif

#ifdef CMX_BACKEND_SOFTMAX
/* One softmax layer, unmasked (its rows at once) or masked (ranges: a constant attention mask,
 * cmx_plan.h): row r's columns [lo, hi) of its range alone, then -128 (probability 0) in the others; in
 * that order, so that an output written over its input (the memory schedule may place it there) reads
 * every input byte first. Through cmx_softmax_s8 where its table pays (CMX_SOFTMAX_TABLE_FROM elements
 * or more), else arm_softmax_s8: the same bytes either way. Not inlined: the table (1 KiB) is on the
 * stack while a softmax runs, not in the layer loop's frame. */
[[gnu::noinline]]
inline arm_cmsis_nn_status run_softmax(const cmx_layer_softmax* l, CMX_RUN_ARGS) {
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES((size_t)l->rows * l->row_size);
  const int8_t* in = tensor_at(l->input, work, io);
  const int32_t* ranges = l->ranges < 0 ? nullptr : constant_at<int32_t>(plan, l->ranges);
  const int32_t calls = ranges ? l->rows : 1, n = ranges ? 1 : l->rows; /* rows a call */
  const bool by_table = (int64_t)l->rows * l->row_size >= CMX_SOFTMAX_TABLE_FROM;
  int32_t table[CMX_SOFTMAX_TABLE];
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  ticks.start = CMX_RUN_NOW();
  if (by_table) status = cmx_softmax_s8_table(l->multiplier, l->shift, l->diff_min, table);
  for (int32_t r = 0; r < calls && status == ARM_CMSIS_NN_SUCCESS; ++r) {
    const int32_t* range = ranges ? ranges + 2 * (r % l->mask_rows) : nullptr;
    const int32_t lo = range ? range[0] : 0, hi = range ? range[1] : l->row_size, at = r * l->row_size;
    if (hi > lo && by_table) {
      status = cmx_softmax_s8(in + at + lo, n, hi - lo, l->diff_min, table, out + at + lo);
    } else if (hi > lo) {
      arm_softmax_s8(in + at + lo, n, hi - lo, l->multiplier, l->shift, l->diff_min, out + at + lo);
    }
    if (range) {
      memset(out + at, -128, static_cast<size_t>(lo));
      memset(out + at + hi, -128, static_cast<size_t>(l->row_size - hi));
    }
  }
  ticks.end = CMX_RUN_NOW();
  return status;
}
#endif

inline arm_cmsis_nn_status run_copy(const cmx_layer_copy* l, CMX_RUN_ARGS) {
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES((size_t)l->nbytes);
  /* memmove: a copy placed over its own input (in place) stays defined */
  CMX_KERNEL(memmove(out, tensor_at(l->input, work, io), static_cast<size_t>(l->nbytes)));
  return ARM_CMSIS_NN_SUCCESS;
}

inline arm_cmsis_nn_status run_copy_region(const cmx_layer_copy_region* l, CMX_RUN_ARGS) {
  out = tensor_at(l->output, work, io) + l->output_at;
  const int8_t* in = tensor_at(l->input, work, io) + l->input_at;
  CMX_OUT_BYTES((size_t)l->rows * l->row_bytes);
  CMX_KERNEL(cmx_copy_rows(out, in, l->rows, l->row_bytes, l->input_stride, l->output_stride));
  return ARM_CMSIS_NN_SUCCESS;
}

#ifdef CMX_BACKEND_TRANSPOSE
inline arm_cmsis_nn_status run_transpose(const cmx_layer_transpose* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES((size_t)l->batches * l->rows * l->cols);
  CMX_KERNEL(status = cmx_transpose_s8(tensor_at(l->input, work, io), out, l->batches, l->rows, l->cols));
  return status;
}
#endif

#if defined(CMX_BACKEND_LSTM) || defined(CMX_BACKEND_LSTM_S16)
/* An LSTM record on `kernel`: arm_lstm_unidirectional_s8 (T int8_t, Bias int32_t) or _s16 (int16_t,
 * int64_t). Scratch: the int16 cell state and two gate buffers, then, reversed, the steps in and out. */
template <typename T, typename Bias, typename Kernel>
inline arm_cmsis_nn_status run_lstm_on(const cmx_layer_lstm* l, Kernel kernel, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  const cmsis_nn_lstm_params params{l->time_major,
                                    l->batch_size,
                                    l->time_steps,
                                    l->input_size,
                                    l->hidden_size,
                                    l->input_offset,
                                    l->forget_to_cell_multiplier,
                                    l->forget_to_cell_shift,
                                    l->input_to_cell_multiplier,
                                    l->input_to_cell_shift,
                                    l->cell_clip,
                                    l->cell_scale_power,
                                    l->output_multiplier,
                                    l->output_shift,
                                    l->output_offset,
                                    lstm_gate<Bias>(plan, &l->forget_input_multiplier),
                                    lstm_gate<Bias>(plan, &l->input_input_multiplier),
                                    lstm_gate<Bias>(plan, &l->cell_input_multiplier),
                                    lstm_gate<Bias>(plan, &l->output_input_multiplier)};
  auto* cell = reinterpret_cast<int16_t*>(work + l->scratch);
  const size_t state = (size_t)l->batch_size * l->hidden_size;
  cmsis_nn_lstm_context buffers{cell + state, cell + 2 * state, cell};  // temp1, temp2, cell_state
  buffers.hidden_state = nullptr;  // zero initial state
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES(sizeof(T) * l->batch_size * l->time_steps * l->hidden_size);
  const T* in = reinterpret_cast<const T*>(tensor_at(l->input, work, io));
  T* reversed_in = reinterpret_cast<T*>(cell + 3 * state);
  T* reversed_out = reversed_in + (size_t)l->batch_size * l->time_steps * l->input_size;
  const int32_t in_row = sizeof(T) * l->input_size, out_row = sizeof(T) * l->hidden_size;
  CMX_KERNEL(if (l->reverse) {
    reverse_steps(reinterpret_cast<const int8_t*>(in), reinterpret_cast<int8_t*>(reversed_in), l->time_major,
                  l->batch_size, l->time_steps, in_row);
    status = kernel(reversed_in, reversed_out, &params, &buffers);
    reverse_steps(reinterpret_cast<const int8_t*>(reversed_out), out, l->time_major, l->batch_size, l->time_steps,
                  out_row);
  } else {
    status = kernel(in, reinterpret_cast<T*>(out), &params, &buffers);
  });
  return status;
}
#endif

#ifdef CMX_BACKEND_LSTM
inline arm_cmsis_nn_status run_lstm(const cmx_layer_lstm* l, CMX_RUN_ARGS) {
  return run_lstm_on<int8_t, int32_t>(l, arm_lstm_unidirectional_s8, plan, work, io, out, out_bytes, ticks);
}
#endif

#ifdef CMX_BACKEND_LSTM_S16
inline arm_cmsis_nn_status run_lstm_s16(const cmx_layer_lstm_s16* l, CMX_RUN_ARGS) {
  return run_lstm_on<int16_t, int64_t>(l, arm_lstm_unidirectional_s16, plan, work, io, out, out_bytes, ticks);
}
#endif

#ifdef CMX_BACKEND_GRU
inline arm_cmsis_nn_status run_gru(const cmx_layer_gru* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  const cmx_gru_params params{l->time_major,
                              l->batch_size,
                              l->time_steps,
                              l->input_size,
                              l->hidden_size,
                              l->reverse,
                              l->hidden_offset,
                              l->output_offset,
                              l->reset_multiplier,
                              l->reset_shift,
                              l->hidden_q15_multiplier,
                              l->hidden_q15_shift,
                              l->output_multiplier,
                              l->output_shift,
                              gru_gate(plan, &l->reset_input_multiplier),
                              gru_gate(plan, &l->update_input_multiplier),
                              gru_gate(plan, &l->candidate_input_multiplier)};
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES((size_t)l->batch_size * l->time_steps * l->hidden_size);
  CMX_KERNEL(status = cmx_gru_s8(tensor_at(l->input, work, io), out, &params, work + l->scratch));
  return status;
}
#endif

#ifdef CMX_BACKEND_LAYER_NORM
inline arm_cmsis_nn_status run_layer_norm(const cmx_layer_layer_norm* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES((size_t)l->rows * l->channels);
  const int64_t eps = (int64_t)(((uint64_t)(uint32_t)l->eps_hi << 32) | (uint32_t)l->eps_lo);
  CMX_KERNEL(status = cmx_layer_norm_s8(tensor_at(l->input, work, io), out, l->rows, l->channels, l->input_offset,
                               l->output_offset, eps, constant_at<int32_t>(plan, l->gains),
                               constant_at<int32_t>(plan, l->biases)));
  return status;
}
#endif

#ifdef CMX_BACKEND_MEAN
inline arm_cmsis_nn_status run_mean(const cmx_layer_mean* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES((size_t)l->outer * l->inner);
  CMX_KERNEL(status = cmx_mean_s8(tensor_at(l->input, work, io), out, l->outer, l->count, l->inner, l->multiplier,
                         l->shift, l->input_offset, l->output_offset));
  return status;
}
#endif

#ifdef CMX_BACKEND_ADD_S16
inline arm_cmsis_nn_status run_add_s16(const cmx_layer_add_s16* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES(2 * (size_t)l->count);
  CMX_KERNEL(status = arm_elementwise_add_s16(tensor16_at(l->input1, work, io), tensor16_at(l->input2, work, io),
                                              l->input1_offset, l->input1_multiplier, l->input1_shift,
                                              l->input2_offset, l->input2_multiplier, l->input2_shift, l->left_shift,
                                              reinterpret_cast<int16_t*>(out), l->output_offset, l->output_multiplier,
                                              l->output_shift, l->act_min, l->act_max, l->count));
  return status;
}
#endif

#ifdef CMX_BACKEND_MUL_S16
inline arm_cmsis_nn_status run_mul_s16(const cmx_layer_mul_s16* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES(2 * (size_t)l->count);
  CMX_KERNEL(status = arm_elementwise_mul_s16(tensor16_at(l->input1, work, io), tensor16_at(l->input2, work, io),
                                              l->input1_offset, l->input2_offset, reinterpret_cast<int16_t*>(out),
                                              l->output_offset, l->output_multiplier, l->output_shift, l->act_min,
                                              l->act_max, l->count));
  return status;
}
#endif

#ifdef CMX_BACKEND_AVG_POOL_S16
inline arm_cmsis_nn_status run_avg_pool_s16(const cmx_layer_avg_pool_s16* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  cmsis_nn_context ctx = optional_scratch(work, l->scratch, l->scratch_bytes);
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES(2 * volume(l->output_dims));
  CMX_KERNEL(status = arm_avgpool_s16(&ctx, &l->params, &l->input_dims, tensor16_at(l->input, work, io),
                                      &l->filter_dims, &l->output_dims, reinterpret_cast<int16_t*>(out)));
  return status;
}
#endif

#ifdef CMX_BACKEND_MAX_POOL_S16
inline arm_cmsis_nn_status run_max_pool_s16(const cmx_layer_max_pool_s16* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  cmsis_nn_context ctx{nullptr, 0};
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES(2 * volume(l->output_dims));
  CMX_KERNEL(status = arm_max_pool_s16(&ctx, &l->params, &l->input_dims, tensor16_at(l->input, work, io),
                                       &l->filter_dims, &l->output_dims, reinterpret_cast<int16_t*>(out)));
  return status;
}
#endif

#ifdef CMX_BACKEND_LUT_S16
inline arm_cmsis_nn_status run_lut_s16(const cmx_layer_lut_s16* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES(2 * (size_t)l->count);
  CMX_KERNEL(status = cmx_lut_s8_s16(tensor_at(l->input, work, io), reinterpret_cast<int16_t*>(out), l->count,
                                     constant_at<int16_t>(plan, l->table)));
  return status;
}
#endif

#ifdef CMX_BACKEND_NARROW_S16
inline arm_cmsis_nn_status run_narrow_s16(const cmx_layer_narrow_s16* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES((size_t)l->count);
  CMX_KERNEL(status = cmx_narrow_s16_s8(tensor16_at(l->input, work, io), out, l->count,
                                        constant_at<int16_t>(plan, l->table), l->steps, l->lowest,
                                        l->multiplier, l->shift));
  return status;
}
#endif

#ifdef CMX_BACKEND_LUT
inline arm_cmsis_nn_status run_lut(const cmx_layer_lut* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES((size_t)l->count);
  CMX_KERNEL(status = cmx_lut_s8(tensor_at(l->input, work, io), out, l->count, constant_at<int8_t>(plan, l->table)));
  return status;
}
#endif

#ifdef CMX_BACKEND_BMM
inline arm_cmsis_nn_status run_bmm(const cmx_layer_bmm* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  const int8_t* rhs = tensor_at(l->input2, work, io);
  int8_t* scratch = reinterpret_cast<int8_t*>(work + l->scratch);
  const size_t rhs_bytes = (size_t)cmx_bmm_transposed_bytes(l->batches, l->inner, l->cols, l->transposed, 1);
  if (!l->transposed) {
    status = cmx_transpose_s8(rhs, scratch, l->batches, l->inner, l->cols);
    if (status != ARM_CMSIS_NN_SUCCESS) return status;
    rhs = scratch;
  }
  cmsis_nn_context ctx{scratch + rhs_bytes, (int32_t)(4 * l->cols)};
  const cmsis_nn_bmm_params params{false, false, {l->input1_offset, l->input2_offset, l->output_offset, {-128, 127}}};
  const cmsis_nn_per_tensor_quant_params quant{l->multiplier, l->shift};
  const cmsis_nn_dims lhs_dims{1, l->batches, l->rows, l->inner};
  const cmsis_nn_dims rhs_dims{1, l->batches, l->cols, l->inner};
  const cmsis_nn_dims out_dims{1, l->batches, l->rows, l->cols};
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES((size_t)l->batches * l->rows * l->cols);
  CMX_KERNEL(status = arm_batch_matmul_s8(&ctx, &params, &quant, &lhs_dims, tensor_at(l->input1, work, io),
                                          &rhs_dims, rhs, &out_dims, out));
  return status;
}
#endif

#ifdef CMX_BACKEND_LINEAR_PER_CHANNEL
inline arm_cmsis_nn_status run_linear_per_channel(const cmx_layer_linear_per_channel* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  cmsis_nn_context ctx{const_cast<int32_t*>(constant_at<int32_t>(plan, l->kernel_sum)), 0};
  const cmsis_nn_per_channel_quant_params q = per_channel(plan, l->multipliers, l->shifts);
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES((size_t)l->output_dims.n * l->output_dims.c);
  CMX_KERNEL(status = arm_fully_connected_per_channel_s8(&ctx, &l->params, &q, &l->input_dims,
                                                         tensor_at(l->input, work, io), &l->filter_dims,
                                                         constant_at<int8_t>(plan, l->weight), &l->bias_dims,
                                                         constant_at<int32_t>(plan, l->bias), &l->output_dims, out));
  return status;
}
#endif

#ifdef CMX_BACKEND_ACTIVATION_S16
inline arm_cmsis_nn_status run_activation_s16(const cmx_layer_activation_s16* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES(2 * (size_t)l->count);
  CMX_KERNEL(status = arm_nn_activation_s16(tensor16_at(l->input, work, io), reinterpret_cast<int16_t*>(out), l->count,
                                            l->left_shift, static_cast<arm_nn_activation_type>(l->type)));
  return status;
}
#endif

#ifdef CMX_BACKEND_SOFTMAX_S16
inline arm_cmsis_nn_status run_softmax_s16(const cmx_layer_softmax_s16* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  const cmsis_nn_softmax_lut_s16 tables{constant_at<int16_t>(plan, l->exp_table),
                                        constant_at<int16_t>(plan, l->one_by_one_table)};
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES(2 * (size_t)l->rows * l->row_size);
  CMX_KERNEL(status = arm_softmax_s16(tensor16_at(l->input, work, io), l->rows, l->row_size, l->multiplier, l->shift,
                                      &tables, reinterpret_cast<int16_t*>(out)));
  return status;
}
#endif

#ifdef CMX_BACKEND_BMM_S16
inline arm_cmsis_nn_status run_bmm_s16(const cmx_layer_bmm_s16* l, CMX_RUN_ARGS) {
  arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
  const int16_t* rhs = tensor16_at(l->input2, work, io);
  if (!l->transposed) {  // arm_batch_matmul_s16 reads b as [batch][cols][inner]
    int16_t* transposed = reinterpret_cast<int16_t*>(work + l->scratch);
    status = cmx_transpose_s16(rhs, transposed, l->batches, l->inner, l->cols);
    if (status != ARM_CMSIS_NN_SUCCESS) return status;
    rhs = transposed;
  }
  const cmsis_nn_context ctx{nullptr, 0};
  const cmsis_nn_bmm_params params{false, false, {0, 0, 0, {-32767, 32767}}};
  const cmsis_nn_per_tensor_quant_params quant{l->multiplier, l->shift};
  const cmsis_nn_dims lhs_dims{1, l->batches, l->rows, l->inner};
  const cmsis_nn_dims rhs_dims{1, l->batches, l->cols, l->inner};
  const cmsis_nn_dims out_dims{1, l->batches, l->rows, l->cols};
  out = tensor_at(l->output, work, io);
  CMX_OUT_BYTES(2 * (size_t)l->batches * l->rows * l->cols);
  CMX_KERNEL(status = arm_batch_matmul_s16(&ctx, &params, &quant, &lhs_dims, tensor16_at(l->input1, work, io),
                                           &rhs_dims, rhs, &out_dims, reinterpret_cast<int16_t*>(out)));
  return status;
}
#endif

/* The layer `head`: one case for each kind compiled in (CMX_PLAN_KINDS_IN, generated from the kinds'
 * records), which calls that kind's run. */
inline arm_cmsis_nn_status run_layer(const cmx_layer_head* head, const uint8_t* plan, uint8_t* work, void* const* io,
                                     int8_t*& out, size_t& out_bytes, Ticks& ticks) {
  switch (head->op) {
#define CMX_RUN(K, k)  \
  case CMX_OP_##K: \
    return run_##k(reinterpret_cast<const cmx_layer_##k*>(head), plan, work, io, out, out_bytes, ticks);
    CMX_PLAN_KINDS_IN(CMX_RUN)
#undef CMX_RUN
    default: return ARM_CMSIS_NN_ARG_ERROR;  // unreachable: init refused kinds not compiled in
  }
}

#undef CMX_KERNEL
#undef CMX_OUT_BYTES
#undef CMX_RUN_ARGS

}  // namespace cmx_run
