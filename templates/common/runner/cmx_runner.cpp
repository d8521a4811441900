/*
 * cmx_runner.cpp - the cmx-gen on-target check, shared by every app kind.
 *
 * Through the model API (cmx/api: the same code the user's application calls) it loads the
 * program embedded by model/model_pte.S into the pools sized from the plan in model/cmx_model.h,
 * runs `forward` once on the reference input from model/cmx_model_io.c, compares with the
 * expected output and prints ONE machine-readable line (an app of several models: one line per
 * model, ending ` model=<name>`, loaded all before any runs, then a summary line ending
 * ` models=<n>`), e.g.
 *
 *   cmx-gen: PASS max_abs_err=0 instr=1810234 method=11552/11776 planned=20464/20464 temp=212/256
 *
 * max_abs_err is in output quantization steps (LSB) when the output has a scale, else in the
 * output's own unit; each pool is printed as used/allocated bytes (and the stack, when the
 * platform measures it). Errors print
 * `cmx-gen: FAIL error=<stage>:0x<code> ...` with the pools measured so far.
 *
 * Platform services (console, counter, exit) come from cmx_platform.h; nothing here allocates
 * from the heap or uses stdio.
 *
 * Two diagnostic builds hook ExecuTorch's EventTracer interface (no runtime patch); a default
 * build compiles neither:
 *   -D CMX_PROFILE=1  counts each instruction (the runtime's debug handle) with the platform
 *                     counter and prints `cmx-gen: prof <instruction> <count>` after the result line;
 *   -D CMX_TRACE=1    streams each instruction's output bytes as it completes,
 *                     `cmx-gen: trace <instruction> <offset> <hex>`, for `cmx-gen run --trace`.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <executorch/runtime/platform/platform.h>

#include "cmx_model_impl.h"
#include "cmx_models.h"
#include "cmx_platform.h"

#if (defined(CMX_PROFILE) && CMX_PROFILE) || (defined(CMX_TRACE) && CMX_TRACE)
#define CMX_PROFILING 1
#if CMX_NUM_MODELS != 1
#error "the profile and trace images are for an app of one model"
#endif
#include "cmx_model.h" /* the instruction table of the one model */
#else
#define CMX_PROFILING 0
#endif

using executorch::runtime::EValue;
using executorch::runtime::Result;
using executorch::aten::Tensor;

