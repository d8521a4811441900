/* cmx_fully_connected_s4: a fully connected layer with 4-bit weights (per-tensor quantization,
 * symmetric weights in [-8, 7]), the result of arm_fully_connected_s4 on the DSP cores (M4/M7/M33).
 *
 * CMSIS-NN's DSP path takes each weight out of its byte with a shift pair and sign extension
 * (about 5.6 cycles a MAC on the M4). Here the plan stores each weight offset by 8 (0..15) and each
 * group of 8 columns in one word whose byte k holds column k in its low nibble and column 4 + k in
 * its high one: `w & 0x000F000F` is columns 0 and 2 as two halfwords, `w >> 8`, `w >> 4`, `w >> 12`
 * the other pairs, each one AND, each met by the input's SXTAB16 pairs in one SMLAD. The offset by 8
 * comes back as 8 x the sum of the input (with its offset) once a row: sum((x + o)(u - 8)) =
 * sum((x + o) u) - 8 sum(x + o). Four rows share each group's widened input (their words side by
 * side); the requantization is CMSIS-NN's arm_nn_requantize. */
#include <string.h>

#include "arm_nnfunctions.h"
#include "arm_nnsupportfunctions.h"
#include "cmx_nn.h"

#if defined(ARM_MATH_DSP) && !defined(ARM_MATH_MVEI)
/* `(w >> shift) & m` in one instruction (AND with a shifted register: GCC otherwise shifts, then ANDs
 * with the immediate). */
