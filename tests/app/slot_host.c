/* Host harness for cmx/api/cmx_slot.c (tests/app/test_slot_check.py): the slot check the firmware runs,
 * built for the build machine with AddressSanitizer and UndefinedBehaviorSanitizer.
 *
 *   slot_host sha FILE             SHA-256 of FILE, hex
 *   slot_host verify FILE [W]      the check against a firmware that fits the image: status and fields
 *   slot_host fuzz FILE SEED COUNT [W]  COUNT mutated slots checked; prints what became of them
 *
 * W: the image's weights (model_weights.bin), in a weights area of their own; the fuzz then mutates
 * the area too (a flipped bit, cut short) in one mutation of three.
 *
 * The fuzz mutations: a flipped bit, the image cut short (the rest erased, 0xFF), a header word set
 * to a limit, two blocks swapped, a range zeroed; and the same with the hash computed again, as a
 * crafted image or a bug in the writer would bring, so the checks behind the hash are reached. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmx_slot.h"
#include "host_fuzz.h"

/* A firmware that runs exactly what this header asks for. */
static cmx_slot_fit fit_for(const cmx_slot_header* h, char* core, char* isa) {
  memcpy(core, h->core, sizeof(h->core));
  core[sizeof(h->core)] = 0;
  memcpy(isa, h->isa, sizeof(h->isa));
  isa[sizeof(h->isa)] = 0;
  const uint64_t kinds = (uint64_t)h->kinds | ((uint64_t)h->kinds_high << 32);
  cmx_slot_fit fit = {core, isa, h->plan_version, kinds, h->method_pool_bytes, h->temp_pool_bytes, 0,
                      h->num_inputs, h->num_outputs, h->tolerance};
  for (uint32_t i = 0; i < h->planned_count && i < CMX_SLOT_MAX_PLANNED; ++i) {
    fit.planned_pool_bytes += (h->planned_sizes[i] + 15u) & ~15u;
  }
  return fit;
}

static void rehash(uint8_t* slot, size_t size) {
  cmx_slot_header* h = (cmx_slot_header*)slot;
  size_t total = h->total_bytes;
  if (total < CMX_SLOT_HASHED_FROM || total > size) return; /* refused on length before the hash */
  cmx_sha256(slot + CMX_SLOT_HASHED_FROM, total - CMX_SLOT_HASHED_FROM, h->sha256);
}

static void mutate(uint8_t* slot, size_t n, size_t size, int kind) {
  fuzz_mutate(slot, n, size, (uint32_t)(sizeof(cmx_slot_header) / 4));
  if (kind >= 5) rehash(slot, size);
}

