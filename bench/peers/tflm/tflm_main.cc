/*
 * TFLite Micro side of bench/peers: one MLPerf Tiny model through MicroInterpreter with the
 * CMSIS-NN kernels, timed and measured exactly as a cmx-gen app is. The console, the counter,
 * the stack paint, the exit and the linker script are a cmx-gen app's (platform/ and linker.ld of
 * the app rendered for the same sample and board), so both stacks are read by the same code.
 *
 * Prints, as the cmx-gen application prints its `call` lines:
 *   tflm: call <n> instr=<count>       one per inference; call 0 is the warm-up
 *   tflm: done calls=<n> arena=<used>/<size> stack=<used>/<size>
 * or `tflm: FAIL <what>`, exit 1. Built with TFLM_PROFILE=1 it also prints, for the last call,
 *   tflm: prof <n> <operator> <count>  the counter around each operator's Invoke (TFLM's profiler hook)
 *   tflm: mem <kind> <bytes>           the arena's persistent allocations by kind (RecordingMicroAllocator)
 * The last call runs between cmx_measure_begin() and cmx_measure_end(), the edges cmx-gen's cycle
 * plugin counts between (as in a cmx-gen check image: cmx_runner.cpp), outside the counter reads.
 */
#include <stddef.h>
#include <stdint.h>

#include "tensorflow/lite/micro/micro_interpreter.h"
#include "tensorflow/lite/micro/micro_mutable_op_resolver.h"
#include "tensorflow/lite/micro/micro_profiler_interface.h"
#include "tensorflow/lite/micro/recording_micro_interpreter.h"
#include "tensorflow/lite/schema/schema_generated.h"

extern "C" {
#include "cmx_platform.h"
}
#include "tflm_ops.h"  // written by CMakeLists.txt: TFLM_NUM_OPS, TFLM_ADD_OPS(resolver)

#ifndef TFLM_PROFILE
#define TFLM_PROFILE 0
#endif
#ifndef TFLM_CALLS
#define TFLM_CALLS 10
#endif
#ifndef TFLM_ARENA_BYTES
#define TFLM_ARENA_BYTES (256 * 1024)
#endif

extern "C" const uint8_t tflm_model[];  // tflm_model.S: the .tflite in the app's .cmx_model section

// The arena goes where the cmx-gen app keeps its pools (.cmx_arena), so both use the same RAM.
alignas(16) static uint8_t tensor_arena[TFLM_ARENA_BYTES] __attribute__((section(".cmx_arena")));

namespace {

// A console line without printf (newlib's printf would add its own code and heap to the peer).
struct Line {
  char text[128];
  size_t len = 0;
  Line& s(const char* str) {
    while (*str && len + 2 < sizeof(text)) text[len++] = *str++;
    return *this;
  }
  Line& u(uint64_t n) {
    char digits[20];
    int d = 0;
    do digits[d++] = static_cast<char>('0' + n % 10); while ((n /= 10) != 0);
    while (d && len + 2 < sizeof(text)) text[len++] = digits[--d];
    return *this;
  }
  void print() {
    text[len++] = '\n';
    text[len] = '\0';
    cmx_platform_puts(text);
  }
};

// Per-operator counts of one Invoke, read with the same counter as the whole inference.
class Profiler : public tflite::MicroProfilerInterface {
 public:
  uint32_t BeginEvent(const char* tag) override {
    if (count_ == kMax) return kMax;
    tags_[count_] = tag;
    ticks_[count_] = cmx_platform_counter();
    return count_++;
  }
  void EndEvent(uint32_t handle) override {
    if (handle < kMax) ticks_[handle] = cmx_platform_counter() - ticks_[handle];
  }
  void Reset() { count_ = 0; }
  uint32_t Count() const { return count_; }
  const char* Tag(uint32_t i) const { return tags_[i]; }
  uint64_t Ticks(uint32_t i) const { return ticks_[i]; }

