/* What the host fuzz harnesses share (tests/app/slot_host.c, tests/app/slot_runtime_host/,
 * tests/lower/plan_run_host.cpp): a file read whole, a seeded xorshift generator, and the mutations
 * of a blob in flash (a flipped bit, the write cut short with the rest erased, a word set to a limit
 * or near the blob's length, two 16-byte blocks swapped, a range zeroed). Plain C, for C and C++. */
#ifndef CMX_HOST_FUZZ_H
#define CMX_HOST_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t fuzz_state;

/* `offset` keeps each harness's sequence its own for one seed (the counts in the notes name both). */
static inline void fuzz_seed(unsigned long long seed, uint64_t offset) { fuzz_state = seed * 2654435761u + offset; }

static inline uint32_t fuzz_rnd(void) {
  fuzz_state ^= fuzz_state << 13;
  fuzz_state ^= fuzz_state >> 7;
  fuzz_state ^= fuzz_state << 17;
  return (uint32_t)(fuzz_state >> 16);
}

/* The file's bytes (malloc'd, *n set), NULL if it cannot be read. */
static inline uint8_t* fuzz_read(const char* path, size_t* n) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t* data = (uint8_t*)malloc((size_t)size + 1);
  if (data && fread(data, 1, (size_t)size, f) != (size_t)size) size = 0;
  fclose(f);
  *n = (size_t)size;
  return data;
}

#ifdef __cplusplus
#include <vector>

/* The file's bytes (empty if it cannot be read). */
static inline std::vector<uint8_t> fuzz_read_bytes(const char* path) {
  size_t n = 0;
  uint8_t* data = fuzz_read(path, &n);
  std::vector<uint8_t> bytes(data, data ? data + n : data);
  free(data);
  return bytes;
}
#endif

/* One mutation of data[0, n), in flash of `size` bytes; a word set is one of the first `words`. */
static inline void fuzz_mutate(uint8_t* data, size_t n, size_t size, uint32_t words) {
  static const uint32_t limits[] = {0u, 1u, 15u, 16u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu, 0xFFFFFFF0u};
  switch (fuzz_rnd() % 5) {
    case 0: data[fuzz_rnd() % n] ^= (uint8_t)(1u << (fuzz_rnd() % 8)); break;
    case 1: {
      size_t keep = fuzz_rnd() % n;
      memset(data + keep, 0xFF, size - keep);
      break;
    }
    case 2: {
      uint32_t value = (fuzz_rnd() & 1) ? limits[fuzz_rnd() % 8] : (uint32_t)(n + (fuzz_rnd() % 64) - 32);
      memcpy(data + 4 * (fuzz_rnd() % words), &value, 4);
      break;
    }
    case 3: {
      uint8_t tmp[16];
      size_t a = fuzz_rnd() % (n - 16), b = fuzz_rnd() % (n - 16);
      memcpy(tmp, data + a, 16);
      memmove(data + a, data + b, 16);
      memcpy(data + b, tmp, 16);
      break;
    }
    default: {
      size_t at = fuzz_rnd() % n, len = fuzz_rnd() % 64;
      if (at + len > n) len = n - at;
      memset(data + at, 0, len);
      break;
    }
  }
}

#endif /* CMX_HOST_FUZZ_H */
