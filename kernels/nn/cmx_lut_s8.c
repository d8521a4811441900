/* cmx_lut_s8: an element-wise operator on int8 as a 256-entry table (issue 34); see cmx_nn.h. */
#include "arm_nnsupportfunctions.h" /* arm_mve.h on Helium */
#include "cmx_nn.h"

arm_cmsis_nn_status cmx_lut_s8(const int8_t* input, int8_t* output, int32_t count, const int8_t* table) {
  if (count < 1 || table == NULL) return ARM_CMSIS_NN_ARG_ERROR;
#if defined(ARM_MATH_MVEI)
  /* sixteen at a time: each value + 128 (its top bit flipped) as a byte offset into the table, one gather;
   * the sixteen are loaded before they are stored, so an output at or below the input stays exact */
  for (int32_t i = 0; i < count; i += 16) {
    const mve_pred16_t lanes = vctp8q((uint32_t)(count - i));
    const uint8x16_t at = veorq_u8(vreinterpretq_u8_s8(vldrbq_z_s8(input + i, lanes)), vdupq_n_u8(0x80));
    vstrbq_p_s8(output + i, vldrbq_gather_offset_z_s8(table, at, lanes), lanes);
  }
#else
  const int8_t* centre = table + 128;
  for (int32_t i = 0; i < count; ++i) output[i] = centre[input[i]];
#endif
  return ARM_CMSIS_NN_SUCCESS;
}

arm_cmsis_nn_status cmx_lut_s8_s16(const int8_t* input, int16_t* output, int32_t count, const int16_t* table) {
  if (count < 1 || table == NULL) return ARM_CMSIS_NN_ARG_ERROR;
  const int16_t* centre = table + 128;
  for (int32_t i = count - 1; i >= 0; --i) output[i] = centre[input[i]]; /* last first: output may start at input */
  return ARM_CMSIS_NN_SUCCESS;
}

arm_cmsis_nn_status cmx_narrow_s16_s8(const int16_t* input, int8_t* output, int32_t count, const int16_t* thresholds,
                                      int32_t steps, int32_t lowest, int32_t multiplier, int32_t shift) {
  if (count < 1 || steps < 0 || steps > 255 || (steps > 0 && thresholds == NULL)) return ARM_CMSIS_NN_ARG_ERROR;
  const int32_t first = steps > 0 ? thresholds[0] : 0;
#if defined(ARM_MATH_MVEI)
  /* four at a time, each lane's walk predicated: a gather of the threshold above (below) its step, a step
   * up (down) where it is passed, until no lane moves; the four are loaded before they are stored, and their
   * bytes end below the next four's input */
  const int32x4_t to_right = vdupq_n_s32(-shift);
  for (int32_t i = 0; i < count; i += 4) {
    const mve_pred16_t lanes = vctp32q((uint32_t)(count - i));
    const int32x4_t value = vldrhq_z_s32(input + i, lanes);
    int32x4_t k = vshlq_s32(vmulq_n_s32(vsubq_n_s32(value, first), multiplier), to_right);
    k = vmaxq_s32(vminq_s32(vaddq_n_s32(k, 1), vdupq_n_s32(steps)), vdupq_n_s32(0));
    for (;;) {
      const mve_pred16_t below = vcmpltq_n_s32(k, steps) & lanes;
      const int32x4_t at = vldrhq_gather_shifted_offset_z_s32(thresholds, vreinterpretq_u32_s32(k), below);
      const mve_pred16_t up = vcmpleq_m_s32(at, value, below);
      if (up == 0) break;
      k = vaddq_m_n_s32(k, k, 1, up);
    }
    for (;;) {
      const mve_pred16_t above = vcmpgtq_n_s32(k, 0) & lanes;
      const uint32x4_t before = vreinterpretq_u32_s32(vsubq_n_s32(k, 1));
      const int32x4_t at = vldrhq_gather_shifted_offset_z_s32(thresholds, before, above);
      const mve_pred16_t down = vcmpgtq_m_s32(at, value, above);
      if (down == 0) break;
      k = vsubq_m_n_s32(k, k, 1, down);
    }
    vstrbq_p_s32(output + i, vaddq_n_s32(k, lowest), lanes);
  }
#else
  for (int32_t i = 0; i < count; ++i) { /* first to last: output byte i lies in input bytes already read */
    const int32_t value = input[i];
    int32_t k = ((value - first) * multiplier >> shift) + 1;
    k = k < 0 ? 0 : (k > steps ? steps : k);
    while (k < steps && thresholds[k] <= value) ++k;
    while (k > 0 && thresholds[k - 1] > value) --k;
    output[i] = (int8_t)(lowest + k);
  }
#endif
  return ARM_CMSIS_NN_SUCCESS;
}