/* What an accepted slot must hold: every range the firmware reads inside the slot (and its area). */
static int accepted_within(const cmx_slot_header* h, size_t size, size_t weights_size) {
  if (h->total_bytes > size || h->pte_offset + (uint64_t)h->pte_bytes > h->total_bytes) return 0;
  if (h->weights_bytes > weights_size) return 0;
  for (uint32_t i = 0; i < h->num_inputs; ++i) {
    if (h->inputs[i].offset + (uint64_t)h->inputs[i].nbytes > h->total_bytes) return 0;
  }
  for (uint32_t i = 0; i < h->num_outputs; ++i) {
    if (h->outputs[i].offset + (uint64_t)h->outputs[i].nbytes > h->total_bytes) return 0;
  }
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  size_t n = 0;
  uint8_t* image = fuzz_read(argv[2], &n);
  if (!image) return 2;
  if (strcmp(argv[1], "sha") == 0) {
    uint8_t d[32];
    cmx_sha256(image, n, d);
    for (int i = 0; i < 32; ++i) printf("%02x", d[i]);
    printf("\n");
    free(image);
    return 0;
  }
  /* The slot as flash holds it: 16-byte aligned, erased (0xFF) after the image. */
  const size_t size = n + 4096;
  uint8_t* slot = aligned_alloc(16, (size + 15) & ~(size_t)15);
  memset(slot, 0xFF, size);
  memcpy(slot, image, n);
  /* The weights area: the weights, erased (0xFF) after them; none without W. */
  size_t wn = 0;
  uint8_t* wfile = argc > (strcmp(argv[1], "fuzz") == 0 ? 5 : 3) ? fuzz_read(argv[strcmp(argv[1], "fuzz") == 0 ? 5 : 3], &wn) : NULL;
  const size_t wsize = wfile ? wn + 4096 : 0;
  uint8_t* area = wfile ? aligned_alloc(16, (wsize + 15) & ~(size_t)15) : NULL;
  if (area) {
    memset(area, 0xFF, wsize);
    memcpy(area, wfile, wn);
  }
  char core[CMX_SLOT_CORE_BYTES + 1], isa[9];
  const cmx_slot_fit fit = fit_for((const cmx_slot_header*)image, core, isa);
  const cmx_slot_header* h = NULL;
  if (strcmp(argv[1], "verify") == 0) {
    cmx_status st = cmx_slot_verify(slot, size, area, wsize, &fit, &h);
    printf("status=%d", (int)st);
    if (h) {
      printf(" sequence=%u total=%u pte=%u+%u kinds=0x%x planned=%u method=%u temp=%u io=%u/%u tol=%g ref=%u", h->sequence,
             h->total_bytes, h->pte_offset, h->pte_bytes, h->kinds, h->planned_count, h->method_pool_bytes,
             h->temp_pool_bytes, h->num_inputs, h->num_outputs, (double)h->tolerance, h->has_reference);
      for (uint32_t i = 0; i < h->num_inputs; ++i) printf(" in%u=%u+%u", i, h->inputs[i].offset, h->inputs[i].nbytes);
      for (uint32_t i = 0; i < h->num_outputs; ++i) printf(" out%u=%u+%u", i, h->outputs[i].offset, h->outputs[i].nbytes);
      printf(" weights=%u", h->weights_bytes);
    }
    printf("\n");
    free(area);
    free(wfile);
    free(slot);
    free(image);
    return 0;
  }
  if (strcmp(argv[1], "fuzz") != 0 || argc < 5) return 2;
  fuzz_seed(strtoull(argv[3], NULL, 10), 1u);
  const long count = strtol(argv[4], NULL, 10);
  long refused = 0, unchanged = 0, accepted_changed = 0, rehashed_accepted = 0, broken = 0;
  uint8_t* work = aligned_alloc(16, (size + 15) & ~(size_t)15);
  uint8_t* warea = area ? aligned_alloc(16, (wsize + 15) & ~(size_t)15) : NULL;
  for (long i = 0; i < count; ++i) {
    memcpy(work, slot, size);
    if (warea) memcpy(warea, area, wsize);
    const int kind = (int)(fuzz_rnd() % 10);
    if (warea && fuzz_rnd() % 3 == 0) { /* the weights area: a flipped bit, or cut short (erased after) */
      if (fuzz_rnd() & 1) {
        warea[fuzz_rnd() % wn] ^= (uint8_t)(1u << (fuzz_rnd() % 8));
      } else {
        size_t keep = fuzz_rnd() % wn;
        memset(warea + keep, 0xFF, wsize - keep);
      }
    } else {
      mutate(work, n, size, kind);
    }
    const int changed = memcmp(work, slot, size) != 0 || (warea && memcmp(warea, area, wsize) != 0);
    const cmx_status st = cmx_slot_verify(work, size, warea, wsize, &fit, &h);
    if (st != CMX_OK) {
      refused++;
    } else if (!changed) {
      unchanged++;
    } else if (kind >= 5) {
      rehashed_accepted++;
      if (!accepted_within(h, size, wsize)) broken++;
    } else {
      accepted_changed++; /* a change the hash did not see: never */
    }
  }
  printf("mutations=%ld refused=%ld unchanged=%ld accepted_changed=%ld rehashed_accepted=%ld broken=%ld\n", count,
         refused, unchanged, accepted_changed, rehashed_accepted, broken);
  free(work);
  free(warea);
  free(area);
  free(wfile);
  free(slot);
  free(image);
  return (accepted_changed || broken) ? 1 : 0;
}
