/* cmx_copy_rows: a box of int8 bytes between two row strides, for cmx-gen's backend's copy_region layers
 * (a torch.cat, a nearest upsampling, a transposed convolution's depth-to-space, a patch's gather and
 * scatter). Runs of whole words between word-aligned addresses, where the box read lies wholly apart
 * from the box written, move a word at a time: a concat's run is one pixel's channels (8 bytes in a
 * U-Net's decoder), where memmove's call and checks cost ~80 cycles a run on the M55. Anything else is
 * memmove's, a run at a time, so a box copied over its own input stays defined. A header: the runtime
 * compiles it into every backend. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/**
 * @brief out[r * out_stride + k] = in[r * in_stride + k] for r < rows, k < bytes, as memmove run by run.
 * @param[out] out          caller: the first run's first byte
 * @param[in]  in           caller: the first run's first byte
 * @param[in]  rows, bytes  >= 0
 * @param[in]  in_stride, out_stride   bytes between two runs
 */
static inline void cmx_copy_rows(int8_t* out, const int8_t* in, int32_t rows, int32_t bytes, int32_t in_stride,
                                 int32_t out_stride) {
  if (rows <= 0 || bytes <= 0) return;
  const size_t read = (size_t)(rows - 1) * (size_t)in_stride + (size_t)bytes;
  const size_t written = (size_t)(rows - 1) * (size_t)out_stride + (size_t)bytes;
  const int apart = (uintptr_t)out + written <= (uintptr_t)in || (uintptr_t)in + read <= (uintptr_t)out;
  const uint32_t alignment = (uint32_t)bytes | (uint32_t)in_stride | (uint32_t)out_stride | (uint32_t)(uintptr_t)in |
                             (uint32_t)(uintptr_t)out;
  if (apart && in_stride >= 0 && out_stride >= 0 && (alignment & 3u) == 0) {
    for (int32_t r = 0; r < rows; ++r, in += in_stride, out += out_stride) {
      for (int32_t at = 0; at < bytes; at += 4) { /* a word's memcpy: one LDR and one STR */
        int32_t v;
        memcpy(&v, in + at, 4);
        memcpy(out + at, &v, 4);
      }
    }
    return;
  }
  for (int32_t r = 0; r < rows; ++r) memmove(out + r * out_stride, in + r * in_stride, (size_t)bytes);
}
