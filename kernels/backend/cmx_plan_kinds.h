/* Generated from cmx_gen/data/backend_layers.yaml by `python -m cmx_gen.lower.delegate.layer_kinds`:
 * edit the records there, not this file (tests/lower/test_layer_kinds.py fails when it is stale). */
#pragma once

enum cmx_plan_op {
  CMX_OP_CONV = 1,
  CMX_OP_DEPTHWISE_CONV = 2,
  CMX_OP_LINEAR = 3,
  CMX_OP_ADD = 4,
  CMX_OP_AVG_POOL = 5,
  CMX_OP_MAX_POOL = 6,
  CMX_OP_SOFTMAX = 7,
  CMX_OP_COPY = 8,
  CMX_OP_MUL = 9,
  CMX_OP_CONV_GENERAL = 10,
  CMX_OP_CONV_ROW = 11,
  CMX_OP_TRANSPOSE = 12,
  CMX_OP_DEPTHWISE_3X3 = 13,
  CMX_OP_FULLY_CONNECTED = 14,
  CMX_OP_LSTM = 15,
  CMX_OP_GRU = 16,
  CMX_OP_LAYER_NORM = 17,
  CMX_OP_MEAN = 18,
  CMX_OP_LUT = 19,
  CMX_OP_BMM = 20,
  CMX_OP_COPY_REGION = 21,
  CMX_OP_CONV_HELIUM = 22,
  CMX_OP_CONV_S4 = 23,
  CMX_OP_DEPTHWISE_S4 = 24,
  CMX_OP_LINEAR_S4 = 25,
  CMX_OP_FULLY_CONNECTED_S4 = 26,
  CMX_OP_CONV_S16 = 27,
  CMX_OP_DEPTHWISE_S16 = 28,
  CMX_OP_LINEAR_S16 = 29,
  CMX_OP_LUT_S16 = 30,
  CMX_OP_ADD_S16 = 31,
  CMX_OP_AVG_POOL_S16 = 32,
  CMX_OP_MAX_POOL_S16 = 33,
  CMX_OP_MUL_S16 = 34,
  CMX_OP_LSTM_S16 = 35,
  CMX_OP_BMM_S16 = 36,
  CMX_OP_SOFTMAX_S16 = 37,
  CMX_OP_ACTIVATION_S16 = 38,
  CMX_OP_LINEAR_PER_CHANNEL = 39,
  CMX_OP_NARROW_S16 = 40,
};

#ifdef CMX_BACKEND_CONV
#define CMX_IF_CONV(...) __VA_ARGS__
#else
#define CMX_IF_CONV(...)
#endif

#ifdef CMX_BACKEND_DEPTHWISE_CONV
#define CMX_IF_DEPTHWISE_CONV(...) __VA_ARGS__
#else
#define CMX_IF_DEPTHWISE_CONV(...)
#endif

#ifdef CMX_BACKEND_LINEAR
#define CMX_IF_LINEAR(...) __VA_ARGS__
#else
#define CMX_IF_LINEAR(...)
#endif

#ifdef CMX_BACKEND_ADD
#define CMX_IF_ADD(...) __VA_ARGS__
#else
#define CMX_IF_ADD(...)
#endif

#ifdef CMX_BACKEND_AVG_POOL
#define CMX_IF_AVG_POOL(...) __VA_ARGS__
#else
#define CMX_IF_AVG_POOL(...)
#endif

#ifdef CMX_BACKEND_MAX_POOL
#define CMX_IF_MAX_POOL(...) __VA_ARGS__
#else
#define CMX_IF_MAX_POOL(...)
#endif

#ifdef CMX_BACKEND_SOFTMAX
#define CMX_IF_SOFTMAX(...) __VA_ARGS__
#else
#define CMX_IF_SOFTMAX(...)
#endif

#define CMX_IF_COPY(...) __VA_ARGS__

#ifdef CMX_BACKEND_MUL
#define CMX_IF_MUL(...) __VA_ARGS__
#else
#define CMX_IF_MUL(...)
#endif

