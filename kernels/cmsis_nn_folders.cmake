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
# *_nhwc variants (executorch >= 1.5.1) call the same CMSIS-NN functions.
foreach(_op quantized_conv2d quantized_depthwise_conv2d quantized_transpose_conv2d quantized_avg_pool2d)
  set(CMX_NN_${_op}_nhwc ${CMX_NN_${_op}})
endforeach()

# cmx-gen's own backend (backend/cmx_backend.cpp): each layer kind calls what the cortex_m kernel
# it replaces calls (copy calls nothing).
set(CMX_NN_LAYER_conv quantized_conv2d)
set(CMX_NN_LAYER_conv_general quantized_conv2d)
set(CMX_NN_LAYER_depthwise_conv quantized_depthwise_conv2d)
set(CMX_NN_LAYER_linear quantized_linear)
set(CMX_NN_LAYER_add quantized_add)
set(CMX_NN_LAYER_mul quantized_mul)
set(CMX_NN_LAYER_avg_pool quantized_avg_pool2d)
set(CMX_NN_LAYER_max_pool quantized_max_pool2d)
set(CMX_NN_LAYER_softmax softmax)
set(CMX_NN_LAYER_lstm lstm)
set(CMX_NN_LAYER_gru gru)
set(CMX_NN_LAYER_bmm quantized_batch_matmul)
# ... and the layer kinds that run cmx-gen's own kernel (nn/<file>), which needs CMSIS-NN's headers only.
set(CMX_OWN_LAYER_conv_row cmx_conv_row_s8.c)
set(CMX_OWN_LAYER_add cmx_add_s8.c)  # CMSIS-NN's arm_elementwise_add_s8 too: the Helium cores and other shifts
set(CMX_OWN_LAYER_transpose cmx_transpose_s8.c)
set(CMX_OWN_LAYER_depthwise_3x3 cmx_depthwise_3x3_s8.c)
set(CMX_OWN_LAYER_fully_connected cmx_fully_connected_s8.c)
set(CMX_OWN_LAYER_conv_helium cmx_conv_helium_s8.c)
set(CMX_OWN_LAYER_gru cmx_gru_s8.c)
set(CMX_OWN_LAYER_layer_norm cmx_layer_norm_s8.c)
set(CMX_OWN_LAYER_mean cmx_mean_s8.c)
set(CMX_OWN_LAYER_lut cmx_lut_s8.c)
set(CMX_OWN_LAYER_bmm cmx_transpose_s8.c)  # its operand b transposed for arm_batch_matmul_s8

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
