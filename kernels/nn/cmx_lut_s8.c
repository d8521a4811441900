/* cmx_lut_s8: an element-wise operator on int8 as a 256-entry table (issue 34); see cmx_nn.h. */
#include "cmx_nn.h"

arm_cmsis_nn_status cmx_lut_s8(const int8_t* input, int8_t* output, int32_t count, const int8_t* table) {
  if (count < 1 || table == NULL) return ARM_CMSIS_NN_ARG_ERROR;
  const int8_t* centre = table + 128;
  for (int32_t i = 0; i < count; ++i) output[i] = centre[input[i]];
  return ARM_CMSIS_NN_SUCCESS;
}

arm_cmsis_nn_status cmx_lut_s8_s16(const int8_t* input, int16_t* output, int32_t count, const int16_t* table) {
  if (count < 1 || table == NULL) return ARM_CMSIS_NN_ARG_ERROR;
  const int16_t* centre = table + 128;
  for (int32_t i = count - 1; i >= 0; --i) output[i] = centre[input[i]]; /* last first: output may start at input */
  return ARM_CMSIS_NN_SUCCESS;
}