#ifdef CMX_BACKEND_CONV_GENERAL
#define CMX_IF_CONV_GENERAL(...) __VA_ARGS__
#else
#define CMX_IF_CONV_GENERAL(...)
#endif

#ifdef CMX_BACKEND_CONV_ROW
#define CMX_IF_CONV_ROW(...) __VA_ARGS__
#else
#define CMX_IF_CONV_ROW(...)
#endif

#ifdef CMX_BACKEND_TRANSPOSE
#define CMX_IF_TRANSPOSE(...) __VA_ARGS__
#else
#define CMX_IF_TRANSPOSE(...)
#endif

#ifdef CMX_BACKEND_DEPTHWISE_3X3
#define CMX_IF_DEPTHWISE_3X3(...) __VA_ARGS__
#else
#define CMX_IF_DEPTHWISE_3X3(...)
#endif

#ifdef CMX_BACKEND_FULLY_CONNECTED
#define CMX_IF_FULLY_CONNECTED(...) __VA_ARGS__
#else
#define CMX_IF_FULLY_CONNECTED(...)
#endif

#ifdef CMX_BACKEND_LSTM
#define CMX_IF_LSTM(...) __VA_ARGS__
#else
#define CMX_IF_LSTM(...)
#endif

#ifdef CMX_BACKEND_GRU
#define CMX_IF_GRU(...) __VA_ARGS__
#else
#define CMX_IF_GRU(...)
#endif

#ifdef CMX_BACKEND_LAYER_NORM
#define CMX_IF_LAYER_NORM(...) __VA_ARGS__
#else
#define CMX_IF_LAYER_NORM(...)
#endif

#ifdef CMX_BACKEND_MEAN
#define CMX_IF_MEAN(...) __VA_ARGS__
#else
#define CMX_IF_MEAN(...)
#endif

#ifdef CMX_BACKEND_LUT
#define CMX_IF_LUT(...) __VA_ARGS__
#else
#define CMX_IF_LUT(...)
#endif

#ifdef CMX_BACKEND_BMM
#define CMX_IF_BMM(...) __VA_ARGS__
#else
#define CMX_IF_BMM(...)
#endif

#define CMX_IF_COPY_REGION(...) __VA_ARGS__

#ifdef CMX_BACKEND_CONV_HELIUM
#define CMX_IF_CONV_HELIUM(...) __VA_ARGS__
#else
#define CMX_IF_CONV_HELIUM(...)
#endif

#ifdef CMX_BACKEND_CONV_S4
#define CMX_IF_CONV_S4(...) __VA_ARGS__
#else
#define CMX_IF_CONV_S4(...)
#endif

#ifdef CMX_BACKEND_DEPTHWISE_S4
#define CMX_IF_DEPTHWISE_S4(...) __VA_ARGS__
#else
#define CMX_IF_DEPTHWISE_S4(...)
#endif

#ifdef CMX_BACKEND_LINEAR_S4
#define CMX_IF_LINEAR_S4(...) __VA_ARGS__
#else
#define CMX_IF_LINEAR_S4(...)
#endif

#ifdef CMX_BACKEND_FULLY_CONNECTED_S4
#define CMX_IF_FULLY_CONNECTED_S4(...) __VA_ARGS__
#else
#define CMX_IF_FULLY_CONNECTED_S4(...)
#endif

#ifdef CMX_BACKEND_CONV_S16
#define CMX_IF_CONV_S16(...) __VA_ARGS__
#else
#define CMX_IF_CONV_S16(...)
#endif

#ifdef CMX_BACKEND_DEPTHWISE_S16
#define CMX_IF_DEPTHWISE_S16(...) __VA_ARGS__
#else
#define CMX_IF_DEPTHWISE_S16(...)
#endif

#ifdef CMX_BACKEND_LINEAR_S16
#define CMX_IF_LINEAR_S16(...) __VA_ARGS__
#else
#define CMX_IF_LINEAR_S16(...)
#endif

