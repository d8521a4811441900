/* Host harness for the plan check and the backend's layer loop (tests/lower/test_plan_check.py), built
 * with AddressSanitizer and UndefinedBehaviorSanitizer over CMSIS-NN's C path and cmx-gen's kernels:
 * the plan, the working memory and every argument each in an allocation of exactly its size, so a
 * byte read or written outside any of them is a sanitizer report.
 *
 *   plan_run_host check PLAN              cmx_plan_check's verdict
 *   plan_run_host fuzz PLAN SEED COUNT    COUNT mutated plans: each refused by the check, or run
 *
 * Mutations: a flipped bit (anywhere in the header, the records or the data), a word of a record or of
 * the header set to a limit, two records of one size swapped, the plan cut short. A plan the check
 * accepts is run layer by layer; one whose bytes did not change must give the original's outputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "cmx_plan.h"
#include "cmx_plan_run.h"
#include "host_fuzz.h"

namespace {

/* Each argument in an allocation of its own, of exactly the plan's bytes (the working memory: its
 * work_bytes), inputs filled with `seed`'s bytes. */
struct Args {
  std::vector<void*> io;
  std::vector<size_t> bytes;
  ~Args() {
    for (void* p : io) free(p);
  }
};

void make_args(const uint8_t* plan, Args& a, uint32_t seed) {
  const auto* h = reinterpret_cast<const cmx_plan_header*>(plan);
  const auto* io_bytes = reinterpret_cast<const uint32_t*>(plan + sizeof(cmx_plan_header)) + h->n_inputs + h->n_outputs;
  for (uint32_t i = 0, k = 0; i < h->n_inputs + 1 + h->n_outputs; ++i) {
    const size_t n = i == h->n_inputs ? h->work_bytes : io_bytes[k++];
    auto* p = static_cast<uint8_t*>(malloc(n ? n : 1));
    for (size_t b = 0; b < n; ++b) p[b] = static_cast<uint8_t>((seed * 2654435761u + b * 40503u) >> 13);
    a.io.push_back(p);
    a.bytes.push_back(n);
  }
}

/* What the backend's execute checks before it runs: the arguments it is given hold what the plan says. */
bool arguments_hold(const uint8_t* plan, const Args& a) {
  const auto* h = reinterpret_cast<const cmx_plan_header*>(plan);
  if (h->n_inputs + 1 + h->n_outputs != a.io.size() || h->work_bytes > a.bytes[h->n_inputs]) return false;
  const auto* io_bytes = reinterpret_cast<const uint32_t*>(plan + sizeof(cmx_plan_header)) + h->n_inputs + h->n_outputs;
  for (uint32_t i = 0, k = 0; i < a.io.size(); ++i) {
    if (i != h->n_inputs && io_bytes[k++] > a.bytes[i]) return false;
  }
  return true;
}

/* Every layer of a checked plan, as the backend's execute runs them; false at a kernel's error. */
bool run(const uint8_t* plan, Args& a) {
  const auto* h = reinterpret_cast<const cmx_plan_header*>(plan);
  uint8_t* work = static_cast<uint8_t*>(a.io[h->n_inputs]);
  const uint8_t* p = plan + h->layers_offset;
  for (uint32_t i = 0; i < h->n_layers; ++i) {
    const auto* head = reinterpret_cast<const cmx_layer_head*>(p);
    p += head->size;
    int8_t* out = nullptr;
    size_t out_bytes = 0;
    cmx_run::Ticks ticks{0, 0};
    if (cmx_run::run_layer(head, plan, work, a.io.data(), out, out_bytes, ticks) != ARM_CMSIS_NN_SUCCESS) return false;
  }
  return true;
}

std::vector<uint8_t> outputs(const uint8_t* plan, const Args& a) {
  const auto* h = reinterpret_cast<const cmx_plan_header*>(plan);
  std::vector<uint8_t> all;
  for (uint32_t i = h->n_inputs + 1; i < a.io.size(); ++i) {
    const auto* o = static_cast<const uint8_t*>(a.io[i]);
    all.insert(all.end(), o, o + a.bytes[i]);
  }
  return all;
}

/* The offsets of each record, for swaps and word mutations. */
std::vector<size_t> records(const std::vector<uint8_t>& plan) {
  std::vector<size_t> at;
  const auto* h = reinterpret_cast<const cmx_plan_header*>(plan.data());
  size_t p = h->layers_offset;
  for (uint32_t i = 0; i < h->n_layers; ++i) {
    at.push_back(p);
    p += static_cast<size_t>(reinterpret_cast<const cmx_layer_head*>(plan.data() + p)->size);
  }
  return at;
}