namespace {

/* The models under test, in order: each handle (cmx_model_instance.cpp) holds its pools. */
cmx_model* const models[CMX_NUM_MODELS] = {CMX_MODEL_LIST};
cmx_model& model = *models[0]; /* the profile and trace images' one model */

/* --- a tiny line builder: no printf (newlib's lacks %zu and costs heap) --- */
struct Line {
  char buf[192];
  size_t n = 0;
  Line& s(const char* t) {
    while (*t && n + 1 < sizeof(buf)) buf[n++] = *t++;
    buf[n] = '\0';
    return *this;
  }
  Line& u(uint64_t v) {
    char tmp[24];
    int i = 0;
    do {
      tmp[i++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v);
    while (i && n + 1 < sizeof(buf)) buf[n++] = tmp[--i];
    buf[n] = '\0';
    return *this;
  }
  Line& hex(uint32_t v) {
    static const char digits[] = "0123456789abcdef";
    s("0x");
    bool started = false;
    for (int shift = 28; shift >= 0; shift -= 4) {
      uint32_t d = (v >> shift) & 0xF;
      if (d || started || shift == 0) {
        started = true;
        char c[2] = {digits[d], 0};
        s(c);
      }
    }
    return *this;
  }
  /* A non-negative value with 3 decimals, trailing zeros trimmed: 0, 1, 0.5, 0.125 */
  Line& fixed3(double v) {
    if (!(v >= 0)) return s("nan");
    if (v > 1e15) return s("inf");
    uint64_t milli = static_cast<uint64_t>(v * 1000.0 + 0.5);
    u(milli / 1000);
    uint32_t frac = static_cast<uint32_t>(milli % 1000);
    if (frac) {
      char d[5] = {'.', static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                   static_cast<char>('0' + frac % 10), 0};
      int end = 3;
      while (d[end] == '0') d[end--] = 0;
      s(d);
    }
    return *this;
  }
  /* A non-negative value as d.ddde-NN (small tolerances and errors in a float output's own unit). */
  Line& sci(double v) {
    if (!(v >= 0)) return s("nan");
    if (v == 0) return s("0");
    int exp10 = 0;
    while (v >= 10.0 && exp10 < 300) v /= 10.0, ++exp10;
    while (v < 1.0 && exp10 > -300) v *= 10.0, --exp10;
    uint64_t milli = static_cast<uint64_t>(v * 1000.0 + 0.5);
    if (milli >= 10000) milli /= 10, ++exp10;
    u(milli / 1000).s(".");
    const char d[4] = {static_cast<char>('0' + milli / 100 % 10), static_cast<char>('0' + milli / 10 % 10),
                       static_cast<char>('0' + milli % 10), 0};
    s(d).s(exp10 < 0 ? "e-" : "e+");
    return u(static_cast<uint64_t>(exp10 < 0 ? -exp10 : exp10));
  }
  void print() { cmx_platform_puts(buf), cmx_platform_puts("\n"); }
};

struct Measured {
  cmx_stats pools = {};
  uint64_t count = 0;
  bool counted = false;
};

#if (defined(CMX_DUMP_OUTPUTS) && CMX_DUMP_OUTPUTS) || (defined(CMX_TRACE) && CMX_TRACE)
/* `cmx-gen: <tag> <i> <offset> <hex>` lines of 32 bytes each, parsed by cmx_gen.device.runners.base. */
void print_hex(const char* tag, size_t i, const uint8_t* bytes, size_t nbytes) {
  static const char digits[] = "0123456789abcdef";
  for (size_t at = 0; at < nbytes; at += 32) {
    Line line;
    line.s("cmx-gen: ").s(tag).s(" ").u(i).s(" ").u(at).s(" ");
    for (size_t k = at; k < at + 32 && k < nbytes; ++k) {
      const char pair[3] = {digits[bytes[k] >> 4], digits[bytes[k] & 15], 0};
      line.s(pair);
    }
    line.print();
  }
}
#endif

#if defined(CMX_DUMP_OUTPUTS) && CMX_DUMP_OUTPUTS
/* -D CMX_DUMP_OUTPUTS=ON: after the result line, every output's bytes in memory (dim) order,
 * for cmx_gen.device.runners.base.parse_outputs to compare element by element with the reference. */
void dump_outputs(cmx_model* m) {
  for (size_t i = 0; i < cmx_num_outputs(m); ++i) {
    cmx_tensor out;
    if (cmx_output(m, i, &out) == CMX_OK) print_hex("out", i, static_cast<const uint8_t*>(out.data), out.nbytes);
  }
}
#endif

#if CMX_PROFILING
using executorch::runtime::AllocatorID;
using executorch::runtime::ArrayRef;
using executorch::runtime::ChainID;
using executorch::runtime::DebugHandle;
using executorch::runtime::DelegateDebugIdType;
using executorch::runtime::DelegateDebugIntId;
using executorch::runtime::EventTracer;
using executorch::runtime::EventTracerEntry;
using executorch::runtime::EventTracerFilterBase;
using executorch::runtime::LoggedEValueType;
using executorch::runtime::kUnsetChainId;

/* The profile: counter ticks per instruction, summed over the inference (budgeted by cmx-gen as
 * CMX_NUM_INSTRUCTIONS x 8 bytes). */
#if defined(CMX_PROFILE) && CMX_PROFILE
static uint64_t instruction_counts[CMX_NUM_INSTRUCTIONS];
/* Layers of cmx-gen's backend, inside their delegate's instruction: counter ticks per layer (by the
 * debug id its plan gives it), each from the layer's start to its end. */
#ifndef CMX_NUM_DELEGATED_LAYERS
#define CMX_NUM_DELEGATED_LAYERS 0
#endif
struct LayerCount {
  int64_t debug;
  uint64_t count;
};
static LayerCount layer_counts[CMX_NUM_DELEGATED_LAYERS > 0 ? CMX_NUM_DELEGATED_LAYERS : 1];
static size_t layer_slots = 0;
/* ... and of each layer, the kernel call alone (the backend's "kernel" events). */
static LayerCount kernel_counts[CMX_NUM_DELEGATED_LAYERS > 0 ? CMX_NUM_DELEGATED_LAYERS : 1];
static size_t kernel_slots = 0;
/* The slot of `debug` in `table` (a new one the first time); capacity when the table is full. */
static size_t slot_of(LayerCount* table, size_t* slots, size_t capacity, int64_t debug) {
  size_t slot = 0;
  while (slot < *slots && table[slot].debug != debug) ++slot;
  if (slot == *slots) {
    if (*slots == capacity) return capacity;
    table[(*slots)++] = LayerCount{debug, 0};
  }
  return slot;
}
static void add_count(LayerCount* table, size_t* slots, size_t capacity, int64_t debug, uint64_t ticks) {
  const size_t slot = slot_of(table, slots, capacity, debug);
  if (slot < capacity) table[slot].count += ticks;
}
/* `cmx-gen run --profile`'s cycle column: cmx_profile_mark(k) reads byte k of this array, and
 * cmx-gen's QEMU plugin (kernels/qemu_plugin/cmx_cycles.c) gives what ran since the previous mark
 * to key k, as the counts below give their ticks: instruction h is key h, layer slot s key
 * CMX_NUM_INSTRUCTIONS + s, anything else (Method::execute's own work) the last key. */
#define CMX_MARK_OUTSIDE (CMX_NUM_INSTRUCTIONS + sizeof(layer_counts) / sizeof(layer_counts[0]))
extern "C" {
__attribute__((used)) volatile uint8_t cmx_profile_marks[CMX_MARK_OUTSIDE + 1];
}
static inline void cmx_profile_mark(size_t key) { (void)cmx_profile_marks[key]; }
#endif
#if defined(CMX_TRACE) && CMX_TRACE
struct TraceOutput {
  uint32_t mem_id, offset, nbytes;
};
static const TraceOutput trace_outputs[CMX_NUM_INSTRUCTIONS] = CMX_TRACE_OUTPUTS;
#endif

/* ExecuTorch calls start/end_profiling around every instruction of Method::execute ("OPERATOR_CALL",
 * after set_chain_debug_handle(chain, instruction)), and the generated kernel wrappers once more
 * inside it ("native_call_<op>"): only the outer event of an instruction counts. Method-level
 * events come with no chain set. An instruction counts from the end of the one before (from its
 * own start for the first), so its row includes the runtime's dispatch of it and the rows add up
 * to the inference. Nothing is logged to a buffer: the profile keeps one counter per instruction,
 * the trace streams the instruction's output (in planned memory, at the offset the program
 * records) before the next instruction can overwrite it. */
class CmxTracer final : public EventTracer {
 public:
  void create_event_block(const char*) override {}
  EventTracerEntry start_profiling(const char*, ChainID chain_id, DebugHandle debug_handle) override {
    EventTracerEntry entry{};
    entry.chain_id = chain_id == kUnsetChainId ? chain_id_ : chain_id;
    entry.debug_handle = chain_id == kUnsetChainId ? debug_handle_ : debug_handle;
    entry.delegate_event_id_type = DelegateDebugIdType::kNone;
    entry.event_id = entry.chain_id == kUnsetChainId ? -1 : depth_++;  // 0: the instruction itself
    if (entry.chain_id == kUnsetChainId) have_last_ = false;  // Method::execute begins (or ends)
#if defined(CMX_PROFILE) && CMX_PROFILE
    if (!have_last_ && entry.event_id == 0) cmx_profile_mark(CMX_MARK_OUTSIDE);  // the first instruction's start
    if (entry.chain_id == kUnsetChainId) cmx_profile_mark(CMX_MARK_OUTSIDE);
#endif
    entry.start_time = cmx_platform_counter();
    return entry;
  }
  void end_profiling(EventTracerEntry entry) override {
    const uint64_t now = cmx_platform_counter();
    if (entry.event_id < 0) return;
    if (--depth_ != 0 || entry.debug_handle >= CMX_NUM_INSTRUCTIONS) return;
#if defined(CMX_PROFILE) && CMX_PROFILE
    instruction_counts[entry.debug_handle] += now - (have_last_ ? last_end_ : entry.start_time);
    cmx_profile_mark(entry.debug_handle);
#else
    (void)now;
#endif
#if defined(CMX_TRACE) && CMX_TRACE
    const TraceOutput& out = trace_outputs[entry.debug_handle];
#if CMX_PLANNED_BUFFER_COUNT > 0
    if (out.mem_id >= 1 && out.mem_id <= CMX_PLANNED_BUFFER_COUNT) {
      print_hex("trace", entry.debug_handle, model.planned_spans[out.mem_id - 1].data() + out.offset, out.nbytes);
    }
#else
    (void)out;
#endif
    last_end_ = cmx_platform_counter();  // the streaming is not the next instruction's time
#else
    last_end_ = now;
#endif
    have_last_ = true;
  }
  EventTracerEntry start_profiling_delegate(const char*, DelegateDebugIntId id) override {
    EventTracerEntry entry{};
    entry.delegate_event_id_type = DelegateDebugIdType::kInt;
    entry.event_id = id;
#if defined(CMX_PROFILE) && CMX_PROFILE
    if (debug_handle_ < CMX_NUM_INSTRUCTIONS) cmx_profile_mark(debug_handle_);  // the delegate's own work so far
#endif
    entry.start_time = cmx_platform_counter();
    return entry;
  }
  void end_profiling_delegate(EventTracerEntry entry, const void*, size_t) override {
#if defined(CMX_PROFILE) && CMX_PROFILE
    const uint64_t ticks = cmx_platform_counter() - entry.start_time;
    const size_t capacity = sizeof(layer_counts) / sizeof(layer_counts[0]);
    const size_t slot = slot_of(layer_counts, &layer_slots, capacity, entry.event_id);
    if (slot < capacity) {
      layer_counts[slot].count += ticks;
      cmx_profile_mark(CMX_NUM_INSTRUCTIONS + slot);
    }
#else
    (void)entry;
#endif
  }
  void log_profiling_delegate(const char*, DelegateDebugIntId id, et_timestamp_t start, et_timestamp_t end,
                              const void*, size_t) override {
#if defined(CMX_PROFILE) && CMX_PROFILE
    add_count(kernel_counts, &kernel_slots, sizeof(kernel_counts) / sizeof(kernel_counts[0]), id,
              static_cast<uint64_t>(end - start));
#else
    (void)id;
    (void)start;
    (void)end;
#endif
  }
  void track_allocation(AllocatorID, size_t) override {}
  AllocatorID track_allocator(const char*) override { return 0; }
  Result<bool> log_evalue(const EValue&, LoggedEValueType) override { return false; }
  Result<bool> log_intermediate_output_delegate(const char*, DelegateDebugIntId, const Tensor&) override {
    return false;
  }
  Result<bool> log_intermediate_output_delegate(const char*, DelegateDebugIntId, const ArrayRef<Tensor>) override {
    return false;
  }
  Result<bool> log_intermediate_output_delegate(const char*, DelegateDebugIntId, const int&) override { return false; }
  Result<bool> log_intermediate_output_delegate(const char*, DelegateDebugIntId, const bool&) override { return false; }
  Result<bool> log_intermediate_output_delegate(const char*, DelegateDebugIntId, const double&) override {
    return false;
  }
  void set_delegation_intermediate_output_filter(EventTracerFilterBase*) override {}

