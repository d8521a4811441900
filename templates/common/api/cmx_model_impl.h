/*
 * cmx_model_impl.h - what a cmx_model handle holds (C++ only; private to cmx/api, the generated
 * model instance and the on-target check). Users include cmx.h, never this.
 *
 * A handle is static data: the embedded program, the model's pools (sized by cmx-gen from the
 * program's plan), its reference I/O, and room for the runtime objects cmx_init() constructs in
 * place. Nothing is allocated from a heap.
 */
#ifndef CMX_MODEL_IMPL_H
#define CMX_MODEL_IMPL_H

#include <new>
#include <stddef.h>
#include <stdint.h>
#include <utility>

#include <executorch/extension/data_loader/buffer_data_loader.h>
#include "cmx_split_loader.h"
#include <executorch/runtime/core/event_tracer.h>
#include <executorch/runtime/core/hierarchical_allocator.h>
#include <executorch/runtime/core/memory_allocator.h>
#include <executorch/runtime/executor/memory_manager.h>
#include <executorch/runtime/executor/method.h>
#include <executorch/runtime/executor/program.h>

#include "cmx.h"

/* kernels/cmx_program_check.cpp: 1 when a slot's program has every field the runtime reads unchecked. */
extern "C" int cmx_program_check(const uint8_t* pte, size_t nbytes);

namespace cmx {

/* A bump allocator that remembers the most it was ever asked to hold (also when it ran out), so
 * the pools' high-water marks can be reported and checked against the plan. */
class CountingAllocator : public executorch::runtime::MemoryAllocator {
 public:
  CountingAllocator(uint32_t size, uint8_t* base) : MemoryAllocator(size, base) {}

  void* allocate(size_t size, size_t alignment = kDefaultAlignment) override {
    if (alignment && !(alignment & (alignment - 1))) {
      uintptr_t cur = reinterpret_cast<uintptr_t>(base_address()) + used_size();
      uintptr_t start = (cur + alignment - 1) & ~static_cast<uintptr_t>(alignment - 1);
      size_t need = static_cast<size_t>(start - reinterpret_cast<uintptr_t>(base_address())) + size;
      if (need > peak_) peak_ = need;
    }
    return MemoryAllocator::allocate(size, alignment);
  }
  size_t peak() const { return peak_; }