void mutate(std::vector<uint8_t>& plan, const std::vector<size_t>& recs, size_t& size) {
  static const uint32_t limits[] = {0u, 1u, 2u, 3u, 4u, 15u, 16u, 255u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu, 0xFFFFFFFEu, 0x10000u};
  const auto* h = reinterpret_cast<const cmx_plan_header*>(plan.data());
  switch (fuzz_rnd() % 5) {
    case 0: plan[fuzz_rnd() % plan.size()] ^= static_cast<uint8_t>(1u << (fuzz_rnd() % 8)); break;
    case 1: { /* a word of a record (or the header and io sections): its kinds, sizes, offsets */
      const size_t words = h->data_offset / 4;
      const size_t at = 4 * (fuzz_rnd() % words);
      uint32_t value = limits[fuzz_rnd() % (sizeof(limits) / sizeof(limits[0]))];
      if (fuzz_rnd() & 1) {
        memcpy(&value, plan.data() + at, 4);
        value += static_cast<uint32_t>(static_cast<int32_t>(fuzz_rnd() % 33) - 16);
      }
      memcpy(plan.data() + at, &value, 4);
      break;
    }
    case 2: { /* two records of one size swapped: layers out of order */
      if (recs.size() < 2) break;
      const size_t a = recs[fuzz_rnd() % recs.size()], b = recs[fuzz_rnd() % recs.size()];
      const int32_t sa = reinterpret_cast<const cmx_layer_head*>(plan.data() + a)->size;
      const int32_t sb = reinterpret_cast<const cmx_layer_head*>(plan.data() + b)->size;
      if (sa != sb || a == b) break;
      std::vector<uint8_t> tmp(plan.begin() + static_cast<long>(a), plan.begin() + static_cast<long>(a) + sa);
      memmove(plan.data() + a, plan.data() + b, static_cast<size_t>(sa));
      memcpy(plan.data() + b, tmp.data(), static_cast<size_t>(sa));
      break;
    }
    case 3: size = fuzz_rnd() % plan.size(); break; /* cut short */
    default: { /* one field of one record to a limit */
      if (recs.empty()) break;
      const size_t r = recs[fuzz_rnd() % recs.size()];
      const int32_t rs = reinterpret_cast<const cmx_layer_head*>(plan.data() + r)->size;
      if (rs <= 12) break;
      const size_t at = r + 12 + 4 * (fuzz_rnd() % static_cast<uint32_t>((rs - 12) / 4));
      const uint32_t value = limits[fuzz_rnd() % (sizeof(limits) / sizeof(limits[0]))];
      memcpy(plan.data() + at, &value, 4);
      break;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const std::vector<uint8_t> original = fuzz_read_bytes(argv[2]);
  if (original.size() < sizeof(cmx_plan_header)) return 2;
  const char* why = nullptr;
  if (strcmp(argv[1], "check") == 0) {
    const int32_t bad = cmx_plan_check(original.data(), original.size(), &why);
    printf("check=%d why=%s\n", static_cast<int>(bad), why);
    return 0;
  }
  if (strcmp(argv[1], "fuzz") != 0 || argc < 5) return 2;
  fuzz_seed(strtoull(argv[3], nullptr, 10), 7u);
  const long count = strtol(argv[4], nullptr, 10);
  if (cmx_plan_check(original.data(), original.size(), &why) != 0) {
    printf("the original plan is refused: %s\n", why);
    return 1;
  }
  Args ref;
  make_args(original.data(), ref, 1);
  if (!run(original.data(), ref)) return 1;
  const std::vector<uint8_t> expected = outputs(original.data(), ref);
  const std::vector<size_t> recs = records(original);
  long refused = 0, same_ran = 0, changed_ran = 0, kernel_errors = 0, differ = 0;
  for (long i = 0; i < count; ++i) {
    std::vector<uint8_t> plan = original;
    size_t size = plan.size();
    mutate(plan, recs, size);
    const bool same = size == original.size() && plan == original;
    /* the plan in an allocation of exactly its (possibly cut) size, 16-byte aligned as in flash */
    auto* blob = static_cast<uint8_t*>(malloc(size ? size : 1));
    memcpy(blob, plan.data(), size);
    Args a; /* the program's own buffers: the original plan's sizes, whatever the mutated one says */
    make_args(original.data(), a, 1);
    if (size < sizeof(cmx_plan_header) || cmx_plan_check(blob, size, &why) != 0 || !arguments_hold(blob, a)) {
      refused++;
      free(blob);
      continue;
    }
    const bool ok = run(blob, a);
    if (!ok) kernel_errors++;
    if (same) {
      same_ran++;
      if (!ok || outputs(blob, a) != expected) differ++;
    } else {
      changed_ran++;
    }
    free(blob);
  }
  printf("mutations=%ld refused=%ld unchanged_ran=%ld changed_ran=%ld kernel_errors=%ld unchanged_differ=%ld\n", count,
         refused, same_ran, changed_ran, kernel_errors, differ);
  return differ ? 1 : 0;
}
