/* cmx_transpose_s16: a batch of 2-D transposes of int16 data: an int16 batch matmul's b laid out as
 * arm_batch_matmul_s16 reads it ([batch][cols][inner]). CMSIS-NN has no s16 transpose. */
#include "cmx_nn.h"

arm_cmsis_nn_status cmx_transpose_s16(const int16_t* input, int16_t* output, int32_t batches, int32_t rows,
                                      int32_t cols) {
  if (batches < 1 || rows < 1 || cols < 1) return ARM_CMSIS_NN_ARG_ERROR;
  for (int32_t b = 0; b < batches; ++b) {
    const int16_t* src = input + b * rows * cols;
    int16_t* dst = output + b * rows * cols;
    for (int32_t r = 0; r < rows; ++r) {
      int16_t* to = dst + r;
      for (int32_t c = 0; c < cols; ++c) {
        *to = *src++;
        to += rows;
      }
    }
  }
  return ARM_CMSIS_NN_SUCCESS;
}
