/* Loads cmx-gen's DSP kernels share (kernels/nn/). Internal to kernels/nn/. */
#pragma once

#include <stdint.h>
#include <string.h>

/* Two words from *at, then at += 8 bytes: one LDRD with post-increment (GCC splits a 64-bit load
 * into two LDRs and two adds), or two LDRs where the address may not be word-aligned. */
typedef struct {
  uint32_t lo, hi;
} word_pair;

static inline __attribute__((always_inline)) word_pair load_pair(const void** at, const int aligned) {
  word_pair v;
#if defined(__GNUC__) && defined(__thumb2__)
  if (aligned) {
    __asm("ldrd\t%0, %1, [%2], #8" : "=r"(v.lo), "=r"(v.hi), "+r"(*at) : "m"(*(const char(*)[8]) * at));
    return v;
  }
#endif
  (void)aligned;
  memcpy(&v.lo, *at, 4); /* unaligned LDRs (M4/M7/M33 allow them) */
  memcpy(&v.hi, (const char*)*at + 4, 4);
  *at = (const char*)*at + 8;
  return v;
}
