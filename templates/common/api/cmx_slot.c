/*
 * cmx_slot.c - checking a model slot (cmx_slot.h) before the runtime reads any of it.
 *
 * Plain C, no ExecuTorch: the host fuzz test builds this file with AddressSanitizer and feeds it
 * mutated slots. Every read is bounded by the slot's size before it happens.
 */
#include "cmx_slot.h"

#include <string.h>

/* ---- SHA-256 (FIPS 180-4) ---- */

static const uint32_t kRound[64] = {
    0x428a2f98u, 0x71374491u, 0xb5c0fbcfu, 0xe9b5dba5u, 0x3956c25bu, 0x59f111f1u, 0x923f82a4u, 0xab1c5ed5u,
    0xd807aa98u, 0x12835b01u, 0x243185beu, 0x550c7dc3u, 0x72be5d74u, 0x80deb1feu, 0x9bdc06a7u, 0xc19bf174u,
    0xe49b69c1u, 0xefbe4786u, 0x0fc19dc6u, 0x240ca1ccu, 0x2de92c6fu, 0x4a7484aau, 0x5cb0a9dcu, 0x76f988dau,
    0x983e5152u, 0xa831c66du, 0xb00327c8u, 0xbf597fc7u, 0xc6e00bf3u, 0xd5a79147u, 0x06ca6351u, 0x14292967u,
    0x27b70a85u, 0x2e1b2138u, 0x4d2c6dfcu, 0x53380d13u, 0x650a7354u, 0x766a0abbu, 0x81c2c92eu, 0x92722c85u,
    0xa2bfe8a1u, 0xa81a664bu, 0xc24b8b70u, 0xc76c51a3u, 0xd192e819u, 0xd6990624u, 0xf40e3585u, 0x106aa070u,
    0x19a4c116u, 0x1e376c08u, 0x2748774cu, 0x34b0bcb5u, 0x391c0cb3u, 0x4ed8aa4au, 0x5b9cca4fu, 0x682e6ff3u,
    0x748f82eeu, 0x78a5636fu, 0x84c87814u, 0x8cc70208u, 0x90befffau, 0xa4506cebu, 0xbef9a3f7u, 0xc67178f2u};

static uint32_t ror(uint32_t x, unsigned n) { return (x >> n) | (x << (32u - n)); }