 private:
  static constexpr uint32_t kMax = 128;
  const char* tags_[kMax] = {};
  uint64_t ticks_[kMax] = {};
  uint32_t count_ = 0;
};

[[noreturn]] void fail(const char* what) {
  Line().s("tflm: FAIL ").s(what).print();
  cmx_platform_exit(1);
}

}  // namespace

// The edges of the measured region for cmx-gen's cycle plugin: out of line and named in the ELF.
extern "C" __attribute__((noipa, used)) void cmx_measure_begin(void) { __asm volatile("" ::: "memory"); }
extern "C" __attribute__((noipa, used)) void cmx_measure_end(void) { __asm volatile("nop" ::: "memory"); }

int main() {
  if (cmx_platform_init() != 0) fail("platform");
  const tflite::Model* model = tflite::GetModel(tflm_model);
  if (model->version() != TFLITE_SCHEMA_VERSION) fail("schema_version");

  static tflite::MicroMutableOpResolver<TFLM_NUM_OPS> resolver;
  TFLM_ADD_OPS(resolver);
#if TFLM_PROFILE
  static Profiler profiler;
  static tflite::RecordingMicroInterpreter interpreter(model, resolver, tensor_arena, sizeof(tensor_arena), nullptr,
                                                       &profiler);
#else
  static tflite::MicroInterpreter interpreter(model, resolver, tensor_arena, sizeof(tensor_arena));
#endif
  if (interpreter.AllocateTensors() != kTfLiteOk) fail("allocate_tensors");

  // A fixed input pattern: the peer's weights are its own, so there is no reference to compare.
  TfLiteTensor* input = interpreter.input(0);
  for (size_t i = 0; i < input->bytes; ++i) input->data.int8[i] = static_cast<int8_t>((i * 37u + 11u) & 0x7Fu);

  for (uint32_t call = 0; call < TFLM_CALLS; ++call) {
#if TFLM_PROFILE
    profiler.Reset();
#endif
    const bool measured = call + 1 == TFLM_CALLS;
    if (measured) cmx_measure_begin();
    const uint64_t start = cmx_platform_counter();
    if (interpreter.Invoke() != kTfLiteOk) fail("invoke");
    const uint64_t count = cmx_platform_counter() - start;
    if (measured) cmx_measure_end();
    Line().s("tflm: call ").u(call).s(" ").s(cmx_platform_counter_name()).s("=").u(count).print();
  }
#if TFLM_PROFILE
  for (uint32_t i = 0; i < profiler.Count(); ++i) {
    Line().s("tflm: prof ").u(i).s(" ").s(profiler.Tag(i)).s(" ").u(profiler.Ticks(i)).print();
  }
  using Kind = tflite::RecordedAllocationType;
  static const struct {
    Kind kind;
    const char* name;
  } kinds[] = {{Kind::kTfLiteEvalTensorData, "eval_tensors"},
               {Kind::kPersistentTfLiteTensorData, "persistent_tensors"},
               {Kind::kPersistentTfLiteTensorQuantizationData, "tensor_quantization"},
               {Kind::kPersistentBufferData, "persistent_buffers"},
               {Kind::kTfLiteTensorVariableBufferData, "variable_buffers"},
               {Kind::kNodeAndRegistrationArray, "nodes_and_registrations"},
               {Kind::kOpData, "op_data"}};
  for (const auto& k : kinds) {
    Line().s("tflm: mem ").s(k.name).s(" ").u(interpreter.GetMicroAllocator().GetRecordedAllocation(k.kind).used_bytes).print();
  }
#endif
  uint32_t stack_used = 0, stack_size = 0;
  if (cmx_platform_stack) cmx_platform_stack(&stack_used, &stack_size);
  Line()
      .s("tflm: done calls=").u(TFLM_CALLS)
      .s(" arena=").u(interpreter.arena_used_bytes()).s("/").u(sizeof(tensor_arena))
      .s(" stack=").u(stack_used).s("/").u(stack_size)
      .print();
  cmx_platform_exit(0);
}
