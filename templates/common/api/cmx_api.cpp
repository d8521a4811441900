/*
 * cmx_api.cpp - the model API (cmx.h) over ExecuTorch's Program / Method / MemoryManager.
 *
 * One copy per image, whatever the number of models: each model is a `cmx_model` handle (generated
 * by cmx_model_instance.cpp from the model's cmx_model.h) that brings its own program and pools.
 * cmx_init() builds the runtime objects in the handle's static storage; cmx_invoke() only runs.
 */
#include <math.h>
#include <string.h>

#include <executorch/runtime/platform/runtime.h>

#include "cmx_model_impl.h"

extern "C" int cmx_register_kernels(void);  // generated: model/cmx_kernels.cpp

using executorch::extension::BufferDataLoader;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::HierarchicalAllocator;
using executorch::runtime::MemoryManager;
using executorch::runtime::Method;
using executorch::runtime::MethodMeta;
using executorch::runtime::Program;
using executorch::runtime::Result;
using executorch::runtime::Span;
using executorch::aten::Tensor;

#define CMX_ROUND16(n) ((((n) + 15u) / 16u) * 16u)

namespace {

/* Kernels and the runtime's PAL come up once per image, for all models. */
bool runtime_ready = false;

cmx_status failed(cmx_model* model, cmx_status status, Error err) {
  model->state->detail = static_cast<uint32_t>(err);
  return status;
}

bool ready(const cmx_model* model) { return model && model->state && model->state->ready; }

/* Models sharing an arena: the one that uses it now. A model's outputs are gone once another ran. */
void claim_arena(const cmx_model* model) {
  if (model->arena_owner) *model->arena_owner = model;
}
bool arena_reused(const cmx_model* model) { return model->arena_owner && *model->arena_owner != model; }

/* The method's input/output EValue: the tensors whose data is the planned buffer. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
const Tensor* io_tensor(const cmx_model* model, size_t index, bool input) {
  if (!ready(model)) return nullptr;
  Method* m = model->state->method.get();
  if (index >= (input ? m->inputs_size() : m->outputs_size())) return nullptr;
  const EValue& value = input ? m->get_input(index) : m->get_output(index);
  return value.isTensor() ? &value.toTensor() : nullptr;
}
#pragma GCC diagnostic pop

cmx_status describe(const cmx_model* model, size_t index, bool input, cmx_tensor* out) {
  if (!model || !out) return CMX_E_ARGUMENT;
  if (!ready(model)) return CMX_E_NOT_INITIALIZED;
  const Tensor* t = io_tensor(model, index, input);
  if (!t) return CMX_E_INDEX;
  if (input) {
    claim_arena(model);  /* the caller writes this model's inputs into the arena now */
  } else if (arena_reused(model)) {
    return CMX_E_ARENA_REUSED;
  }
  memset(out, 0, sizeof(*out));
  out->data = const_cast<void*>(t->const_data_ptr());
  out->caller_buffer = input && index < 32 && ((model->state->caller_inputs >> index) & 1u);
  out->nbytes = t->nbytes();
  out->numel = static_cast<size_t>(t->numel());
  out->dtype = static_cast<cmx_dtype>(t->scalar_type());
  out->rank = static_cast<uint32_t>(t->dim()) < CMX_MAX_DIMS ? static_cast<uint32_t>(t->dim()) : CMX_MAX_DIMS;
  for (uint32_t d = 0; d < out->rank; ++d) {
    out->shape[d] = static_cast<int32_t>(t->size(d));
    out->dim_order[d] = t->dim_order()[d];
  }
  const cmx::IoQuant& q = (input ? model->input_quant : model->output_quant)[index];
  if (out->dtype != CMX_DTYPE_FLOAT32) {
    out->scale = q.scale;
    out->zero_point = q.zero_point;
  }
  return CMX_OK;
}

}  // namespace