#ifdef CMX_BACKEND_LUT_S16
#define CMX_IF_LUT_S16(...) __VA_ARGS__
#else
#define CMX_IF_LUT_S16(...)
#endif

#ifdef CMX_BACKEND_ADD_S16
#define CMX_IF_ADD_S16(...) __VA_ARGS__
#else
#define CMX_IF_ADD_S16(...)
#endif

#ifdef CMX_BACKEND_AVG_POOL_S16
#define CMX_IF_AVG_POOL_S16(...) __VA_ARGS__
#else
#define CMX_IF_AVG_POOL_S16(...)
#endif

#ifdef CMX_BACKEND_MAX_POOL_S16
#define CMX_IF_MAX_POOL_S16(...) __VA_ARGS__
#else
#define CMX_IF_MAX_POOL_S16(...)
#endif

#ifdef CMX_BACKEND_MUL_S16
#define CMX_IF_MUL_S16(...) __VA_ARGS__
#else
#define CMX_IF_MUL_S16(...)
#endif

#ifdef CMX_BACKEND_LSTM_S16
#define CMX_IF_LSTM_S16(...) __VA_ARGS__
#else
#define CMX_IF_LSTM_S16(...)
#endif

#ifdef CMX_BACKEND_BMM_S16
#define CMX_IF_BMM_S16(...) __VA_ARGS__
#else
#define CMX_IF_BMM_S16(...)
#endif

#ifdef CMX_BACKEND_SOFTMAX_S16
#define CMX_IF_SOFTMAX_S16(...) __VA_ARGS__
#else
#define CMX_IF_SOFTMAX_S16(...)
#endif

#ifdef CMX_BACKEND_ACTIVATION_S16
#define CMX_IF_ACTIVATION_S16(...) __VA_ARGS__
#else
#define CMX_IF_ACTIVATION_S16(...)
#endif

#ifdef CMX_BACKEND_LINEAR_PER_CHANNEL
#define CMX_IF_LINEAR_PER_CHANNEL(...) __VA_ARGS__
#else
#define CMX_IF_LINEAR_PER_CHANNEL(...)
#endif

#ifdef CMX_BACKEND_NARROW_S16
#define CMX_IF_NARROW_S16(...) __VA_ARGS__
#else
#define CMX_IF_NARROW_S16(...)
#endif

#define CMX_PLAN_KINDS(X) \
  X(CONV, conv) \
  X(DEPTHWISE_CONV, depthwise_conv) \
  X(LINEAR, linear) \
  X(ADD, add) \
  X(AVG_POOL, avg_pool) \
  X(MAX_POOL, max_pool) \
  X(SOFTMAX, softmax) \
  X(COPY, copy) \
  X(MUL, mul) \
  X(CONV_GENERAL, conv_general) \
  X(CONV_ROW, conv_row) \
  X(TRANSPOSE, transpose) \
  X(DEPTHWISE_3X3, depthwise_3x3) \
  X(FULLY_CONNECTED, fully_connected) \
  X(LSTM, lstm) \
  X(GRU, gru) \
  X(LAYER_NORM, layer_norm) \
  X(MEAN, mean) \
  X(LUT, lut) \
  X(BMM, bmm) \
  X(COPY_REGION, copy_region) \
  X(CONV_HELIUM, conv_helium) \
  X(CONV_S4, conv_s4) \
  X(DEPTHWISE_S4, depthwise_s4) \
  X(LINEAR_S4, linear_s4) \
  X(FULLY_CONNECTED_S4, fully_connected_s4) \
  X(CONV_S16, conv_s16) \
  X(DEPTHWISE_S16, depthwise_s16) \
  X(LINEAR_S16, linear_s16) \
  X(LUT_S16, lut_s16) \
  X(ADD_S16, add_s16) \
  X(AVG_POOL_S16, avg_pool_s16) \
  X(MAX_POOL_S16, max_pool_s16) \
  X(MUL_S16, mul_s16) \
  X(LSTM_S16, lstm_s16) \
  X(BMM_S16, bmm_s16) \
  X(SOFTMAX_S16, softmax_s16) \
  X(ACTIVATION_S16, activation_s16) \
  X(LINEAR_PER_CHANNEL, linear_per_channel) \
  X(NARROW_S16, narrow_s16) \


