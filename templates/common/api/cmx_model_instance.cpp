/*
 * cmx_model_instance.cpp - one model's handle, made from that model's generated cmx_model.h.
 *
 * Compiled once per model, with the model's folder first on the include path: its pools (sized
 * by cmx-gen from the program's plan, in the arena section the placement chose, or the arena the
 * app's models share), its embedded program and reference I/O, and the handle CMX_MODEL_SYMBOL
 * that cmx_models.h declares.
 */
#include "cmx_model.h"
#include "cmx_model_impl.h"
#include "cmx_models.h" /* the handle's declaration: C linkage */
#if defined(CMX_SLOT_COUNT)
#include "cmx_slot.h"
#endif

/* The program's kernels and the backend's weight layouts are made for one CMSIS-NN code path
 * (CMX_TARGET_ISA): Helium (MVE), the DSP extension, or plain C. Compiled for another, the kernels
 * would read those layouts wrong: refused here, whatever builds it (an app, a package, your own). */
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
#if defined(CMX_TARGET_ISA_MVE) != defined(__ARM_FEATURE_MVE) || \
    defined(CMX_TARGET_ISA_DSP) != (defined(__ARM_FEATURE_DSP) && !defined(__ARM_FEATURE_MVE))
#error "cmx-gen: this model was made for another core's code path (cmx_model.h CMX_TARGET_CPU, CMX_TARGET_ISA) than your -mcpu flags select: compile with that core's flags, or regenerate the model for your board"
#endif
#endif

/* Where the pools live: the bare-metal app puts them in the arena region chosen by the placement
 * (a linker section); a platform may define CMX_ARENA_SECTION to another name. */
#if defined(CMX_ARENA_SECTION)
#define CMX_ARENA __attribute__((section(CMX_ARENA_SECTION), aligned(16)))
#else
#define CMX_ARENA __attribute__((aligned(16)))
#endif

#define CMX_ROUND16(n) ((((n) + 15u) / 16u) * 16u)

extern "C" const uint8_t CMX_PTE_START[];
extern "C" const uint8_t CMX_PTE_END[];

#if defined(CMX_SHARED_POOLS) && CMX_SHARED_POOLS
/* Models that run one after another share the planned buffers and the temp pool (the app's
 * model/cmx_shared_pools.c, sized for the largest model); the method pool stays the model's. */
extern "C" uint8_t cmx_shared_planned_pool[];
extern "C" uint8_t cmx_shared_temp_pool[];
extern "C" const cmx_model* cmx_shared_arena_owner;
#define CMX_TEMP_POOL cmx_shared_temp_pool
#define CMX_ARENA_OWNER (&cmx_shared_arena_owner)
#else
#define CMX_ARENA_OWNER nullptr
#endif

