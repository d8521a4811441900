/*
 * cmx.h - the cmx-gen model API: call a model embedded by cmx-gen from plain C (or C++).
 *
 * No ExecuTorch type or header is visible here. A model is a handle, `cmx_model`, one static
 * object per model declared in the generated "cmx_models.h" (e.g. `cmx_model_digits`); every
 * function takes the handle, so several models in one image never clash and the function names
 * stay the same whatever the model (docs/api.md says why, and what each call costs).
 *
 *   cmx_model* m = &cmx_model_digits;
 *   if (cmx_init(m) != CMX_OK) ...;                 // once: load the program, plan the pools
 *   cmx_tensor in, out;
 *   cmx_input(m, 0, &in);                           // in.data: the planned input buffer (zero-copy)
 *   ... fill in.data (in.nbytes bytes, in memory order) or cmx_input_set_f32(m, 0, values, n) ...
 *   cmx_invoke(m);                                  // run forward
 *   cmx_output(m, 0, &out);                         // out.data: the planned output buffer
 *
 * Not thread-safe per model: calls on one handle must not overlap. Different handles may run in
 * different threads only when their memory is not shared (docs/api.md). In an app of several models
 * that share one arena (cmx_models.h CMX_SHARED_ARENA 1, the default), a model's inputs and outputs
 * live in that arena: write a model's inputs right before its cmx_invoke() and read its outputs
 * before calling another model; its state (the loaded program, its method pool) is always its own.
 */
#ifndef CMX_H
#define CMX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every call returns one of these; cmx_status_name() gives its name (docs/api.md: what each means). */
typedef enum {
  CMX_OK = 0,
  CMX_E_REGISTER_KERNELS = 1, /* the image's kernel registration failed (a kernel twice, registry full) */
  CMX_E_PROGRAM_LOAD = 2,     /* the embedded program is not a valid .pte for this runtime */
  CMX_E_METHOD_META = 3,      /* the program has no `forward` method */
  CMX_E_PLANNED_BUFFERS = 4,  /* the program's memory plan differs from the one the app was made for */
  CMX_E_LOAD_METHOD = 5,      /* loading `forward` failed: method pool too small, or a kernel missing */
  CMX_E_IO_COUNT = 6,         /* the program's input/output count differs from the generated one */
  CMX_E_UNPLANNED_IO = 7,     /* an input or output has no planned buffer (not a cmx-gen program) */
  CMX_E_EXECUTE = 8,          /* a kernel failed while running (temp pool too small, bad arguments) */
  CMX_E_NOT_INITIALIZED = 9,  /* cmx_init() was not called, or failed */
  CMX_E_INDEX = 10,           /* no input/output with that index */
  CMX_E_SIZE = 11,            /* a byte or element count that does not match the tensor */
  CMX_E_DTYPE = 12,           /* the tensor's dtype cannot take float values (int8 without a scale) */
  CMX_E_ARGUMENT = 13,        /* a NULL handle or pointer */
  CMX_E_ARENA_REUSED = 14,    /* models share one arena and another model ran since this one: its
                               * outputs are gone (read them before calling another model) */
  CMX_E_PLAN = 15,            /* a cmx-gen backend plan made for another core or by another cmx-gen
                               * version: refused at init, never run (regenerate and rebuild the app) */
  CMX_E_CALLER_INPUT = 16,    /* an input the model reads from the caller's buffer (input_memory =
                               * "caller"): cmx_invoke() before cmx_input_bind() gave it one, or
                               * cmx_input_set_f32() asked to write it (quantize into your buffer) */
  CMX_E_MISMATCH = 17,        /* cmx_check_outputs(): an output differs from the expected one by more
                               * than the model's tolerance (0 unless a bundle gave one: bit-exact) */
  CMX_E_NO_REFERENCE = 18,    /* cmx_check_outputs(): the model has no expected outputs (a .pte
                               * lowered elsewhere): nothing to check against */
  /* A model in a slot (placement = "slot"; cmx_slot_info() gives each slot's): */
  CMX_E_SLOT_EMPTY = 19,        /* no model in the slot (erased, or never written) */
  CMX_E_SLOT_CORRUPT = 20,      /* the slot's length or SHA-256 does not match (a flipped bit, a write cut
                                 * short or still under way), or a field points outside it */
  CMX_E_SLOT_INCOMPATIBLE = 21, /* made for another core, code path, plan version or I/O count, or it
                                 * needs a backend layer kind this firmware was not built with */
  CMX_E_SLOT_TOO_LARGE = 22,    /* it needs more method, temp or planned pool than the firmware has */
  CMX_E_SLOT_REJECTED = 23,     /* the product's cmx_slot_authenticate() refused it */
  CMX_E_KERNEL_MISSING = 24,    /* its program calls an operator this firmware has no kernel for */
  CMX_E_NO_MODEL = 25           /* no slot holds a model that verifies, loads and passes its self-check */
} cmx_status;

