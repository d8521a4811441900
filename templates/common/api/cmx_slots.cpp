/*
 * cmx_slots.cpp - cmx_init() of a model kept in flash slots (placement = "slot"): which slot runs.
 *
 * Every slot is checked (cmx_slot_verify: length, SHA-256, what this firmware can run, the pools)
 * and offered to the product's cmx_slot_authenticate(); the newest that passes is loaded and runs its
 * own self-check (its reference input, bit-exact against its reference output). The first slot, in
 * order of sequence, that does all of it runs; one that fails at any step is unloaded and the next is
 * tried, so a slot being written, cut short, corrupted or made for other firmware never runs while an
 * older one still works. Each slot's outcome stays readable (cmx_slot_state).
 */
#include <string.h>

#include "cmx_model_impl.h"
#include "cmx_slot.h"

/* What the backend was built with (cmx_backend.cpp); absent when the image has no backend layers. */
extern "C" uint64_t cmx_backend_kinds(void) __attribute__((weak));
extern "C" uint32_t cmx_backend_plan_version(void) __attribute__((weak));

namespace {

cmx_slot_fit firmware_fit(const cmx_model* model) {
  const cmx::SlotTable& t = *model->slots;
  cmx_slot_fit fit;
  fit.core = t.core;
  fit.isa = t.isa;
  fit.plan_version = cmx_backend_plan_version ? cmx_backend_plan_version() : 0u;
  fit.kinds = cmx_backend_kinds ? cmx_backend_kinds() : 0u;
  fit.method_pool_bytes = model->method_pool_bytes;
  fit.temp_pool_bytes = model->temp_pool_bytes;
  fit.planned_pool_bytes = t.planned_pool_bytes;
  fit.num_inputs = model->num_inputs;
  fit.num_outputs = model->num_outputs;
  fit.max_tolerance = t.max_tolerance;
  return fit;
}

void take_tensor(const uint8_t* slot, const cmx_slot_tensor& from, cmx::ReferenceTensor* ref, cmx::IoQuant* quant) {
  ref->data = from.nbytes ? slot + from.offset : nullptr;
  ref->nbytes = from.nbytes;
  ref->numel = from.numel;
  ref->dtype = from.dtype;
  ref->scale = from.scale;
  ref->zero_point = from.zero_point;
  quant->scale = from.io_scale;
  quant->zero_point = from.io_zero_point;
  quant->inv_scale = from.io_inv_scale;
}

/* Slot i's weights area, or nullptr when it has none. */
const uint8_t* weights_of(const cmx::SlotTable& t, uint32_t i) {
  return t.weights_bases[i] ? reinterpret_cast<const uint8_t*>(t.weights_bases[i]) : nullptr;
}

/* Point the handle at what a verified slot holds: its program, reference I/O, quantization, plan. */
void take_slot(cmx_model* model, const uint8_t* slot, const uint8_t* weights, const cmx_slot_header& h) {
  cmx::SlotTable& t = *model->slots;
  model->pte = slot + h.pte_offset;
  model->pte_end = model->pte + h.pte_bytes;
  t.weights = h.weights_bytes ? weights : nullptr;
  t.weights_bytes = h.weights_bytes;
  for (uint32_t i = 0; i < h.num_inputs; ++i) take_tensor(slot, h.inputs[i], &t.inputs[i], &t.input_quant[i]);
  for (uint32_t i = 0; i < h.num_outputs; ++i) take_tensor(slot, h.outputs[i], &t.outputs[i], &t.output_quant[i]);
  for (uint32_t i = 0; i < h.planned_count; ++i) t.planned_sizes[i] = h.planned_sizes[i];
  model->planned_count = h.planned_count;
  model->tolerance = h.tolerance;
  model->has_reference = static_cast<uint8_t>(h.has_reference != 0);
  model->reference_bundle = static_cast<uint8_t>(h.reference_bundle != 0);
}

}  // namespace

namespace cmx {

cmx_status slots_init(cmx_model* model, executorch::runtime::EventTracer* tracer) {
  SlotTable& t = *model->slots;
  model->reference_inputs = t.inputs;
  model->reference_outputs = t.outputs;
  model->input_quant = t.input_quant;
  model->output_quant = t.output_quant;
  model->planned_sizes = t.planned_sizes;
  t.active = -1;
  const cmx_slot_fit fit = firmware_fit(model);
  const cmx_slot_header* headers[4] = {nullptr, nullptr, nullptr, nullptr};
  const uint32_t count = t.count < 4u ? t.count : 4u;
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t* slot = reinterpret_cast<const uint8_t*>(t.bases[i]);
    memset(&t.info[i], 0, sizeof(t.info[i]));
    cmx_status st = cmx_slot_verify(slot, t.sizes[i], weights_of(t, i), t.weights_sizes[i], &fit, &headers[i]);
    if (st == CMX_OK && cmx_slot_authenticate(slot, headers[i]->total_bytes, i) != 0) st = CMX_E_SLOT_REJECTED;
    if (st != CMX_E_SLOT_EMPTY && st != CMX_E_SLOT_CORRUPT) {
      const auto* h = reinterpret_cast<const cmx_slot_header*>(slot);
      t.info[i].sequence = h->sequence;
      t.info[i].nbytes = h->total_bytes;
    }
    t.info[i].status = st;
    if (st != CMX_OK) headers[i] = nullptr;
  }
  for (;;) {  // newest first; each slot tried once
    int best = -1;
    for (uint32_t i = 0; i < count; ++i) {
      if (headers[i] && (best < 0 || headers[i]->sequence > headers[best]->sequence)) best = static_cast<int>(i);
    }
    if (best < 0) return CMX_E_NO_MODEL;
    const uint8_t* slot = reinterpret_cast<const uint8_t*>(t.bases[best]);
    const cmx_slot_header& h = *headers[best];
    headers[best] = nullptr;
    take_slot(model, slot, weights_of(t, static_cast<uint32_t>(best)), h);
    cmx_status st = CMX_OK;
    if (!t.program_check(model->pte, static_cast<size_t>(model->pte_end - model->pte))) {
      st = CMX_E_PROGRAM_LOAD;  // a field the runtime would read without checking is missing
    } else {
      st = load(model, tracer);
    }
    if (st == CMX_OK && model->has_reference) {
      double err = 0.0;
      st = cmx_self_test(model, &err);
      t.info[best].max_abs_err = err;
      model->state->invocations = 0;  // the self-check is not the application's
    }
    t.info[best].status = st;
    if (st == CMX_OK) {
      t.active = best;
      return CMX_OK;
    }
    unload(model);
  }
}

}  // namespace cmx

extern "C" {

size_t cmx_num_slots(const cmx_model* model) { return model && model->slots ? model->slots->count : 0; }

int cmx_active_slot(const cmx_model* model) { return model && model->slots ? model->slots->active : -1; }

cmx_status cmx_slot_state(const cmx_model* model, size_t index, cmx_slot_info* info) {
  if (!model || !info) return CMX_E_ARGUMENT;
  if (!model->slots || index >= model->slots->count) return CMX_E_INDEX;
  *info = model->slots->info[index];
  return CMX_OK;
}

}  // extern "C"