namespace {

uint8_t method_pool[CMX_ROUND16(CMX_METHOD_POOL_BYTES)] CMX_ARENA;
#ifndef CMX_TEMP_POOL
uint8_t temp_pool[(CMX_TEMP_POOL_BYTES > 0u) ? CMX_ROUND16(CMX_TEMP_POOL_BYTES) : 16u] CMX_ARENA;
#define CMX_TEMP_POOL temp_pool
#endif
#if defined(CMX_SLOT_COUNT)
/* placement = "slot": the program, its reference I/O and its plan are in the slot cmx_init() picks;
 * the pools are this firmware's, sized for the model it was made with. */
const uintptr_t slot_bases[CMX_SLOT_COUNT] = CMX_SLOT_BASES;
const uint32_t slot_sizes[CMX_SLOT_COUNT] = CMX_SLOT_SIZES;
const uintptr_t slot_weights_bases[CMX_SLOT_COUNT] = CMX_SLOT_WEIGHTS_BASES;
const uint32_t slot_weights_sizes[CMX_SLOT_COUNT] = CMX_SLOT_WEIGHTS_SIZES;
cmx::ReferenceTensor slot_inputs[CMX_NUM_INPUTS > 0 ? CMX_NUM_INPUTS : 1];
cmx::ReferenceTensor slot_outputs[CMX_NUM_OUTPUTS > 0 ? CMX_NUM_OUTPUTS : 1];
cmx::IoQuant slot_input_quant[CMX_NUM_INPUTS > 0 ? CMX_NUM_INPUTS : 1];
cmx::IoQuant slot_output_quant[CMX_NUM_OUTPUTS > 0 ? CMX_NUM_OUTPUTS : 1];
uint32_t slot_planned_sizes[CMX_SLOT_MAX_PLANNED];
cmx_slot_info slot_info[CMX_SLOT_COUNT];
#if defined(CMX_SHARED_POOLS) && CMX_SHARED_POOLS
#error "cmx-gen: a model in slots keeps its own pools (one model an image)"
#endif
uint8_t planned_pool[CMX_PLANNED_POOL_BYTES > 0u ? CMX_PLANNED_POOL_BYTES : 16u] CMX_ARENA;
executorch::runtime::Span<uint8_t> planned_spans[CMX_SLOT_MAX_PLANNED];
cmx::SlotTable slots = {cmx::slots_init, slot_bases,       slot_sizes,     CMX_SLOT_COUNT,   CMX_TARGET_CPU,
                        CMX_TARGET_ISA,   CMX_PLANNED_POOL_BYTES,           CMX_SLOT_MAX_PLANNED,
                        slot_inputs,      slot_outputs,   slot_input_quant, slot_output_quant,
                        slot_planned_sizes, slot_info,    -1,
                        slot_weights_bases, slot_weights_sizes, nullptr, 0, cmx_program_check,
                        CMX_SLOT_MAX_TOLERANCE};
#define CMX_SLOTS (&slots)
#define CMX_PROGRAM nullptr, nullptr
#define CMX_PLANNED_SIZES slot_planned_sizes
#define CMX_PLANNED_POOL planned_pool
#define CMX_PLANNED_SPANS planned_spans
#define CMX_INPUT_QUANT_TABLE slot_input_quant
#define CMX_OUTPUT_QUANT_TABLE slot_output_quant
#define CMX_REFERENCES slot_inputs, slot_outputs
#else
#define CMX_SLOTS nullptr
#define CMX_PROGRAM CMX_PTE_START, CMX_PTE_END
#define CMX_REFERENCES \
  reinterpret_cast<const cmx::ReferenceTensor*>(CMX_REFERENCE_INPUTS), \
      reinterpret_cast<const cmx::ReferenceTensor*>(CMX_REFERENCE_OUTPUTS)
#if CMX_PLANNED_BUFFER_COUNT > 0
const uint32_t planned_sizes[CMX_PLANNED_BUFFER_COUNT] = CMX_PLANNED_BUFFER_SIZES;
#if defined(CMX_SHARED_POOLS) && CMX_SHARED_POOLS
#define CMX_PLANNED_POOL cmx_shared_planned_pool
#else
uint8_t planned_pool[CMX_PLANNED_POOL_BYTES] CMX_ARENA;
#define CMX_PLANNED_POOL planned_pool
#endif
executorch::runtime::Span<uint8_t> planned_spans[CMX_PLANNED_BUFFER_COUNT];
#define CMX_PLANNED_SIZES planned_sizes
#define CMX_PLANNED_SPANS planned_spans
#else
#define CMX_PLANNED_SIZES nullptr
#define CMX_PLANNED_POOL nullptr
#define CMX_PLANNED_SPANS nullptr
#endif
const cmx::IoQuant input_quant[CMX_NUM_INPUTS > 0 ? CMX_NUM_INPUTS : 1] = CMX_INPUT_QUANT;
const cmx::IoQuant output_quant[CMX_NUM_OUTPUTS > 0 ? CMX_NUM_OUTPUTS : 1] = CMX_OUTPUT_QUANT;
#define CMX_INPUT_QUANT_TABLE input_quant
#define CMX_OUTPUT_QUANT_TABLE output_quant
#endif

cmx::ModelState state;

}  // namespace

static_assert(sizeof(cmx_tensor_ref) == sizeof(cmx::ReferenceTensor), "cmx_model.h and cmx_model_impl.h disagree");

cmx_model CMX_MODEL_SYMBOL = {
    CMX_MODEL_NAME,
    CMX_PROGRAM,
    method_pool,
    CMX_METHOD_POOL_BYTES,
    CMX_TEMP_POOL,
    CMX_TEMP_POOL_BYTES,
    CMX_PLANNED_POOL,
    CMX_PLANNED_SIZES,
    CMX_PLANNED_SPANS,
    CMX_PLANNED_BUFFER_COUNT,
    CMX_NUM_INPUTS,
    CMX_NUM_OUTPUTS,
    CMX_INPUT_QUANT_TABLE,
    CMX_OUTPUT_QUANT_TABLE,
    CMX_REFERENCES,
    static_cast<float>(CMX_TOLERANCE_LSB),
    CMX_HAS_REFERENCE,
    CMX_REFERENCE_BUNDLE,
    CMX_ARENA_OWNER,
    CMX_SLOTS,
    &state,
};
