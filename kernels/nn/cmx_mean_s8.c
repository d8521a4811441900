/* cmx_mean_s8: a mean over one run of dimensions of int8 data (issue 34); see cmx_nn.h. */
#include "arm_nnsupportfunctions.h"
#include "cmx_nn.h"

arm_cmsis_nn_status cmx_mean_s8(const int8_t* input, int8_t* output, int32_t outer, int32_t count, int32_t inner,
                                int32_t multiplier, int32_t shift, int32_t input_offset, int32_t output_offset) {
  if (outer < 1 || count < 1 || inner < 1) return ARM_CMSIS_NN_ARG_ERROR;
  for (int32_t o = 0; o < outer; ++o) {
    for (int32_t i = 0; i < inner; ++i) {
      const int8_t* at = input + (o * count) * inner + i;
      int32_t sum = 0;
      for (int32_t c = 0; c < count; ++c, at += inner) sum += *at + input_offset;
      int32_t v = arm_nn_requantize(sum, multiplier, shift) + output_offset;
      output[o * inner + i] = (int8_t)(v > 127 ? 127 : (v < -128 ? -128 : v));
    }
  }
  return ARM_CMSIS_NN_SUCCESS;
}