static void sha256_block(uint32_t h[8], const uint8_t* p) {
  uint32_t w[64];
  for (int i = 0; i < 16; ++i) {
    w[i] = ((uint32_t)p[4 * i] << 24) | ((uint32_t)p[4 * i + 1] << 16) | ((uint32_t)p[4 * i + 2] << 8) | p[4 * i + 3];
  }
  for (int i = 16; i < 64; ++i) {
    uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
  for (int i = 0; i < 64; ++i) {
    uint32_t t1 = k + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + kRound[i] + w[i];
    uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    k = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
  h[5] += f;
  h[6] += g;
  h[7] += k;
}

void cmx_sha256(const uint8_t* data, size_t n, uint8_t digest[32]) {
  uint32_t h[8] = {0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u, 0xa54ff53au,
                   0x510e527fu, 0x9b05688cu, 0x1f83d9abu, 0x5be0cd19u};
  size_t done = 0;
  for (; n - done >= 64; done += 64) sha256_block(h, data + done);
  uint8_t tail[128];
  size_t rest = n - done;
  memset(tail, 0, sizeof(tail));
  memcpy(tail, data + done, rest);
  tail[rest] = 0x80;
  size_t tail_bytes = rest < 56 ? 64 : 128;
  uint64_t bits = (uint64_t)n * 8u;
  for (int i = 0; i < 8; ++i) tail[tail_bytes - 1 - i] = (uint8_t)(bits >> (8 * i));
  sha256_block(h, tail);
  if (tail_bytes == 128) sha256_block(h, tail + 64);
  for (int i = 0; i < 8; ++i) {
    digest[4 * i] = (uint8_t)(h[i] >> 24);
    digest[4 * i + 1] = (uint8_t)(h[i] >> 16);
    digest[4 * i + 2] = (uint8_t)(h[i] >> 8);
    digest[4 * i + 3] = (uint8_t)h[i];
  }
}

/* ---- the slot ---- */

__attribute__((weak)) int cmx_slot_authenticate(const uint8_t* slot, size_t nbytes, uint32_t slot_index) {
  (void)slot;
  (void)nbytes;
  (void)slot_index;
  return 0;
}

/* [offset, offset + nbytes) lies within the first `total` bytes. */
static int within(uint32_t offset, uint32_t nbytes, uint32_t total) {
  return offset <= total && nbytes <= total - offset;
}

/* A fixed-size text field holds `want` (NUL-padded). */
static int same_text(const char* field, size_t field_bytes, const char* want) {
  size_t n = strlen(want);
  if (n > field_bytes) return 0;
  if (memcmp(field, want, n) != 0) return 0;
  for (size_t i = n; i < field_bytes; ++i) {
    if (field[i] != 0) return 0;
  }
  return 1;
}

static int tensors_within(const cmx_slot_tensor* t, uint32_t count, uint32_t total) {
  for (uint32_t i = 0; i < count; ++i) {
    if (!within(t[i].offset, t[i].nbytes, total)) return 0;
    if (t[i].offset < sizeof(cmx_slot_header) && t[i].nbytes > 0) return 0;
  }
  return 1;
}

static uint64_t round16(uint32_t n) { return ((uint64_t)n + 15u) & ~(uint64_t)15u; }

cmx_status cmx_slot_verify(const uint8_t* slot, size_t size, const uint8_t* weights, size_t weights_size,
                           const cmx_slot_fit* fit, const cmx_slot_header** header) {
  if (!slot || !fit || !header) return CMX_E_ARGUMENT;
  *header = NULL;
  if (((uintptr_t)slot & 15u) != 0) return CMX_E_SLOT_CORRUPT; /* the program inside must stay aligned */
  if (size < sizeof(cmx_slot_header)) return CMX_E_SLOT_EMPTY;
  const cmx_slot_header* h = (const cmx_slot_header*)slot;
  if (h->magic != CMX_SLOT_MAGIC) return CMX_E_SLOT_EMPTY;
  if (h->format != CMX_SLOT_FORMAT || h->header_bytes != sizeof(cmx_slot_header)) return CMX_E_SLOT_INCOMPATIBLE;
  if (h->total_bytes < sizeof(cmx_slot_header) || h->total_bytes > size) return CMX_E_SLOT_CORRUPT;
  uint8_t digest[32];
  cmx_sha256(slot + CMX_SLOT_HASHED_FROM, h->total_bytes - CMX_SLOT_HASHED_FROM, digest);
  if (memcmp(digest, h->sha256, sizeof(digest)) != 0) return CMX_E_SLOT_CORRUPT;

  /* Whole and as written: now the fields, each against the slot and the firmware. */
  if (h->pte_offset < sizeof(cmx_slot_header) || (h->pte_offset & 15u) != 0 ||
      !within(h->pte_offset, h->pte_bytes, h->total_bytes) || h->pte_bytes == 0) {
    return CMX_E_SLOT_CORRUPT;
  }
  if (h->num_inputs > CMX_SLOT_MAX_IO || h->num_outputs > CMX_SLOT_MAX_IO || h->planned_count > CMX_SLOT_MAX_PLANNED ||
      !tensors_within(h->inputs, h->num_inputs, h->total_bytes) ||
      !tensors_within(h->outputs, h->num_outputs, h->total_bytes)) {
    return CMX_E_SLOT_CORRUPT;
  }
  const uint64_t kinds = (uint64_t)h->kinds | ((uint64_t)h->kinds_high << 32);
  if (!same_text(h->core, sizeof(h->core), fit->core) || !same_text(h->isa, sizeof(h->isa), fit->isa) ||
      (kinds != 0 && h->plan_version != fit->plan_version) || (kinds & ~fit->kinds) != 0 ||
      h->num_inputs != fit->num_inputs || h->num_outputs != fit->num_outputs ||
      !(h->tolerance >= 0.0f && h->tolerance <= fit->max_tolerance) || /* (NaN fails too) */
      h->has_reference != 1u) { /* a slot runs only after its self-check: it must bring a reference */
    return CMX_E_SLOT_INCOMPATIBLE;
  }
  uint64_t planned = 0;
  for (uint32_t i = 0; i < h->planned_count; ++i) planned += round16(h->planned_sizes[i]);
  if (h->method_pool_bytes > fit->method_pool_bytes || h->temp_pool_bytes > fit->temp_pool_bytes ||
      planned > fit->planned_pool_bytes) {
    return CMX_E_SLOT_TOO_LARGE;
  }
  if (h->weights_bytes > 0) { /* the program's segments in the weights area, hashed like the slot */
    if (!weights) return CMX_E_SLOT_INCOMPATIBLE;
    if (h->weights_bytes > weights_size) return CMX_E_SLOT_CORRUPT;
    cmx_sha256(weights, h->weights_bytes, digest);
    if (memcmp(digest, h->weights_sha256, sizeof(digest)) != 0) return CMX_E_SLOT_CORRUPT;
  }
  *header = h;
  return CMX_OK;
}
