/* cmx_gru_s8: a GRU layer in int8 from CMSIS-NN's LSTM building blocks (issue 34); see cmx_nn.h. */
#include <string.h>

#include "arm_nnfunctions.h"
#include "arm_nnsupportfunctions.h"
#include "cmx_nn.h"

static int32_t sat16(int32_t v) { return v > 32767 ? 32767 : (v < -32768 ? -32768 : v); }

/* A gate's int16 pre-activation: the input part, then the hidden part added with saturation. */
static void pre_activation(const int8_t* x, const int8_t* h, const cmx_gru_gate* g, const cmx_gru_params* p,
                           int16_t* out, int input_part, int hidden_part) {
  memset(out, 0, (size_t)p->hidden_size * sizeof(int16_t));
  if (input_part) {
    arm_nn_vec_mat_mul_result_acc_s8_s16(x, g->input_weights, g->input_bias, out, g->input_multiplier,
                                         g->input_shift, p->input_size, p->hidden_size, 1, 1);
  }
  if (hidden_part) {
    arm_nn_vec_mat_mul_result_acc_s8_s16(h, g->hidden_weights, g->hidden_bias, out, g->hidden_multiplier,
                                         g->hidden_shift, p->hidden_size, p->hidden_size, 1, 1);
  }
}

arm_cmsis_nn_status cmx_gru_s8(const int8_t* input, int8_t* output, const cmx_gru_params* p, void* scratch) {
  if (p->batch_size < 1 || p->time_steps < 1 || p->input_size < 1 || p->hidden_size < 1 || scratch == NULL) {
    return ARM_CMSIS_NN_ARG_ERROR;
  }
  const int32_t hidden = p->hidden_size;
  int16_t* reset = (int16_t*)scratch;
  int16_t* update = reset + hidden;
  int16_t* from_input = update + hidden;
  int16_t* from_hidden = from_input + hidden;
  int8_t* zero_state = (int8_t*)(from_hidden + hidden);
  memset(zero_state, (int8_t)p->output_offset, (size_t)hidden);
  for (int32_t b = 0; b < p->batch_size; ++b) {
    const int8_t* h = zero_state;
    for (int32_t i = 0; i < p->time_steps; ++i) {
      const int32_t t = p->reverse ? p->time_steps - 1 - i : i;
      const int32_t row = p->time_major ? t * p->batch_size + b : b * p->time_steps + t;
      const int8_t* x = input + row * p->input_size;
      int8_t* out = output + row * hidden;
      pre_activation(x, h, &p->reset, p, reset, 1, 1);
      arm_nn_activation_s16(reset, reset, hidden, 0, ARM_SIGMOID);
      pre_activation(x, h, &p->update, p, update, 1, 1);
      arm_nn_activation_s16(update, update, hidden, 0, ARM_SIGMOID);
      pre_activation(x, h, &p->candidate, p, from_input, 1, 0);
      pre_activation(x, h, &p->candidate, p, from_hidden, 0, 1);
      for (int32_t k = 0; k < hidden; ++k) {
        const int32_t gated = arm_nn_requantize((int32_t)reset[k] * from_hidden[k], p->reset_multiplier, p->reset_shift);
        from_input[k] = (int16_t)sat16(from_input[k] + gated);
      }
      arm_nn_activation_s16(from_input, from_input, hidden, 0, ARM_TANH);
      for (int32_t k = 0; k < hidden; ++k) {
        const int32_t h_q15 =
            sat16(arm_nn_requantize(h[k] + p->hidden_offset, p->hidden_q15_multiplier, p->hidden_q15_shift));
        const int32_t mixed = (32768 - update[k]) * from_input[k] + update[k] * h_q15;
        int32_t v = arm_nn_requantize(mixed, p->output_multiplier, p->output_shift) + p->output_offset;
        out[k] = (int8_t)(v > 127 ? 127 : (v < -128 ? -128 : v));
      }
      h = out;
    }
  }
  return ARM_CMSIS_NN_SUCCESS;
}
