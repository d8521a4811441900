/* cmx_transpose_s8: a layout change of int8 data (NCHW <-> NHWC and the like) as a batch of 2-D
 * transposes, inside cmx-gen's backend instead of a portable _clone_dim_order call between two
 * delegate calls (that kernel walks every element through a generic index: ~45 instructions an
 * element on M4; this loop ~4). */
#include "cmx_nn.h"

arm_cmsis_nn_status cmx_transpose_s8(const int8_t* input, int8_t* output, int32_t batches, int32_t rows,
                                     int32_t cols) {
  if (batches < 1 || rows < 1 || cols < 1) return ARM_CMSIS_NN_ARG_ERROR;
  for (int32_t b = 0; b < batches; ++b) {
    const int8_t* src = input + b * rows * cols;
    int8_t* dst = output + b * rows * cols;
    for (int32_t r = 0; r < rows; ++r) {
      int8_t* to = dst + r;
      for (int32_t c = 0; c < cols; ++c) {
        *to = *src++;
        to += rows;
      }
    }
  }
  return ARM_CMSIS_NN_SUCCESS;
}
