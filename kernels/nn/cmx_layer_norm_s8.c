/* cmx_layer_norm_s8: LayerNorm of int8 rows in integers only, so that the host model
 * (kernel_models.layer_norm_s8) is the same arithmetic on every core (issue 34); see cmx_nn.h. */
#include "cmx_nn.h"

static uint64_t isqrt64(uint64_t v) { /* floor(sqrt(v)), bit by bit */
  uint64_t root = 0, bit = 1ull << 62;
  while (bit > v) bit >>= 2;
  while (bit) {
    if (v >= root + bit) {
      v -= root + bit;
      root = (root >> 1) + bit;
    } else {
      root >>= 1;
    }
    bit >>= 2;
  }
  return root;
}

static int64_t div_round(int64_t num, int64_t den) { /* half away from zero, den > 0 */
  const int64_t magnitude = ((num < 0 ? -num : num) + den / 2) / den;
  return num < 0 ? -magnitude : magnitude;
}

arm_cmsis_nn_status cmx_layer_norm_s8(const int8_t* input, int8_t* output, int32_t rows, int32_t channels,
                                      int32_t input_offset, int32_t output_offset, int64_t eps, const int32_t* gains,
                                      const int32_t* biases) {
  if (rows < 1 || channels < 1 || eps < 0 || gains == NULL || biases == NULL) return ARM_CMSIS_NN_ARG_ERROR;
  for (int32_t r = 0; r < rows; ++r, input += channels, output += channels) {
    int64_t s1 = 0, s2 = 0;
    for (int32_t c = 0; c < channels; ++c) {
      const int64_t d = input[c] + input_offset;
      s1 += d;
      s2 += d * d;
    }
    const int64_t root = (int64_t)isqrt64((uint64_t)(channels * s2 - s1 * s1 + eps) << 16);
    for (int32_t c = 0; c < channels; ++c) {
      const int64_t centred = (int64_t)channels * (input[c] + input_offset) - s1;
      const int64_t scaled = root > 0 ? div_round(256 * centred * gains[c], root) : 0;
      const int64_t y = ((scaled + biases[c] + (1 << 15)) >> 16) + output_offset;
      output[c] = (int8_t)(y > 127 ? 127 : (y < -128 ? -128 : y));
    }
  }
  return ARM_CMSIS_NN_SUCCESS;
}
