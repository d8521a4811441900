/* CMSIS-NN's s16 kernels cmx-gen runs whole (arm_softmax_s16, arm_batch_matmul_s16, arm_nn_activation_s16)
 * and cmx_transpose_s16
 * on the build machine (tests/lower/test_s16_kernels_host.py): reads cases from the file named on the
 * command line and writes each output to stdout, so the test compares it with host_models/s16_models.py
 * byte for byte. CMSIS-NN's plain C path, compiled with the host's cc (the target's DSP and MVE paths are
 * held by the firmware tests' PASS). A case: its kind (1 softmax, 2 bmm, 3 sigmoid/tanh), then its words
 * and data. */
#include <stdio.h>
#include <stdlib.h>
#include "arm_nnfunctions.h"
#include "case_io.h"
#include "cmx_nn.h"

static int softmax(FILE* f) {
  const int32_t rows = case_word(f), row = case_word(f), mult = case_word(f), shift = case_word(f);
  const cmsis_nn_softmax_lut_s16 tables = {case_block(f, 2 * 513), case_block(f, 2 * 513)};
  const int16_t* x = case_block(f, 2 * (size_t)rows * row);
  int16_t* y = malloc(2 * (size_t)rows * row);
  if (arm_softmax_s16(x, rows, row, mult, shift, &tables, y) != ARM_CMSIS_NN_SUCCESS) return 4;
  fwrite(y, 2, (size_t)rows * row, stdout);
  return 0;
}

static int bmm(FILE* f) {
  const int32_t batches = case_word(f), rows = case_word(f), inner = case_word(f), cols = case_word(f);
  const int32_t mult = case_word(f), shift = case_word(f);
  const int16_t* a = case_block(f, 2 * (size_t)batches * rows * inner);
  const int16_t* b = case_block(f, 2 * (size_t)batches * inner * cols);  // [batch][inner][cols]
  int16_t* b_t = malloc(2 * (size_t)batches * inner * cols);
  if (cmx_transpose_s16(b, b_t, batches, inner, cols) != ARM_CMSIS_NN_SUCCESS) return 4;
  int16_t* y = malloc(2 * (size_t)batches * rows * cols);
  const cmsis_nn_context ctx = {NULL, 0};
  const cmsis_nn_bmm_params params = {0, 0, {0, 0, 0, {-32767, 32767}}};
  const cmsis_nn_per_tensor_quant_params quant = {mult, shift};
  const cmsis_nn_dims lhs = {1, batches, rows, inner}, rhs = {1, batches, cols, inner}, out = {1, batches, rows, cols};
  if (arm_batch_matmul_s16(&ctx, &params, &quant, &lhs, a, &rhs, b_t, &out, y) != ARM_CMSIS_NN_SUCCESS) return 4;
  fwrite(y, 2, (size_t)batches * rows * cols, stdout);
  return 0;
}

static int activation(FILE* f) {
  const int32_t count = case_word(f), left_shift = case_word(f), type = case_word(f);
  const int16_t* x = case_block(f, 2 * (size_t)count);
  int16_t* y = malloc(2 * (size_t)count);
  if (arm_nn_activation_s16(x, y, count, left_shift, (arm_nn_activation_type)type) != ARM_CMSIS_NN_SUCCESS) return 4;
  fwrite(y, 2, (size_t)count, stdout);
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  FILE* f = fopen(argv[1], "rb");
  if (!f) return 2;
  int32_t kind = 0;
  while (case_more(f, &kind)) {
    const int status = kind == 1 ? softmax(f) : kind == 2 ? bmm(f) : kind == 3 ? activation(f) : 5;
    if (status) return status;
  }
  return 0;
}
