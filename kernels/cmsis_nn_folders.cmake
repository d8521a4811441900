# Which CMSIS-NN Source/ folders each cortex_m kernel calls into (data, read by CMakeLists.txt).
# NNSupportFunctions holds the shared inner loops and is added whenever any folder is used.
# A kernel missing here links with "undefined reference to arm_...": add its folder.
set(CMX_NN_quantized_conv2d ConvolutionFunctions TransposeFunctions)
set(CMX_NN_quantized_depthwise_conv2d ConvolutionFunctions TransposeFunctions)
set(CMX_NN_quantized_transpose_conv2d ConvolutionFunctions TransposeFunctions)
set(CMX_NN_quantized_linear FullyConnectedFunctions)
set(CMX_NN_quantized_batch_matmul FullyConnectedFunctions)
set(CMX_NN_quantized_max_pool2d PoolingFunctions)
set(CMX_NN_quantized_avg_pool2d PoolingFunctions)
set(CMX_NN_quantized_add BasicMathFunctions)
set(CMX_NN_quantized_mul BasicMathFunctions)
set(CMX_NN_maximum BasicMathFunctions)
set(CMX_NN_minimum BasicMathFunctions)
set(CMX_NN_pad PadFunctions)
set(CMX_NN_softmax SoftmaxFunctions)
set(CMX_NN_transpose TransposeFunctions)
# cmx::quantized_lstm (cmx-gen's backend only): arm_lstm_unidirectional_s8 and its int16 helpers,
# which the s8-only filter of CMakeLists.txt would drop (CMX_NN_KEEP_<layer>).
set(CMX_NN_lstm LSTMFunctions ActivationFunctions BasicMathFunctions)
# cmx::quantized_gru (cmx-gen's cmx_gru_s8) calls the same gate blocks.
set(CMX_NN_gru ActivationFunctions)
set(CMX_NN_KEEP_gru arm_nn_activation_s16.c)
set(CMX_NN_KEEP_lstm arm_nn_activation_s16.c arm_elementwise_mul_s16.c arm_elementwise_mul_acc_s16.c
    arm_elementwise_mul_s16_s8.c)
# The 4-bit-weight kinds (cmx-gen's backend, `weights = "int4"`): CMSIS-NN's s4 kernels and their helpers,
# which the s8-only filter would drop.
set(CMX_NN_KEEP_conv_s4 arm_convolve_wrapper_s4.c arm_convolve_s4.c arm_convolve_even_s4.c arm_convolve_1x1_s4.c
    arm_convolve_1x1_s4_fast.c arm_convolve_1_x_n_s4.c arm_convolve_get_buffer_sizes_s4.c
    arm_nn_mat_mult_kernel_s4_s16.c arm_nn_mat_mult_nt_t_s4.c arm_nn_mat_mult_nt_interleaved_t_even_s4.c
    arm_nn_mat_mul_core_1x_s4.c)
set(CMX_NN_KEEP_depthwise_s4 arm_depthwise_conv_wrapper_s4.c arm_depthwise_conv_s4.c arm_depthwise_conv_s4_opt.c
    arm_depthwise_conv_get_buffer_sizes_s4.c arm_nn_depthwise_conv_nt_t_s4.c)
set(CMX_NN_KEEP_linear_s4 arm_fully_connected_s4.c arm_nn_vec_mat_mult_t_s4.c)
# The 16-bit-activation kinds (`precision = "int16"`): CMSIS-NN's s16 kernels and their helpers.
set(CMX_NN_KEEP_conv_s16 arm_convolve_wrapper_s16.c arm_convolve_s16.c arm_convolve_get_buffer_sizes_s16.c
    arm_nn_mat_mult_kernel_s16.c arm_nn_mat_mult_nt_t_s16.c)
set(CMX_NN_KEEP_depthwise_s16 arm_depthwise_conv_wrapper_s16.c arm_depthwise_conv_s16.c arm_depthwise_conv_fast_s16.c
    arm_depthwise_conv_get_buffer_sizes_s16.c arm_nn_depthwise_conv_nt_t_s16.c)
set(CMX_NN_KEEP_linear_s16 arm_fully_connected_s16.c arm_fully_connected_get_buffer_sizes_s16.c
    arm_nn_vec_mat_mult_t_s16.c)
set(CMX_NN_KEEP_add_s16 arm_elementwise_add_s16.c)
set(CMX_NN_KEEP_mul_s16 arm_elementwise_mul_s16.c)
set(CMX_NN_KEEP_avg_pool_s16 arm_avgpool_s16.c arm_avgpool_get_buffer_sizes_s16.c)
set(CMX_NN_KEEP_max_pool_s16 arm_max_pool_s16.c)
set(CMX_NN_KEEP_lstm_s16 arm_lstm_unidirectional_s16.c arm_nn_lstm_step_s16.c arm_nn_lstm_calculate_gate_s16.c
    arm_nn_vec_mat_mul_result_acc_s16.c arm_elementwise_mul_s16_batch_offset.c arm_nn_activation_s16.c
    arm_elementwise_mul_s16.c arm_elementwise_mul_acc_s16.c)
set(CMX_NN_KEEP_bmm_s16 arm_batch_matmul_s16.c arm_nn_vec_mat_mult_t_s16_s16.c)
set(CMX_NN_KEEP_softmax_s16 arm_softmax_s16.c)
set(CMX_NN_activation_s16 ActivationFunctions)  # sigmoid and tanh of int16 values (cmx-gen's backend only)
set(CMX_NN_KEEP_activation_s16 arm_nn_activation_s16.c)
# *_nhwc variants (executorch >= 1.5.1) call the same CMSIS-NN functions.
foreach(_op quantized_conv2d quantized_depthwise_conv2d quantized_transpose_conv2d quantized_avg_pool2d)
  set(CMX_NN_${_op}_nhwc ${CMX_NN_${_op}})
endforeach()

# cmx-gen's own backend (backend/cmx_backend.cpp): what each layer kind links, CMX_NN_LAYER_<kind> and
# CMX_OWN_LAYER_<kind>, is generated from its record (cmx_gen/data/backend_layers.yaml).
include(${CMAKE_CURRENT_LIST_DIR}/backend/cmx_backend_layers.cmake)

# cmx_cmsis_nn_folders(<out-var> "<cortex_m op base names>")
function(cmx_cmsis_nn_folders out ops)
  set(_folders "")
  foreach(_op IN LISTS ops)
    if(DEFINED CMX_NN_${_op})
      list(APPEND _folders ${CMX_NN_${_op}})
    endif()
  endforeach()
  if(_folders)
    list(APPEND _folders NNSupportFunctions)
    list(REMOVE_DUPLICATES _folders)
    list(SORT _folders)
  endif()
  set(${out} "${_folders}" PARENT_SCOPE)
endfunction()
