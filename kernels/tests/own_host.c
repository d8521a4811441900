/* cmx-gen's element-wise and normalising kernels on the build machine (tests/lower/test_own_kernels_host.py): reads
 * one case from the file named on the command line and writes the int8 output to stdout, so the test
 * compares it with layer_models.py byte for byte.
 *   layer_norm: 'L', rows, channels, input_offset, output_offset, eps (int64), gains[], biases[], input
 *   mean:       'M', outer, count, inner, multiplier, shift, input_offset, output_offset, input
 *   lut:        'T', count, table[256], input
 *   narrow:     'N', count, steps, lowest, multiplier, shift, thresholds[steps] int16, input int16
 *   arguments:  'A': each kernel's status for arguments outside its contract (cmx_nn.h), a line each
 * A kernel's status other than success exits 4. */
#include <stdio.h>
#include <stdlib.h>

#include "case_io.h"
#include "cmx_nn.h"

int main(int argc, char** argv) {
  FILE* f = argc > 1 ? fopen(argv[1], "rb") : NULL;
  if (f == NULL) return 2;
  const int32_t kind = case_word(f);
  if (kind == 'L') {
    const int32_t rows = case_word(f), channels = case_word(f), in_off = case_word(f), out_off = case_word(f);
    const uint32_t lo = (uint32_t)case_word(f), hi = (uint32_t)case_word(f);
    const int32_t* gains = case_block(f, 4u * channels);
    const int32_t* biases = case_block(f, 4u * channels);
    const int8_t* x = case_block(f, (size_t)rows * channels);
    int8_t* y = malloc((size_t)rows * channels);
    if (cmx_layer_norm_s8(x, y, rows, channels, in_off, out_off, (int64_t)(((uint64_t)hi << 32) | lo), gains, biases)) {
      return 4;
    }
    fwrite(y, 1, (size_t)rows * channels, stdout);
  } else if (kind == 'M') {
    const int32_t outer = case_word(f), count = case_word(f), inner = case_word(f), mult = case_word(f), shift = case_word(f);
    const int32_t in_off = case_word(f), out_off = case_word(f);
    const int8_t* x = case_block(f, (size_t)outer * count * inner);
    int8_t* y = malloc((size_t)outer * inner);
    if (cmx_mean_s8(x, y, outer, count, inner, mult, shift, in_off, out_off)) return 4;
    fwrite(y, 1, (size_t)outer * inner, stdout);
  } else if (kind == 'T') {
    const int32_t count = case_word(f);
    const int8_t* table = case_block(f, 256);
    const int8_t* x = case_block(f, (size_t)count);
    int8_t* y = malloc((size_t)count);
    if (cmx_lut_s8(x, y, count, table)) return 4;
    fwrite(y, 1, (size_t)count, stdout);
  } else if (kind == 'U') {
    const int32_t count = case_word(f);
    const int16_t* table = (const int16_t*)case_block(f, 512);
    const int8_t* x = case_block(f, (size_t)count);
    int16_t* y = malloc((size_t)count * 2);
    if (cmx_lut_s8_s16(x, y, count, table)) return 4;
    fwrite(y, 2, (size_t)count, stdout);
  } else if (kind == 'N') {
    const int32_t count = case_word(f), steps = case_word(f), lowest = case_word(f), mult = case_word(f), shift = case_word(f);
    const int16_t* thresholds = (const int16_t*)case_block(f, 2u * steps);
    const int16_t* x = (const int16_t*)case_block(f, 2u * count);
    int8_t* y = malloc((size_t)count);
    if (cmx_narrow_s16_s8(x, y, count, steps ? thresholds : NULL, steps, lowest, mult, shift)) return 4;
    fwrite(y, 1, (size_t)count, stdout);
  } else if (kind == 'A') {
    static const int8_t x[4] = {0}, table[256] = {0};
    static const int32_t words[4] = {0};
    int8_t y[4];
    static const int16_t wide_table[256] = {0};
    int16_t wide[4];
    const arm_cmsis_nn_status statuses[] = {
        cmx_transpose_s8(x, y, 1, 0, 4),
        cmx_mean_s8(x, y, 1, 0, 1, 1 << 30, 0, 0, 0),
        cmx_layer_norm_s8(x, y, 1, 0, 0, 0, 0, words, words),
        cmx_layer_norm_s8(x, y, 1, 4, 0, 0, -1, words, words),
        cmx_layer_norm_s8(x, y, 1, 4, 0, 0, 0, NULL, words),
        cmx_lut_s8(x, y, 0, table),
        cmx_lut_s8(x, y, 4, NULL),
        cmx_lut_s8_s16(x, wide, 0, wide_table),
        cmx_lut_s8_s16(x, wide, 4, NULL),
        cmx_narrow_s16_s8(wide, y, 0, wide_table, 1, 0, 0, 0),
        cmx_narrow_s16_s8(wide, y, 4, wide_table, 256, 0, 0, 0),
        cmx_narrow_s16_s8(wide, y, 4, NULL, 1, 0, 0, 0),
    };
    for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); ++i) printf("%d\n", (int)statuses[i]);
  } else {
    return 2;
  }
  return 0;
}