namespace cmx {

/* Load the handle's program and plan its pools: the model ready to run, or the step that failed.
 * A program from a slot is verified in full by the flatbuffer verifier as it is parsed. */
cmx_status load(cmx_model* model, executorch::runtime::EventTracer* tracer) {
  ModelState& s = *model->state;
  const size_t pte_bytes = static_cast<size_t>(model->pte_end - model->pte);
  executorch::runtime::DataLoader* loader = nullptr;
  if (model->slots && model->slots->weights) {
    loader = s.split_loader.emplace(model->pte, pte_bytes, model->slots->weights, model->slots->weights_bytes);
  } else {
    loader = s.loader.emplace(model->pte, pte_bytes);
  }
  const auto verification = model->slots ? Program::Verification::InternalConsistency : Program::Verification::Minimal;
  Result<Program> program = Program::load(loader, verification);
  if (!program.ok()) return failed(model, CMX_E_PROGRAM_LOAD, program.error());
  Program* p = s.program.emplace(std::move(program.get()));
  s.program_built = true;

  Result<MethodMeta> meta = p->method_meta("forward");
  if (!meta.ok()) return failed(model, CMX_E_METHOD_META, meta.error());

  /* Slice the planned pool, each buffer 16-byte aligned; check the plan against the program. */
  if (meta->num_memory_planned_buffers() != model->planned_count) {
    return failed(model, CMX_E_PLANNED_BUFFERS, Error::InvalidProgram);
  }
  size_t offset = 0;
  s.planned_used = 0;
  for (size_t i = 0; i < model->planned_count; ++i) {
    Result<int64_t> need = meta->memory_planned_buffer_size(i);
    if (!need.ok()) return failed(model, CMX_E_PLANNED_BUFFERS, need.error());
    s.planned_used += static_cast<size_t>(need.get());
    if (static_cast<uint64_t>(need.get()) > model->planned_sizes[i]) {
      return failed(model, CMX_E_PLANNED_BUFFERS, Error::MemoryAllocationFailed);
    }
    model->planned_spans[i] = Span<uint8_t>(model->planned_pool + offset, model->planned_sizes[i]);
    offset += CMX_ROUND16(model->planned_sizes[i]);
  }
  HierarchicalAllocator* planned =
      s.planned.emplace(Span<Span<uint8_t>>(model->planned_spans, static_cast<size_t>(model->planned_count)));
  CountingAllocator* method_alloc = s.method_allocator.emplace(model->method_pool_bytes, model->method_pool);
  CountingAllocator* temp_alloc = s.temp_allocator.emplace(model->temp_pool_bytes, model->temp_pool);
  MemoryManager* memory = s.memory.emplace(method_alloc, planned, temp_alloc);

  Result<Method> method = p->load_method("forward", memory, tracer);
  if (!method.ok()) {
    // cmx-gen's backend refuses a plan for another core or plan version with this error
    const Error err = method.error();
    const cmx_status st = err == Error::DelegateInvalidCompatibility ? CMX_E_PLAN
                          : err == Error::OperatorMissing           ? CMX_E_KERNEL_MISSING
                                                                     : CMX_E_LOAD_METHOD;
    return failed(model, st, err);
  }
  Method* m = s.method.emplace(std::move(method.get()));
  s.method_built = true;
  if (m->inputs_size() != model->num_inputs || m->outputs_size() != model->num_outputs) {
    return failed(model, CMX_E_IO_COUNT, Error::InvalidProgram);
  }

  /* Zero-copy I/O: the caller writes into the planned input buffers and reads the planned output
   * buffers. The runtime wants each input "set" once; setting it to itself marks it. An input the
   * program does not plan (input_memory = "caller") is set when cmx_input_bind() gives its buffer. */
  s.caller_inputs = 0;
  for (size_t i = 0; i < model->num_inputs; ++i) {
    Result<executorch::runtime::TensorInfo> info = meta->input_tensor_meta(i);
    if (!info.ok()) return failed(model, CMX_E_UNPLANNED_IO, info.error());
    if (!info->is_memory_planned()) {
      if (i >= 32) return failed(model, CMX_E_UNPLANNED_IO, Error::NotSupported);
      s.caller_inputs |= 1u << i;
      continue;
    }
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    EValue self = m->get_input(i);
#pragma GCC diagnostic pop
    Error err = m->set_input(self, i);
    if (err != Error::Ok) return failed(model, CMX_E_UNPLANNED_IO, err);
  }
  s.unbound = s.caller_inputs;
  for (size_t i = 0; i < model->num_outputs; ++i) {
    Result<executorch::runtime::TensorInfo> info = meta->output_tensor_meta(i);
    if (!info.ok() || !info->is_memory_planned()) return failed(model, CMX_E_UNPLANNED_IO, Error::NotSupported);
  }
  s.ready = true;
  return CMX_OK;
}

/* Undo load(): the runtime objects of a slot that failed, before the next slot is tried. */
void unload(cmx_model* model) {
  ModelState& s = *model->state;
  if (s.method_built) s.method.get()->~Method();
  if (s.program_built) s.program.get()->~Program();
  s.method_built = s.program_built = s.ready = false;
}

cmx_status init(cmx_model* model, executorch::runtime::EventTracer* tracer) {
  if (!model || !model->state) return CMX_E_ARGUMENT;
  if (model->state->ready) return CMX_OK;
  model->state->detail = 0;
  if (!runtime_ready) {  // kernels and the runtime's PAL come up once per image, for all models
    executorch::runtime::runtime_init();
    int reg = cmx_register_kernels();
    if (reg != 0) return failed(model, CMX_E_REGISTER_KERNELS, static_cast<Error>(reg));
    runtime_ready = true;
  }
  return model->slots ? model->slots->init(model, tracer) : load(model, tracer);
}

Method* method(cmx_model* model) { return ready(model) ? model->state->method.get() : nullptr; }

}  // namespace cmx