 private:
  size_t peak_ = 0;
};

/* Room for one object built later, in place (the runtime's objects have no default constructor). */
template <typename T>
struct Slot {
  alignas(T) unsigned char bytes[sizeof(T)];
  template <typename... Args>
  T* emplace(Args&&... args) {
    return new (bytes) T(std::forward<Args>(args)...);
  }
  T* get() { return reinterpret_cast<T*>(bytes); }
  const T* get() const { return reinterpret_cast<const T*>(bytes); }
};

/* The runtime objects of one model, built by cmx_init(). */
struct ModelState {
  bool ready;
  bool program_built; /* program and method constructed: a slot that fails after them is unloaded */
  bool method_built;
  uint32_t detail;  /* ExecuTorch Error of the last failure */
  uint32_t invocations;
  size_t planned_used;  /* what the program's plan needs of the planned buffers, summed at init */
  uint32_t caller_inputs;  /* bit i: input i is read from the caller's buffer (not planned) */
  uint32_t unbound;        /* bit i: such an input cmx_input_bind() has not given a buffer yet */
  Slot<executorch::extension::BufferDataLoader> loader;
  Slot<SplitDataLoader> split_loader; /* a slot whose program's segments are in its weights area */
  Slot<executorch::runtime::Program> program;
  Slot<CountingAllocator> method_allocator;
  Slot<CountingAllocator> temp_allocator;
  Slot<executorch::runtime::HierarchicalAllocator> planned;
  Slot<executorch::runtime::MemoryManager> memory;
  Slot<executorch::runtime::Method> method;
};

/* One reference tensor (generated model/cmx_model_io.c): raw bytes in the program's dim order. */
struct ReferenceTensor {
  const void* data;
  uint32_t nbytes;
  uint32_t numel;
  int32_t dtype;
  float scale;
  int32_t zero_point;
};

/* The model's I/O quantization (--io int8), per input/output; scale 0 for float I/O. inv_scale is
 * 1/scale computed in double and rounded once, as torch's quantize_per_tensor multiplies by it. */
struct IoQuant {
  float scale;
  int32_t zero_point;
  float inv_scale;
};

/* placement = "slot": where the model may be, what the firmware was built to run, and the room the
 * chosen slot's reference I/O, quantization and planned sizes are copied into (cmx_api.cpp points the
 * handle's fields at them). */
struct SlotTable {
  /* cmx::slots_init: reached only through here, so an image of linked models links none of it */
  cmx_status (*init)(cmx_model* model, executorch::runtime::EventTracer* tracer);
  const uintptr_t* bases;
  const uint32_t* sizes;
  uint32_t count;
  const char* core;
  const char* isa;
  uint32_t planned_pool_bytes;
  uint32_t planned_capacity; /* entries of planned_sizes / the handle's planned_spans */
  ReferenceTensor* inputs;
  ReferenceTensor* outputs;
  IoQuant* input_quant;
  IoQuant* output_quant;
  uint32_t* planned_sizes;
  cmx_slot_info* info;
  int active;
  /* each slot's weights area (0, 0: none; cmx_slot.h "Weights outside the slot") */
  const uintptr_t* weights_bases;
  const uint32_t* weights_sizes;
  /* the program's segments when the chosen slot keeps them in its weights area (else nullptr) */
  const uint8_t* weights;
  size_t weights_bytes;
  /* cmx_program_check (kernels/): the fields ExecuTorch reads unchecked, before the program loads */
  int (*program_check)(const uint8_t* pte, size_t nbytes);
  float max_tolerance; /* the most error a slot's self-check may accept */
};

}  // namespace cmx

/* The handle: everything is static and fixed at generation, but `state` (and, for a model in a slot,
 * what cmx_init() takes from the slot it runs). */
struct cmx_model {
  const char* name;
  const uint8_t* pte;
  const uint8_t* pte_end;
  uint8_t* method_pool;
  uint32_t method_pool_bytes;
  uint8_t* temp_pool;
  uint32_t temp_pool_bytes;
  uint8_t* planned_pool;
  const uint32_t* planned_sizes;
  executorch::runtime::Span<uint8_t>* planned_spans;
  uint32_t planned_count;
  uint32_t num_inputs;
  uint32_t num_outputs;
  const cmx::IoQuant* input_quant;
  const cmx::IoQuant* output_quant;
  const cmx::ReferenceTensor* reference_inputs;
  const cmx::ReferenceTensor* reference_outputs; /* the check's expected outputs */
  float tolerance;          /* the check's largest accepted error (cmx_model.h CMX_TOLERANCE_LSB) */
  uint8_t has_reference;    /* 0: no expected outputs are known (a .pte): the check says RAN */
  uint8_t reference_bundle; /* 1: a bundle's outputs, checked in their own unit */
  const cmx_model** arena_owner; /* models sharing an arena: which one used it last; else nullptr */
  cmx::SlotTable* slots;         /* placement = "slot"; nullptr: the program is linked in (pte) */
  cmx::ModelState* state;
};

namespace cmx {

/* cmx_init() with an EventTracer (the profile and trace images of the check); nullptr otherwise. */
cmx_status init(cmx_model* model, executorch::runtime::EventTracer* tracer);

/* Load the handle's program into its pools (cmx_api.cpp), and undo it; a model in slots picks the
 * slot it runs with both (cmx_slots.cpp). */
cmx_status load(cmx_model* model, executorch::runtime::EventTracer* tracer);
void unload(cmx_model* model);
cmx_status slots_init(cmx_model* model, executorch::runtime::EventTracer* tracer);

/* The loaded method, after a successful init (the check reads outputs' dtypes through it). */
executorch::runtime::Method* method(cmx_model* model);

}  // namespace cmx

#endif /* CMX_MODEL_IMPL_H */
