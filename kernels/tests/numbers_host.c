/* The numbers cmx-gen's kernels decide, asked of the kernels' own C on the build machine
 * (tests/lower/test_kernel_numbers_host.py): the plan computes the same scratch sizes and weight
 * layouts in Python, and the test holds the two equal over random shapes. Compiled with
 * ARM_MATH_DSP, so the DSP cores' figures (the Helium ones need no intrinsics).
 *
 * Reads cases (int32 words) from the file named on the command line until its end and writes each
 * answer to stdout:
 *   'D' depthwise 3x3 scratch:   channels, out_h, out_w, stride_h, stride_w         -> int32
 *   'H' Helium conv scratch:     in_ch, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w -> int32
 *   'R' conv_row:                the 14 geometry fields of cmx_conv_row_params (positions .. wide), chunk,
 *                                then out_ch * rows * kernel * in_ch filter bytes (OHWI)
 *                                -> row_bytes, scratch_bytes (int32), the packed weights
 *   'F' fully connected layout:  rows, cols, then rows * cols filter bytes -> the packed weights
 *   'C' Helium conv constants:   rows, then rows kernel sums, multipliers, shifts -> the laid-out words */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case_io.h"
#include "cmx_nn.h"

static void put(const void* p, size_t n) { fwrite(p, 1, n, stdout); }

int main(int argc, char** argv) {
  FILE* f = argc > 1 ? fopen(argv[1], "rb") : NULL;
  if (f == NULL) return 2;
  int32_t kind;
  while (case_more(f, &kind)) {
    if (kind == 'D') {
      const int32_t ch = case_word(f), oh = case_word(f), ow = case_word(f), sh = case_word(f), sw = case_word(f);
      cmsis_nn_dw_conv_params p;
      memset(&p, 0, sizeof p);
      p.ch_mult = 1;
      p.stride.h = sh, p.stride.w = sw;
      const cmsis_nn_dims in = {1, (oh - 1) * sh + 3, (ow - 1) * sw + 3, ch}, out = {1, oh, ow, ch};
      const int32_t bytes = cmx_depthwise_3x3_s8_scratch_bytes(&p, &in, &out);
      put(&bytes, 4);
    } else if (kind == 'H') {
      const int32_t c = case_word(f), kh = case_word(f), kw = case_word(f);
      cmsis_nn_conv_params p;
      memset(&p, 0, sizeof p);
      p.stride.h = case_word(f), p.stride.w = case_word(f), p.padding.h = case_word(f), p.padding.w = case_word(f);
      const cmsis_nn_dims in = {1, 8, 8, c}, filter = {1, kh, kw, c};
      const int32_t bytes = cmx_conv_helium_s8_scratch_bytes(&p, &in, &filter);
      put(&bytes, 4);
    } else if (kind == 'R') {
      cmx_conv_row_params p;
      memset(&p, 0, sizeof p);
      int32_t* fields[] = {&p.positions, &p.in_positions, &p.in_ch,    &p.out_ch,     &p.kernel,
                           &p.stride,    &p.pad,          &p.dilation, &p.rows,       &p.out_rows,
                           &p.in_rows,   &p.row_stride,   &p.row_pad,  &p.wide,       &p.chunk};
      for (size_t i = 0; i < sizeof fields / sizeof fields[0]; ++i) *fields[i] = case_word(f);
      p.row_bytes = cmx_conv_row_s8_row_bytes(&p);
      const int32_t scratch = cmx_conv_row_s8_scratch_bytes(&p);
      const size_t values = (size_t)p.out_ch * p.rows * p.kernel * p.in_ch;
      const size_t packed = (size_t)p.out_ch * p.row_bytes * (p.wide == 1 ? 2 : 1);
      int8_t* filter = case_block(f, values);
      int8_t* out = calloc(packed ? packed : 1, 1);
      cmx_conv_row_s8_weights(&p, filter, out);
      put(&p.row_bytes, 4), put(&scratch, 4), put(out, packed);
      free(filter), free(out);
    } else if (kind == 'F') {
      const int32_t rows = case_word(f), cols = case_word(f);
      const size_t packed = (size_t)rows * ((cols + CMX_FC_GROUP - 1) / CMX_FC_GROUP * CMX_FC_GROUP);
      int8_t* filter = case_block(f, (size_t)rows * cols);
      int8_t* out = calloc(packed ? packed : 1, 1);
      cmx_fully_connected_s8_weights(rows, cols, filter, out);
      put(out, packed);
      free(filter), free(out);
    } else if (kind == 'S') {
      const int32_t rows = case_word(f), cols = case_word(f);
      const size_t packed = (size_t)cmx_fully_connected_s4_weight_bytes(rows, cols);
      int8_t* values = case_block(f, (size_t)rows * cols);
      uint8_t* out = calloc(packed ? packed : 1, 1);
      cmx_fully_connected_s4_weights(rows, cols, values, out);
      put(out, packed);
      free(values), free(out);
    } else if (kind == 'C') {
      const int32_t rows = case_word(f);
      int32_t* in = (int32_t*)(void*)case_block(f, 12u * rows);
      int32_t* out = calloc(3u * rows + 1, 4);
      cmx_conv_helium_s8_constants(rows, in, in + rows, in + 2 * rows, out);
      put(out, 12u * rows);
      free(in), free(out);
    } else {
      return 4;
    }
  }
  return 0;
}
