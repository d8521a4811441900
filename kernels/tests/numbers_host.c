/* The scratch cmx-gen's kernels ask at run time, of their size functions on CMSIS-NN's structs, on the
 * build machine (tests/lower/test_kernel_numbers_host.py): the plan asks cmx_nn_layout.c's on integers,
 * and the test holds the two equal over random shapes. Compiled with ARM_MATH_DSP, so the DSP cores'
 * figures (the Helium ones need no intrinsics).
 *
 * Reads cases (int32 words) from the file named on the command line until its end and writes each
 * answer to stdout:
 *   'D' depthwise 3x3 scratch:   channels, out_h, out_w, stride_h, stride_w         -> int32
 *   'H' Helium conv scratch:     in_ch, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w -> int32
 */
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
    } else {
      return 4;
    }
  }
  return 0;
}