/* Element types. The numbers are ExecuTorch's ScalarType codes, so they match the program. */
typedef enum {
  CMX_DTYPE_UINT8 = 0,
  CMX_DTYPE_INT8 = 1,
  CMX_DTYPE_INT16 = 2,
  CMX_DTYPE_INT32 = 3,
  CMX_DTYPE_INT64 = 4,
  CMX_DTYPE_FLOAT16 = 5,
  CMX_DTYPE_FLOAT32 = 6,
  CMX_DTYPE_FLOAT64 = 7,
  CMX_DTYPE_BOOL = 11
} cmx_dtype;

#define CMX_MAX_DIMS 8

/* One input or output. `data` points into the model's planned buffers: valid after cmx_init() and
 * the same address for every call; for an input with `caller_buffer` set (input_memory =
 * "caller"), it is the caller's buffer cmx_input_bind() gave, NULL until then. Its bytes are in memory order: `shape` is the logical
 * (PyTorch) shape, `dim_order` the order the dimensions are laid out in memory, outermost first
 * ({0,2,3,1} = channels-last, NHWC). `scale` > 0 when the values are quantized:
 * real = scale * (q - zero_point) (int8 I/O, `--io int8`); 0 for float I/O. */
typedef struct {
  void* data;
  size_t nbytes;
  size_t numel;
  cmx_dtype dtype;
  uint32_t rank;
  int32_t shape[CMX_MAX_DIMS];
  uint8_t dim_order[CMX_MAX_DIMS];
  float scale;
  int32_t zero_point;
  uint8_t caller_buffer; /* 1: an input read where the caller keeps it (cmx_input_bind), not planned */
} cmx_tensor;

/* Memory, in bytes: each pool's high-water mark and size. The marks stop moving after the first
 * cmx_invoke(); `invocations` counts successful calls. */
typedef struct {
  size_t method_used, method_size;   /* the program's state: tensors, EValues, kernel arguments */
  size_t planned_used, planned_size; /* activations, inputs and outputs (the memory plan) */
  size_t temp_used, temp_size;       /* kernel scratch, reset after each operator */
  uint32_t invocations;
} cmx_stats;

/* The model handle; its layout is private (cmx_models.h declares one object per model). */
typedef struct cmx_model cmx_model;

/* Register the image's kernels (once per image, whichever model comes first), load the embedded
 * program and plan its memory in the model's static pools. A second call returns CMX_OK at once. */
cmx_status cmx_init(cmx_model* model);

/* Run `forward` once on what the input buffers hold. Allocates nothing; no pool grows. */
cmx_status cmx_invoke(cmx_model* model);

size_t cmx_num_inputs(const cmx_model* model);
size_t cmx_num_outputs(const cmx_model* model);

/* Describe input/output `index` (see cmx_tensor). Inputs: write into `data` before cmx_invoke();
 * the model may reuse that memory while it runs, so write every input before every call.
 * Outputs: read `data` after cmx_invoke() and before writing the next input. */