extern "C" {

cmx_status cmx_init(cmx_model* model) { return cmx::init(model, nullptr); }

cmx_status cmx_invoke(cmx_model* model) {
  if (!model) return CMX_E_ARGUMENT;
  if (!ready(model)) return CMX_E_NOT_INITIALIZED;
  if (model->state->unbound) return CMX_E_CALLER_INPUT;
  claim_arena(model);
  Error err = model->state->method.get()->execute();
  if (err != Error::Ok) return failed(model, CMX_E_EXECUTE, err);
  model->state->invocations++;
  return CMX_OK;
}

size_t cmx_num_inputs(const cmx_model* model) { return model ? model->num_inputs : 0; }
size_t cmx_num_outputs(const cmx_model* model) { return model ? model->num_outputs : 0; }

cmx_status cmx_input(const cmx_model* model, size_t index, cmx_tensor* tensor) {
  return describe(model, index, true, tensor);
}

cmx_status cmx_output(const cmx_model* model, size_t index, cmx_tensor* tensor) {
  return describe(model, index, false, tensor);
}

cmx_status cmx_input_bind(cmx_model* model, size_t index, const void* data, size_t nbytes) {
  cmx_tensor t;
  cmx_status st = cmx_input(model, index, &t);
  if (st != CMX_OK) return st;
  if (!data) return CMX_E_ARGUMENT;
  if (nbytes != t.nbytes) return CMX_E_SIZE;
  if (!t.caller_buffer) {
    memcpy(t.data, data, nbytes);
    return CMX_OK;
  }
  /* The method's input tensor takes the caller's address (ExecuTorch shares, never copies, the
   * data of an unplanned input); the program only reads it. */
  Method* m = model->state->method.get();
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  EValue self = m->get_input(index);
#pragma GCC diagnostic pop
  self.toTensor().unsafeGetTensorImpl()->set_data(const_cast<void*>(data));
  Error err = m->set_input(self, index);
  if (err != Error::Ok) return failed(model, CMX_E_CALLER_INPUT, err);
  model->state->unbound &= ~(1u << index);
  return CMX_OK;
}

cmx_status cmx_input_set_f32(cmx_model* model, size_t index, const float* values, size_t count) {
  cmx_tensor t;
  cmx_status st = cmx_input(model, index, &t);
  if (st != CMX_OK) return st;
  if (!values) return CMX_E_ARGUMENT;
  if (t.caller_buffer) return CMX_E_CALLER_INPUT;
  if (count != t.numel) return CMX_E_SIZE;
  if (t.dtype == CMX_DTYPE_FLOAT32) {
    memcpy(t.data, values, count * sizeof(float));
    return CMX_OK;
  }
  if (t.dtype != CMX_DTYPE_INT8 || !(t.scale > 0.0f)) return CMX_E_DTYPE;
  int8_t* q = static_cast<int8_t*>(t.data);
  const float inv = model->input_quant[index].inv_scale;
  for (size_t k = 0; k < count; ++k) {
    float v = nearbyintf(values[k] * inv) + static_cast<float>(t.zero_point);  // ties to even, as torch
    q[k] = static_cast<int8_t>(v < -128.0f ? -128.0f : (v > 127.0f ? 127.0f : v));
  }
  return CMX_OK;
}

cmx_status cmx_output_get_f32(const cmx_model* model, size_t index, float* values, size_t count) {
  cmx_tensor t;
  cmx_status st = cmx_output(model, index, &t);
  if (st != CMX_OK) return st;
  if (!values) return CMX_E_ARGUMENT;
  if (count != t.numel) return CMX_E_SIZE;
  if (t.dtype == CMX_DTYPE_FLOAT32) {
    memcpy(values, t.data, count * sizeof(float));
    return CMX_OK;
  }
  if (t.dtype != CMX_DTYPE_INT8 || !(t.scale > 0.0f)) return CMX_E_DTYPE;
  const int8_t* q = static_cast<const int8_t*>(t.data);
  for (size_t k = 0; k < count; ++k) values[k] = t.scale * static_cast<float>(q[k] - t.zero_point);
  return CMX_OK;
}

cmx_status cmx_reference_input(const cmx_model* model, size_t index, const void** data, size_t* nbytes) {
  if (!model || !data || !nbytes) return CMX_E_ARGUMENT;
  if (index >= model->num_inputs) return CMX_E_INDEX;
  *data = model->reference_inputs[index].data;
  *nbytes = model->reference_inputs[index].nbytes;
  return CMX_OK;
}

namespace {

double element(const void* data, uint32_t index, int dtype) {
  switch (static_cast<executorch::aten::ScalarType>(dtype)) {
    case executorch::aten::ScalarType::Byte: return static_cast<const uint8_t*>(data)[index];
    case executorch::aten::ScalarType::Char: return static_cast<const int8_t*>(data)[index];
    case executorch::aten::ScalarType::Short: return static_cast<const int16_t*>(data)[index];
    case executorch::aten::ScalarType::Int: return static_cast<const int32_t*>(data)[index];
    case executorch::aten::ScalarType::Long: return static_cast<double>(static_cast<const int64_t*>(data)[index]);
    case executorch::aten::ScalarType::Float: return static_cast<const float*>(data)[index];
    case executorch::aten::ScalarType::Double: return static_cast<const double*>(data)[index];
    case executorch::aten::ScalarType::Bool: return static_cast<const bool*>(data)[index] ? 1.0 : 0.0;
    default: return 0.0;
  }
}

}  // namespace

cmx_status cmx_check_outputs(const cmx_model* model, double* max_abs_err) {
  if (!model) return CMX_E_ARGUMENT;
  if (!ready(model)) return CMX_E_NOT_INITIALIZED;
  if (!model->has_reference) return CMX_E_NO_REFERENCE;
  double max_err = 0.0;
  for (size_t i = 0; i < model->num_outputs; ++i) {
    cmx_tensor out;
    const cmx_status st = cmx_output(model, i, &out);
    if (st != CMX_OK) return st;
    const cmx::ReferenceTensor& ref = model->reference_outputs[i];
    if (out.nbytes != ref.nbytes || out.numel != ref.numel || static_cast<int>(out.dtype) != ref.dtype) {
      return CMX_E_SIZE;  // (a slot's reference is input: its count is the output's, or it is not read)
    }
    const double step = ref.scale > 0.0f ? static_cast<double>(ref.scale) : 1.0;
    for (uint32_t k = 0; k < ref.numel; ++k) {
      double d = element(out.data, k, ref.dtype) - element(ref.data, k, ref.dtype);
      if (d < 0) d = -d;
      d /= step;
      if (d != d) d = 1e30;  // NaN never passes
      if (d > max_err) max_err = d;
    }
  }
  if (max_abs_err) *max_abs_err = max_err;
  return max_err <= static_cast<double>(model->tolerance) ? CMX_OK : CMX_E_MISMATCH;
}

cmx_status cmx_self_test(cmx_model* model, double* max_abs_err) {
  if (!model) return CMX_E_ARGUMENT;
  if (!ready(model)) return CMX_E_NOT_INITIALIZED;
  if (!model->has_reference) return CMX_E_NO_REFERENCE;
  for (size_t i = 0; i < model->num_inputs; ++i) {
    const cmx_status st = cmx_input_bind(model, i, model->reference_inputs[i].data, model->reference_inputs[i].nbytes);
    if (st != CMX_OK) return st;
  }
  const cmx_status st = cmx_invoke(model);
  return st != CMX_OK ? st : cmx_check_outputs(model, max_abs_err);
}

cmx_status cmx_get_stats(const cmx_model* model, cmx_stats* stats) {
  if (!model || !stats) return CMX_E_ARGUMENT;
  memset(stats, 0, sizeof(*stats));
  stats->method_size = model->method_pool_bytes;
  stats->temp_size = model->temp_pool_bytes;
  for (size_t i = 0; i < model->planned_count; ++i) stats->planned_size += model->planned_sizes[i];
  if (!ready(model)) return CMX_E_NOT_INITIALIZED;
  cmx::ModelState& s = *model->state;
  stats->method_used = s.method_allocator.get()->peak();
  stats->temp_used = s.temp_allocator.get()->peak();
  stats->planned_used = s.planned_used;
  stats->invocations = s.invocations;
  return CMX_OK;
}

const char* cmx_name(const cmx_model* model) { return model ? model->name : ""; }

const char* cmx_status_name(cmx_status status) {
  switch (status) {
    case CMX_OK: return "ok";
    case CMX_E_REGISTER_KERNELS: return "register_kernels";
    case CMX_E_PROGRAM_LOAD: return "program_load";
    case CMX_E_METHOD_META: return "method_meta";
    case CMX_E_PLANNED_BUFFERS: return "planned_buffers";
    case CMX_E_LOAD_METHOD: return "load_method";
    case CMX_E_IO_COUNT: return "io_count";
    case CMX_E_UNPLANNED_IO: return "unplanned_io";
    case CMX_E_EXECUTE: return "execute";
    case CMX_E_NOT_INITIALIZED: return "not_initialized";
    case CMX_E_INDEX: return "index";
    case CMX_E_SIZE: return "size";
    case CMX_E_DTYPE: return "dtype";
    case CMX_E_ARGUMENT: return "argument";
    case CMX_E_ARENA_REUSED: return "arena_reused";
    case CMX_E_PLAN: return "plan";
    case CMX_E_CALLER_INPUT: return "caller_input";
    case CMX_E_MISMATCH: return "mismatch";
    case CMX_E_NO_REFERENCE: return "no_reference";
    case CMX_E_SLOT_EMPTY: return "slot_empty";
    case CMX_E_SLOT_CORRUPT: return "slot_corrupt";
    case CMX_E_SLOT_INCOMPATIBLE: return "slot_incompatible";
    case CMX_E_SLOT_TOO_LARGE: return "slot_too_large";
    case CMX_E_SLOT_REJECTED: return "slot_rejected";
    case CMX_E_KERNEL_MISSING: return "kernel_missing";
    case CMX_E_NO_MODEL: return "no_model";
  }
  return "unknown";
}

uint32_t cmx_error_detail(const cmx_model* model) { return model && model->state ? model->state->detail : 0; }

}  // extern "C"
