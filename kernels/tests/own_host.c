/* cmx-gen's element-wise kernels on the build machine (tests/lower/test_own_kernels_host.py): reads
 * one case from the file named on the command line and writes the int8 output to stdout, so the test
 * compares it with layer_models.py byte for byte.
 *   layer_norm: 'L', rows, channels, input_offset, output_offset, eps (int64), gains[], biases[], input
 *   mean:       'M', outer, count, inner, multiplier, shift, input_offset, output_offset, input */
#include <stdio.h>
#include <stdlib.h>

#include "cmx_nn.h"

static int32_t word(FILE* f) {
  int32_t v = 0;
  if (fread(&v, 4, 1, f) != 1) exit(3);
  return v;
}

static void* block(FILE* f, size_t n) {
  void* p = malloc(n ? n : 1);
  if (fread(p, 1, n, f) != n) exit(3);
  return p;
}

int main(int argc, char** argv) {
  FILE* f = argc > 1 ? fopen(argv[1], "rb") : NULL;
  if (f == NULL) return 2;
  const int32_t kind = word(f);
  if (kind == 'L') {
    const int32_t rows = word(f), channels = word(f), in_off = word(f), out_off = word(f);
    const uint32_t lo = (uint32_t)word(f), hi = (uint32_t)word(f);
    const int32_t* gains = block(f, 4u * channels);
    const int32_t* biases = block(f, 4u * channels);
    const int8_t* x = block(f, (size_t)rows * channels);
    int8_t* y = malloc((size_t)rows * channels);
    cmx_layer_norm_s8(x, y, rows, channels, in_off, out_off, (int64_t)(((uint64_t)hi << 32) | lo), gains, biases);
    fwrite(y, 1, (size_t)rows * channels, stdout);
  } else if (kind == 'M') {
    const int32_t outer = word(f), count = word(f), inner = word(f), mult = word(f), shift = word(f);
    const int32_t in_off = word(f), out_off = word(f);
    const int8_t* x = block(f, (size_t)outer * count * inner);
    int8_t* y = malloc((size_t)outer * inner);
    cmx_mean_s8(x, y, outer, count, inner, mult, shift, in_off, out_off);
    fwrite(y, 1, (size_t)outer * inner, stdout);
  } else {
    return 2;
  }
  return 0;
}
