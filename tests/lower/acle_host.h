/* What the host build of tests/lower/plan_run_host.cpp needs of the target's toolchain, as the target
 * has it: the one Arm C Language Extensions intrinsic cmx-gen's portable kernel code calls unguarded
 * (SSAT, in every Armv7-M and later core), as ACLE defines it; and memcpy as newlib's Cortex-M memcpy
 * behaves, copying forward, so a layer whose output the memory schedule starts below its input
 * (overlap.py) copies as on the target, byte by byte under AddressSanitizer's eye. The kernels' DSP
 * and Helium paths are not built here. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline int32_t __ssat(int32_t value, uint32_t bits) {
  const int32_t max = (int32_t)((1u << (bits - 1)) - 1u), min = -max - 1;
  return value > max ? max : (value < min ? min : value);
}

static inline void* cmx_target_memcpy(void* dst, const void* src, size_t n) {
  unsigned char* d = (unsigned char*)dst;
  const unsigned char* s = (const unsigned char*)src;
  for (size_t i = 0; i < n; ++i) d[i] = s[i];
  return dst;
}
#define memcpy cmx_target_memcpy