#define CMX_PLAN_KINDS_IN(X) \
  CMX_IF_CONV(X(CONV, conv)) \
  CMX_IF_DEPTHWISE_CONV(X(DEPTHWISE_CONV, depthwise_conv)) \
  CMX_IF_LINEAR(X(LINEAR, linear)) \
  CMX_IF_ADD(X(ADD, add)) \
  CMX_IF_AVG_POOL(X(AVG_POOL, avg_pool)) \
  CMX_IF_MAX_POOL(X(MAX_POOL, max_pool)) \
  CMX_IF_SOFTMAX(X(SOFTMAX, softmax)) \
  CMX_IF_COPY(X(COPY, copy)) \
  CMX_IF_MUL(X(MUL, mul)) \
  CMX_IF_CONV_GENERAL(X(CONV_GENERAL, conv_general)) \
  CMX_IF_CONV_ROW(X(CONV_ROW, conv_row)) \
  CMX_IF_TRANSPOSE(X(TRANSPOSE, transpose)) \
  CMX_IF_DEPTHWISE_3X3(X(DEPTHWISE_3X3, depthwise_3x3)) \
  CMX_IF_FULLY_CONNECTED(X(FULLY_CONNECTED, fully_connected)) \
  CMX_IF_LSTM(X(LSTM, lstm)) \
  CMX_IF_GRU(X(GRU, gru)) \
  CMX_IF_LAYER_NORM(X(LAYER_NORM, layer_norm)) \
  CMX_IF_MEAN(X(MEAN, mean)) \
  CMX_IF_LUT(X(LUT, lut)) \
  CMX_IF_BMM(X(BMM, bmm)) \
  CMX_IF_COPY_REGION(X(COPY_REGION, copy_region)) \
  CMX_IF_CONV_HELIUM(X(CONV_HELIUM, conv_helium)) \
  CMX_IF_CONV_S4(X(CONV_S4, conv_s4)) \
  CMX_IF_DEPTHWISE_S4(X(DEPTHWISE_S4, depthwise_s4)) \
  CMX_IF_LINEAR_S4(X(LINEAR_S4, linear_s4)) \
  CMX_IF_FULLY_CONNECTED_S4(X(FULLY_CONNECTED_S4, fully_connected_s4)) \
  CMX_IF_CONV_S16(X(CONV_S16, conv_s16)) \
  CMX_IF_DEPTHWISE_S16(X(DEPTHWISE_S16, depthwise_s16)) \
  CMX_IF_LINEAR_S16(X(LINEAR_S16, linear_s16)) \
  CMX_IF_LUT_S16(X(LUT_S16, lut_s16)) \
  CMX_IF_ADD_S16(X(ADD_S16, add_s16)) \
  CMX_IF_AVG_POOL_S16(X(AVG_POOL_S16, avg_pool_s16)) \
  CMX_IF_MAX_POOL_S16(X(MAX_POOL_S16, max_pool_s16)) \
  CMX_IF_MUL_S16(X(MUL_S16, mul_s16)) \
  CMX_IF_LSTM_S16(X(LSTM_S16, lstm_s16)) \
  CMX_IF_BMM_S16(X(BMM_S16, bmm_s16)) \
  CMX_IF_SOFTMAX_S16(X(SOFTMAX_S16, softmax_s16)) \
  CMX_IF_ACTIVATION_S16(X(ACTIVATION_S16, activation_s16)) \
  CMX_IF_LINEAR_PER_CHANNEL(X(LINEAR_PER_CHANNEL, linear_per_channel)) \
  CMX_IF_NARROW_S16(X(NARROW_S16, narrow_s16)) \

