/* cmx_softmax_s8: arm_softmax_s8's result from a table of its exponentials; see cmx_nn.h.
 *
 * arm_nn_softmax_common_s8 computes EXP_ON_NEG(MUL_SAT(diff * 2^shift, mult)) twice for every element
 * (its row sum, then its output), about 270 instructions each in C. The value depends on diff alone,
 * the element's distance below its row's maximum, which takes at most 256 values: the table computes
 * each once with CMSIS-NN's own functions, and the rows read it. Everything else is the loop of
 * arm_nn_softmax_common_s8 as it is, so the bytes are the same. */
#include "arm_nnsupportfunctions.h"
#include "cmx_nn.h"

#define ACCUM_BITS 12 /* arm_nn_softmax_common_s8's */

int32_t cmx_softmax_s8_table_entries(int32_t diff_min) {
  return diff_min <= -(CMX_SOFTMAX_TABLE - 1) ? CMX_SOFTMAX_TABLE : 1 - diff_min;
}

arm_cmsis_nn_status cmx_softmax_s8_table(int32_t mult, int32_t shift, int32_t diff_min, int32_t* table) {
  if (table == NULL || diff_min > 0 || shift < 0 || shift > 31) return ARM_CMSIS_NN_ARG_ERROR;
  const int32_t mask = (int32_t)(1u << shift);
  const int32_t entries = cmx_softmax_s8_table_entries(diff_min);
  for (int32_t k = 0; k < entries; ++k) table[k] = EXP_ON_NEG(MUL_SAT(-k * mask, mult));
  return ARM_CMSIS_NN_SUCCESS;
}

arm_cmsis_nn_status cmx_softmax_s8(const int8_t* input, int32_t num_rows, int32_t row_size, int32_t diff_min,
                                   const int32_t* table, int8_t* output) {
  if (input == NULL || output == NULL || table == NULL || num_rows < 1 || row_size < 1 || diff_min > 0) {
    return ARM_CMSIS_NN_ARG_ERROR;
  }
  for (int32_t row = 0; row < num_rows; ++row, input += row_size, output += row_size) {
    int8_t max = input[0];
    for (int32_t col = 1; col < row_size; ++col) max = MAX(max, input[col]);
    int32_t sum = 0;
    for (int32_t col = 0; col < row_size; ++col) {
      const int32_t diff = input[col] - max;
      if (diff >= diff_min) sum += DIV_POW2(table[-diff], ACCUM_BITS);
    }
    const int32_t headroom = CLZ(sum);
    const int32_t shifted_scale = ONE_OVER1((sum > 0 ? sum << headroom : 0) - (1 << 31));
    const int32_t bits_over_unit = ACCUM_BITS - headroom + 23;
    for (int32_t col = 0; col < row_size; ++col) { /* input[col] read before output[col]: in place is safe */
      const int32_t diff = input[col] - max;
      if (diff >= diff_min) {
        const int32_t res = DIV_POW2(MUL_SAT(shifted_scale, table[-diff]), bits_over_unit) + NN_Q7_MIN;
        output[col] = (int8_t)CLAMP(res, (int32_t)NN_Q7_MAX, (int32_t)NN_Q7_MIN);
      } else {
        output[col] = NN_Q7_MIN;
      }
    }
  }
  return ARM_CMSIS_NN_SUCCESS;
}