#if defined(__GNUC__) && defined(__thumb2__)
#define CMX_NIBBLES(w, m, shift)                                                  \
  ({                                                                              \
    uint32_t _r;                                                                  \
    __asm__("and %0, %1, %2, lsr #" #shift : "=r"(_r) : "r"(m), "r"(w));          \
    _r;                                                                           \
  })
#else
#define CMX_NIBBLES(w, m, shift) (((w) >> (shift)) & (m))
#endif

/* One group's four column pairs of weight word `w` against the widened input pairs (m: 0x000F000F). */
static inline int32_t dot8(uint32_t w, uint32_t m, const int32_t x[4], int32_t acc) {
  acc = SMLAD(w & m, x[0], acc);
  acc = SMLAD(CMX_NIBBLES(w, m, 8), x[1], acc);
  acc = SMLAD(CMX_NIBBLES(w, m, 4), x[2], acc);
  return SMLAD(CMX_NIBBLES(w, m, 12), x[3], acc);
}

/* Eight input bytes, the offset added, as the four halfword pairs dot8 meets: columns (0, 2), (1, 3),
 * (4, 6), (5, 7). */
static inline void widen(const int8_t* at, int32_t offset2, int32_t x[4]) {
  int32_t a, b;
  memcpy(&a, at, 4);
  memcpy(&b, at + 4, 4);
  x[0] = SXTAB16(offset2, a);
  x[1] = SXTAB16_RORn(offset2, (uint32_t)a, 8);
  x[2] = SXTAB16(offset2, b);
  x[3] = SXTAB16_RORn(offset2, (uint32_t)b, 8);
}

/* The last group's input: its missing columns read as 0 (their weights are 0 too, stored as 8). */
static inline void widen_tail(const int8_t* at, int32_t count, int32_t offset2, int32_t x[4]) {
  int8_t tail[CMX_FC_S4_GROUP] = {0};
  memcpy(tail, at, (size_t)count);
  widen(tail, offset2, x);
}

static inline int8_t finish(int32_t acc, const cmsis_nn_per_tensor_quant_params* q, const cmsis_nn_fc_params* p) {
  acc = arm_nn_requantize(acc, q->multiplier, q->shift) + p->output_offset;
  acc = MAX(acc, p->activation.min);
  return (int8_t)MIN(acc, p->activation.max);
}
#endif

arm_cmsis_nn_status cmx_fully_connected_s4(const cmsis_nn_fc_params* params,
                                           const cmsis_nn_per_tensor_quant_params* quant,
                                           const cmsis_nn_dims* input_dims, const int8_t* input,
                                           const cmsis_nn_dims* filter_dims, const uint8_t* weights,
                                           const int32_t* bias, const cmsis_nn_dims* output_dims, int8_t* output) {
#if defined(ARM_MATH_DSP) && !defined(ARM_MATH_MVEI)
  const int32_t cols = filter_dims->n, rows = output_dims->c, batches = input_dims->n;
  if (params->filter_offset != 0 || ((uintptr_t)weights & 3) != 0 || cols < 1 || rows < 1) {
    return ARM_CMSIS_NN_ARG_ERROR;
  }
  const int32_t groups = (cols + CMX_FC_S4_GROUP - 1) / CMX_FC_S4_GROUP, blocks = rows / CMX_FC_S4_ROWS;
  const int32_t full = cols / CMX_FC_S4_GROUP, tail = cols % CMX_FC_S4_GROUP;
  const int32_t offset = params->input_offset, offset2 = (int32_t)PKHBT(offset, offset, 16);
  const uint32_t m = 0x000F000Fu;
  for (int32_t n = 0; n < batches; ++n, input += cols, output += rows) {
    int32_t sum = groups * CMX_FC_S4_GROUP * offset; /* sum(x + o) over the padded columns */
    for (int32_t i = 0; i < cols; ++i) sum += input[i];
    const int32_t eight_sum = 8 * sum;
    const uint32_t* w = (const uint32_t*)weights;
    int32_t r = 0;
    for (; r < blocks * CMX_FC_S4_ROWS; r += CMX_FC_S4_ROWS) {
      int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, x[4];
      for (int32_t g = 0; g < full; ++g, w += CMX_FC_S4_ROWS) {
        widen(input + g * CMX_FC_S4_GROUP, offset2, x);
        a0 = dot8(w[0], m, x, a0);
        a1 = dot8(w[1], m, x, a1);
        a2 = dot8(w[2], m, x, a2);
        a3 = dot8(w[3], m, x, a3);
      }
      if (tail) {
        widen_tail(input + full * CMX_FC_S4_GROUP, tail, offset2, x);
        a0 = dot8(w[0], m, x, a0);
        a1 = dot8(w[1], m, x, a1);
        a2 = dot8(w[2], m, x, a2);
        a3 = dot8(w[3], m, x, a3);
        w += CMX_FC_S4_ROWS;
      }
      const int32_t b0 = bias ? bias[r] : 0, b1 = bias ? bias[r + 1] : 0;
      const int32_t b2 = bias ? bias[r + 2] : 0, b3 = bias ? bias[r + 3] : 0;
      output[r] = finish(a0 - eight_sum + b0, quant, params);
      output[r + 1] = finish(a1 - eight_sum + b1, quant, params);
      output[r + 2] = finish(a2 - eight_sum + b2, quant, params);
      output[r + 3] = finish(a3 - eight_sum + b3, quant, params);
    }
    for (; r < rows; ++r) {
      int32_t acc = 0, x[4];
      for (int32_t g = 0; g < full; ++g) {
        widen(input + g * CMX_FC_S4_GROUP, offset2, x);
        acc = dot8(*w++, m, x, acc);
      }
      if (tail) {
        widen_tail(input + full * CMX_FC_S4_GROUP, tail, offset2, x);
        acc = dot8(*w++, m, x, acc);
      }
      output[r] = finish(acc - eight_sum + (bias ? bias[r] : 0), quant, params);
    }
  }
  return ARM_CMSIS_NN_SUCCESS;
#else
  (void)params, (void)quant, (void)input_dims, (void)input, (void)filter_dims, (void)weights, (void)bias;
  (void)output_dims, (void)output;
  return ARM_CMSIS_NN_NO_IMPL_ERROR;
#endif
}