cmx_status cmx_input(const cmx_model* model, size_t index, cmx_tensor* tensor);
cmx_status cmx_output(const cmx_model* model, size_t index, cmx_tensor* tensor);

/* Give input `index` its bytes (`nbytes`, in memory order). An input the model reads from the
 * caller's buffer (`caller_buffer`, input_memory = "caller": no planned bytes) is read where `data`
 * is, during every cmx_invoke() until the next bind, and never written: `data` may be a camera
 * frame, a DMA buffer or a constant in flash, and must stay valid. A planned input gets the bytes
 * copied into its buffer. So one call feeds a model either way. */
cmx_status cmx_input_bind(cmx_model* model, size_t index, const void* data, size_t nbytes);

/* Float convenience, `count` values in memory order. A float32 tensor is copied; an int8 tensor
 * with a scale (`--io int8`) is quantized (round half to even, saturated) or dequantized with the
 * model's scale and zero point. A caller's-buffer input takes no values here (CMX_E_CALLER_INPUT):
 * the model never writes your buffer; quantize into it and bind it. */
cmx_status cmx_input_set_f32(cmx_model* model, size_t index, const float* values, size_t count);
cmx_status cmx_output_get_f32(const cmx_model* model, size_t index, float* values, size_t count);

/* The sample input cmx-gen embedded (the on-target check's reference input), as raw bytes in the
 * input's memory order: a known-good input for bring-up. */
cmx_status cmx_reference_input(const cmx_model* model, size_t index, const void** data, size_t* nbytes);

/* Compare the outputs of the last cmx_invoke() with the outputs cmx-gen computed on the host for the
 * reference input (the lowered program, kernel-exact): CMX_OK when every element is within the
 * model's tolerance (0: bit-exact), else CMX_E_MISMATCH. `max_abs_err` (may be NULL) gets the
 * largest difference, in output quantization steps (an output's own unit when it has no scale). */
cmx_status cmx_check_outputs(const cmx_model* model, double* max_abs_err);

/* The on-target check in one call, for a power-on self test or bring-up: the reference input into
 * every input, one cmx_invoke(), cmx_check_outputs(). CMX_OK means this firmware computes what the
 * model computed on the host, bit for bit. It overwrites the inputs (and a caller's-buffer input's
 * binding, which then points at the reference input). */
cmx_status cmx_self_test(cmx_model* model, double* max_abs_err);

cmx_status cmx_get_stats(const cmx_model* model, cmx_stats* stats);

/* A model kept in flash slots of its own (placement = "slot", docs/api.md "Updating the model"):
 * cmx_init() checks every slot (length, SHA-256, what the firmware can run, the pools), loads the
 * newest that passes, runs its self-check (cmx_self_test) and falls back to the next one if any step
 * fails. Each slot's outcome stays readable; a linked model has no slots (cmx_num_slots() == 0). */
typedef struct {
  cmx_status status;   /* CMX_OK: the slot verified and passed its self-check (or was not tried yet) */
  uint32_t sequence;   /* the slot's sequence number (newer is higher); 0 when it has no model */
  uint32_t nbytes;     /* the slot image's length */
  double max_abs_err;  /* its self-check's largest error, in output quantization steps */
} cmx_slot_info;

size_t cmx_num_slots(const cmx_model* model);
int cmx_active_slot(const cmx_model* model); /* the slot cmx_init() runs (0 = A, 1 = B), -1 none */
cmx_status cmx_slot_state(const cmx_model* model, size_t index, cmx_slot_info* info);

/* The model's name ("digits"), and the name of a status ("load_method", "ok"). */
const char* cmx_name(const cmx_model* model);
const char* cmx_status_name(cmx_status status);

/* The runtime's own error code behind the last failure of this model (an ExecuTorch Error value,
 * for a bug report; 0 when there is none). cmx_status says what failed; this says why. */
uint32_t cmx_error_detail(const cmx_model* model);

#ifdef __cplusplus
}
#endif

#endif /* CMX_H */