 private:
  int64_t depth_ = 0;  // profiling events open inside the current instruction
  uint64_t last_end_ = 0;  // counter when the previous instruction ended
  bool have_last_ = false;
};

CmxTracer tracer;
#define CMX_EVENT_TRACER (&tracer)
#if defined(CMX_TRACE) && CMX_TRACE
/* cmx-gen's backend calls this after each layer in the trace image (kernels/backend/cmx_backend.cpp). */
extern "C" void cmx_backend_layer_output(int32_t debug, const void* data, size_t nbytes) {
  print_hex("trace_layer", static_cast<size_t>(debug), static_cast<const uint8_t*>(data), nbytes);
}
#endif
#else
#define CMX_EVENT_TRACER nullptr
#endif

void print_pools(Line& line, const Measured& m) {
  if (m.counted) line.s(" ").s(cmx_platform_counter_name()).s("=").u(m.count);
  line.s(" method=").u(m.pools.method_used).s("/").u(m.pools.method_size);
  line.s(" planned=").u(m.pools.planned_used).s("/").u(m.pools.planned_size);
  line.s(" temp=").u(m.pools.temp_used).s("/").u(m.pools.temp_size);
  uint32_t stack_used = 0, stack_size = 0;
  if (cmx_platform_stack && cmx_platform_stack(&stack_used, &stack_size) == 0) {
    line.s(" stack=").u(stack_used).s("/").u(stack_size);
  }
}

/* ` model=<name>` closes a model's line in an app of several (the summary line follows). */
void print_model(Line& line, const cmx_model* m) {
  const int slot = cmx_active_slot(m);
  if (slot >= 0) {
    const char name[2] = {static_cast<char>('a' + slot), 0};
    line.s(" slot=").s(name);
  }
  if (CMX_NUM_MODELS > 1) line.s(" model=").s(cmx_name(m));
}

/* A model in slots (placement = "slot"): what cmx_init() found in each, before the result line. */
void print_slots(const cmx_model* m) {
  for (size_t i = 0; i < cmx_num_slots(m); ++i) {
    cmx_slot_info info;
    if (cmx_slot_state(m, i, &info) != CMX_OK) continue;
    const char name[2] = {static_cast<char>('a' + i), 0};
    Line line;
    line.s("cmx-gen: slot ").s(name).s(" status=").s(cmx_status_name(info.status)).s(" sequence=").u(info.sequence);
    line.s(" bytes=").u(info.nbytes);
    line.print();
  }
}

int fail(const char* stage, uint32_t code, const Measured& m, const cmx_model* of) {
  Line line;
  line.s("cmx-gen: FAIL error=").s(stage).s(":").hex(code);
  print_pools(line, m);
  print_model(line, of);
  line.print();
  return code ? static_cast<int>(code) : 1;
}

}  // namespace

/* ExecuTorch PAL hooks: strong definitions over the weak ones of the minimal PAL. A platform whose
 * runtime brings its own PAL with strong definitions (ExecuTorch's Zephyr module:
 * runtime/platform/default/zephyr.cpp) defines CMX_PAL_PROVIDED, else the link has them twice. */
#ifndef CMX_PAL_PROVIDED
extern "C" {
et_timestamp_t et_pal_current_ticks(void) { return static_cast<et_timestamp_t>(cmx_platform_counter()); }

void et_pal_emit_log_message(et_timestamp_t, et_pal_log_level_t level, const char* filename,
                             const char*, size_t line, const char* message, size_t) {
  Line l;
  char lv[2] = {static_cast<char>(level), 0};
  l.s("[et ").s(lv).s("] ").s(filename ? filename : "?").s(":").u(line).s(" ").s(message);
  l.print();
}

ET_NORETURN void et_pal_abort(void) {
  cmx_platform_puts("cmx-gen: FAIL error=abort:0x1\n");
  cmx_platform_exit(134);
}
}
#endif /* CMX_PAL_PROVIDED */

namespace {

/* `error=<stage>:0x<code>`: the API's status name, and the runtime's error code behind it. */
int fail(cmx_model* m, cmx_status status, Measured& measured) {
  cmx_get_stats(m, &measured.pools);
  const uint32_t detail = cmx_error_detail(m);
  return fail(cmx_status_name(status), detail ? detail : static_cast<uint32_t>(status), measured, m);
}

/* The edges of the measured region for `cmx-gen run --cycles`: its QEMU plugin counts from the
 * first to the second (kernels/qemu_plugin/cmx_cycles.c). Out of line, named in the ELF, and not
 * folded into one (noipa); outside the counter reads, so `instr=` stays what it was. */
#if defined(__GNUC__) && !defined(__clang__)
#define CMX_MEASURE_EDGE extern "C" __attribute__((noipa, used))
#else
#define CMX_MEASURE_EDGE extern "C" __attribute__((noinline, used))
#endif
CMX_MEASURE_EDGE void cmx_measure_begin(void) { __asm volatile("" ::: "memory"); }
CMX_MEASURE_EDGE void cmx_measure_end(void) { __asm volatile("nop" ::: "memory"); }

/* One model's verdict, for the summary of an app of several. */
struct Checked {
  int status = 0;    /* 0 when it passed (or ran without a reference) */
  bool ran = false;  /* no reference: it ran, nothing was checked */
  double max_err = 0.0;
  Measured m;
};

/* Run model `mp` once on its reference input, compare, print its result line. */
Checked check(cmx_model* mp) {
  Checked c;
  Measured& m = c.m;
  cmx_model& model = *mp;
  /* Give the model its reference inputs: copied into the planned input buffers, or read where they
   * are in flash by a model that takes the caller's buffers (input_memory = "caller"). */
  for (size_t i = 0; i < model.num_inputs; ++i) {
    cmx_tensor in;
    cmx_status st = cmx_input(&model, i, &in);
    if (st != CMX_OK) return c.status = fail(&model, st, m), c;
    if (in.nbytes != model.reference_inputs[i].nbytes) return c.status = fail("input_size", static_cast<uint32_t>(i), m, &model), c;
    st = cmx_input_bind(&model, i, model.reference_inputs[i].data, in.nbytes);
    if (st != CMX_OK) return c.status = fail(&model, st, m), c;
  }

  cmx_measure_begin();
  uint64_t start = cmx_platform_counter();
  cmx_status st = cmx_invoke(&model);
  m.count = cmx_platform_counter() - start;
  cmx_measure_end();
  m.counted = true;
  cmx_get_stats(&model, &m.pools);
  if (st != CMX_OK) return c.status = fail(&model, st, m), c;

  const bool pools_ok = m.pools.method_used <= m.pools.method_size && m.pools.temp_used <= m.pools.temp_size;
  Line line;
  if (!model.has_reference) {
    /* No expected outputs (a .pte lowered elsewhere): it ran, and that is all this says. */
    c.ran = true;
    line.s(pools_ok ? "cmx-gen: RAN reference=none" : "cmx-gen: FAIL reference=none");
    print_pools(line, m);
    print_model(line, &model);
    line.print();
    c.status = pools_ok ? 0 : 1;
    return c;
  }
  /* Compare with the expected outputs of the lowered program (same dim order): the API's check,
   * the one a firmware's self test calls (cmx_check_outputs). */
  double max_err = 0.0;
  st = cmx_check_outputs(&model, &max_err);
  if (st != CMX_OK && st != CMX_E_MISMATCH) return c.status = fail(&model, st, m), c;
  const bool pass = st == CMX_OK;
  c.max_err = max_err;

  line.s(pass && pools_ok ? "cmx-gen: PASS" : "cmx-gen: FAIL").s(" max_abs_err=");
  if (model.reference_bundle) {
    line.sci(max_err);  // a bundle's outputs in their own unit, against BundleIO's tolerance
  } else {
    line.fixed3(max_err);
  }
  print_pools(line, m);
  if (model.reference_bundle) line.s(" tol=").sci(static_cast<double>(model.tolerance));
  print_model(line, &model);
  line.print();
#if defined(CMX_DUMP_OUTPUTS) && CMX_DUMP_OUTPUTS
  dump_outputs(&model);
#endif
  c.status = pass && pools_ok ? 0 : 1;
  return c;
}

/* The summary of an app of several models, the last result line: PASS when every model passed;
 * the counter summed over the models; the method pools summed; the planned buffers and temp pool
 * as the layout has them (shared: the largest use in the one arena; separate: summed). */
int summarize(const Checked* checked) {
  Measured all;
  all.counted = true;
  int status = 0;
  bool ran = false;
  double max_err = 0.0;
  for (size_t k = 0; k < CMX_NUM_MODELS; ++k) {
    const Checked& c = checked[k];
    if (c.status != 0 && status == 0) status = c.status;
    ran = ran || c.ran;
    if (c.max_err > max_err) max_err = c.max_err;
    all.count += c.m.count;
    all.pools.method_used += c.m.pools.method_used;
    all.pools.method_size += c.m.pools.method_size;
#if CMX_SHARED_ARENA
    if (c.m.pools.planned_used > all.pools.planned_used) all.pools.planned_used = c.m.pools.planned_used;
    if (c.m.pools.temp_used > all.pools.temp_used) all.pools.temp_used = c.m.pools.temp_used;
#else
    all.pools.planned_used += c.m.pools.planned_used;
    all.pools.planned_size += c.m.pools.planned_size;
    all.pools.temp_used += c.m.pools.temp_used;
    all.pools.temp_size += c.m.pools.temp_size;
#endif
  }
#if CMX_SHARED_ARENA
  all.pools.planned_size = CMX_SHARED_PLANNED_BYTES;
  all.pools.temp_size = CMX_SHARED_TEMP_BYTES;
#endif
  Line line;
  line.s(status != 0 ? "cmx-gen: FAIL" : (ran ? "cmx-gen: RAN" : "cmx-gen: PASS"));
  if (ran && status == 0) {
    line.s(" reference=none");
  } else {
    line.s(" max_abs_err=").fixed3(max_err);
  }
  print_pools(line, all);
  line.s(" models=").u(CMX_NUM_MODELS);
  line.print();
  return status;
}

}  // namespace

extern "C" int cmx_run(void) {
  int status = cmx_platform_init();
  if (status != 0) return status;

  /* Every model is loaded before any runs: a model's state must survive the others' calls. */
  for (size_t k = 0; k < CMX_NUM_MODELS; ++k) {
    Measured m;
    cmx_status st = cmx::init(models[k], CMX_EVENT_TRACER);
    print_slots(models[k]);
    if (st != CMX_OK) return fail(models[k], st, m);
  }
  Checked checked[CMX_NUM_MODELS];
  for (size_t k = 0; k < CMX_NUM_MODELS; ++k) checked[k] = check(models[k]);
#if defined(CMX_PROFILE) && CMX_PROFILE
  for (size_t i = 0; i < CMX_NUM_INSTRUCTIONS; ++i) {
    Line prof;
    prof.s("cmx-gen: prof ").u(i).s(" ").u(instruction_counts[i]);
    prof.print();
  }
  for (size_t i = 0; i < layer_slots; ++i) {
    Line prof;
    prof.s("cmx-gen: prof_layer ").u(static_cast<uint64_t>(layer_counts[i].debug)).s(" ").u(layer_counts[i].count);
    prof.print();
  }
  for (size_t i = 0; i < kernel_slots; ++i) {
    Line prof;
    prof.s("cmx-gen: prof_kernel ").u(static_cast<uint64_t>(kernel_counts[i].debug)).s(" ").u(kernel_counts[i].count);
    prof.print();
  }
#endif
  if (CMX_NUM_MODELS == 1) return checked[0].status;
  return summarize(checked);
}
