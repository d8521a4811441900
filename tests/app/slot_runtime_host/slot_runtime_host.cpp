/* The model API's cmx_init() over mutated slots, on the build machine (tests/app/test_slot_runtime_host.py):
 * the whole chain the firmware runs on a slot (cmx_slot_verify, ExecuTorch's Program::load with its
 * flatbuffer verifier, cmx-gen's plan check, the method's load, the self-check bit-exact against the
 * slot's own reference) under AddressSanitizer and UndefinedBehaviorSanitizer.
 *
 *   slot_runtime_host A B SEED COUNT      (SEED 0: no mutation, b must run every round)
 *
 * A, B: the app's slot image with sequence 1 and 2; the weights (model_weights.bin) beside each as
 * A.weights and B.weights when the app keeps them apart. Slot a holds A, slot b a mutation of B, the
 * newer one: each round cmx_init() must return CMX_OK, running b only if b passed every step (its
 * self-check within the model's own tolerance: 0 for integer outputs, float rounding for float
 * ones) and a otherwise, with b's refusal readable (cmx_slot_state). The mutations
 * are slot_host.c's (a flipped bit, cut short, a header word at a limit, blocks swapped, a range
 * zeroed), half of them with the hash computed again (a crafted image), and in the weights. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <vector>

#include "cmx.h"
#include "cmx_model.h"
#include "cmx_model_impl.h"
#include "cmx_models.h"
#include "cmx_slot.h"
#include "host_fuzz.h"

namespace {

/* The board's memory where the firmware looks for it: the same addresses, in this process. */
uint8_t* map_at(uintptr_t base, size_t size) {
  void* at = mmap(reinterpret_cast<void*>(base), size, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (at != reinterpret_cast<void*>(base)) {
    fprintf(stderr, "cannot map 0x%lx+0x%zx\n", static_cast<unsigned long>(base), size);
    exit(2);
  }
  return static_cast<uint8_t*>(at);
}

void put(uint8_t* area, size_t size, const std::vector<uint8_t>& data) {
  memset(area, 0xFF, size); /* erased flash */
  memcpy(area, data.data(), data.size() < size ? data.size() : size);
}

void rehash(uint8_t* slot, size_t size, const uint8_t* weights, size_t weights_size) {
  auto* h = reinterpret_cast<cmx_slot_header*>(slot);
  if (weights && h->weights_bytes > 0 && h->weights_bytes <= weights_size) {
    cmx_sha256(weights, h->weights_bytes, h->weights_sha256);
  }
  if (h->total_bytes < CMX_SLOT_HASHED_FROM || h->total_bytes > size) return;
  cmx_sha256(slot + CMX_SLOT_HASHED_FROM, h->total_bytes - CMX_SLOT_HASHED_FROM, h->sha256);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) return 2;
  std::vector<uint8_t> a = fuzz_read_bytes(argv[1]), b = fuzz_read_bytes(argv[2]);
  std::vector<uint8_t> aw = fuzz_read_bytes((std::string(argv[1]) + ".weights").c_str());
  std::vector<uint8_t> bw = fuzz_read_bytes((std::string(argv[2]) + ".weights").c_str());
  if (a.empty() || b.empty()) return 2;
  const unsigned long long seed = strtoull(argv[3], nullptr, 10);
  fuzz_seed(seed, 1u);
  const long count = strtol(argv[4], nullptr, 10);

  const uintptr_t bases[] = CMX_SLOT_BASES, weights_bases[] = CMX_SLOT_WEIGHTS_BASES;
  const uint32_t sizes[] = CMX_SLOT_SIZES, weights_sizes[] = CMX_SLOT_WEIGHTS_SIZES;
  uint8_t* slot_a = map_at(bases[0], sizes[0]);
  uint8_t* slot_b = map_at(bases[1], sizes[1]);
  uint8_t* area_a = weights_sizes[0] ? map_at(weights_bases[0], weights_sizes[0]) : nullptr;
  uint8_t* area_b = weights_sizes[1] ? map_at(weights_bases[1], weights_sizes[1]) : nullptr;
  put(slot_a, sizes[0], a);
  if (area_a) put(area_a, weights_sizes[0], aw);

  cmx_model* model = CMX_MODEL_LIST;
  long older = 0, ran_b = 0, ran_b_exact = 0, over_tolerance = 0, ran_a = 0, failed = 0, refused[32] = {0};
  for (long i = 0; i < count; ++i) {
    put(slot_b, sizes[1], b);
    if (area_b) put(area_b, weights_sizes[1], bw);
    if (seed != 0) {
      const bool crafted = fuzz_rnd() & 1;
      if (area_b && fuzz_rnd() % 3 == 0) {
        fuzz_mutate(area_b, bw.size(), weights_sizes[1], static_cast<uint32_t>(bw.size() / 4));
      } else {
        fuzz_mutate(slot_b, b.size(), sizes[1], static_cast<uint32_t>((fuzz_rnd() & 1 ? sizeof(cmx_slot_header) : b.size()) / 4));
      }
      if (crafted) rehash(slot_b, sizes[1], area_b, area_b ? weights_sizes[1] : 0);
    }

    const cmx_status st = cmx_init(model);
    cmx_slot_info info;
    cmx_slot_state(model, 1, &info);
    const int active = cmx_active_slot(model);
    if (st != CMX_OK || active < 0) {
      failed++; /* slot a is whole: the firmware must always run a model */
      fprintf(stderr, "round %ld: cmx_init %s (ExecuTorch error 0x%x), active %d, b %s\n", i, cmx_status_name(st),
              cmx_error_detail(model), active, cmx_status_name(info.status));
    } else if (active == 1) {
      ran_b++; /* b passed every step, its self-check against its own reference */
      if (info.max_abs_err == 0.0) ran_b_exact++;
      if (info.max_abs_err > static_cast<double>(CMX_SLOT_MAX_TOLERANCE)) { /* past the model's own tolerance: never */
        over_tolerance++;
        const auto* hb = reinterpret_cast<const cmx_slot_header*>(slot_b);
        fprintf(stderr, "round %ld: b ran with max_abs_err %g (tolerance %g)\n", i, info.max_abs_err, (double)hb->tolerance);
      }
    } else {
      ran_a++;
      if (info.status == CMX_OK) {
        older++; /* b verified, but its (mutated) sequence made a the newer */
      } else {
        refused[static_cast<unsigned>(info.status) % 32]++;
      }
    }
    cmx::unload(model);
  }
  printf("rounds=%ld failed=%ld ran_b=%ld ran_b_exact=%ld over_tolerance=%ld ran_a=%ld older=%ld", count, failed, ran_b,
         ran_b_exact, over_tolerance, ran_a, older);
  for (int s = 0; s < 32; ++s) {
    if (refused[s]) printf(" %s=%ld", cmx_status_name(static_cast<cmx_status>(s)), refused[s]);
  }
  printf("\n");
  return failed || over_tolerance ? 1 : 0;
}
