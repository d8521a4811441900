/* cmx-gen's CMSIS-NN backend: ExecuTorch delegate that runs an int8 subgraph from the plan cmx-gen
 * made ahead of time (cmx_plan.h; cmx_gen/lower/delegate/).
 *
 * init checks the plan once (magic, version, the core it was made for, every record's kind and
 * size) and keeps a pointer to it: the plan stays where the program is, in flash. execute binds
 * the arguments (inputs, the working memory, outputs) and loops over the layers, calling the same
 * CMSIS-NN functions with the same arguments as the cortex_m kernel wrappers, without their
 * per-call checks: cmx_plan_check ran them at init. CMX_BACKEND_CHECKED (bring-up) also refuses a
 * CMSIS-NN wrapper's scratch that is not exactly CMSIS-NN's own size on this build.
 *
 * Each layer kind is compiled only when the app's programs use it (CMX_BACKEND_<KIND>, from
 * model/cmx_ops.cmake), so an image links no CMSIS-NN function it never calls. */
#include <string.h>

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/core/error.h>
#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/event_tracer_hooks_delegate.h>
#include <executorch/runtime/platform/log.h>
#include <executorch/runtime/platform/platform.h>

extern "C" {
#include "arm_nnfunctions.h"
}
#include "cmx_plan.h"

#ifdef ET_EVENT_TRACER_ENABLED
/* The profile image brackets each kernel call alone: a layer's row less it is the backend's own cost. */
#define CMX_RUN_NOW() et_pal_current_ticks()
#endif
#include "cmx_plan_run.h"

/* The trace image (the runner, CMX_TRACE) defines this to stream each layer's output; elsewhere it
 * is not linked and the call is compiled out with the event tracer. */
extern "C" void cmx_backend_layer_output(int32_t debug, const void* data, size_t nbytes) __attribute__((weak));

#ifndef CMX_PLAN_CORE
#error "CMX_PLAN_CORE (the core this runtime is built for) must be defined"
#endif

namespace {

using executorch::runtime::ArrayRef;
using executorch::runtime::BackendExecutionContext;
using executorch::runtime::BackendInitContext;
using executorch::runtime::BackendInterface;
using executorch::runtime::CompileSpec;
using executorch::runtime::DelegateHandle;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::FreeableBuffer;
using executorch::runtime::Result;
using executorch::runtime::Span;

/* The kinds this runtime was built with (CMX_PLAN_KINDS_IN, generated from the kinds' records). */
bool compiled_in(int32_t op) {
  switch (op) {
#define CMX_IN(K, k) \
  case CMX_OP_##K: return true;
    CMX_PLAN_KINDS_IN(CMX_IN)
#undef CMX_IN
    default: return false;
  }
}

class CmxCmsisNNBackend final : public BackendInterface {
 public:
  bool is_available() const override { return true; }

  Result<DelegateHandle*> init(BackendInitContext& context, FreeableBuffer* processed,
                               ArrayRef<CompileSpec> compile_specs) const override {
    (void)context;
    (void)compile_specs;
    const auto* plan = static_cast<const uint8_t*>(processed->data());
    const auto* h = reinterpret_cast<const cmx_plan_header*>(plan);
    if (processed->size() < sizeof(cmx_plan_header) || h->magic != CMX_PLAN_MAGIC) {
      ET_LOG(Error, "cmx backend: not a cmx-gen plan");
      return Error::InvalidProgram;
    }
    if (h->version != CMX_PLAN_VERSION) {
      ET_LOG(Error, "cmx backend: plan version %u, this runtime runs version %u: regenerate the app with "
             "the cmx-gen that built this runtime", (unsigned)h->version, (unsigned)CMX_PLAN_VERSION);
      return Error::DelegateInvalidCompatibility;
    }
    if (strncmp(h->core, CMX_PLAN_CORE, CMX_PLAN_CORE_BYTES) != 0) {
      ET_LOG(Error, "cmx backend: plan made for %.16s, this runtime is built for %s", h->core, CMX_PLAN_CORE);
      return Error::DelegateInvalidCompatibility;
    }
    /* Every record against the working memory, the arguments and the plan, once: a plan that comes
     * from outside the image (a model slot) is input, and a bad one is refused here, never run. */
    const char* why = nullptr;
    const int32_t bad = cmx_plan_check(plan, processed->size(), &why);
    if (bad != 0) {
      if (bad == 1) {
        ET_LOG(Error, "cmx backend: plan refused: %s", why);
      } else {
        ET_LOG(Error, "cmx backend: plan refused at layer %d: %s", (int)(bad - 2), why);
      }
      return Error::InvalidProgram;
    }
    const uint8_t* p = plan + h->layers_offset;
    for (uint32_t i = 0; i < h->n_layers; ++i) {
      const auto* head = reinterpret_cast<const cmx_layer_head*>(p);
      if (!compiled_in(head->op)) {
        ET_LOG(Error, "cmx backend: layer %u (kind %d) is not in this runtime", (unsigned)i, (int)head->op);
        return Error::DelegateInvalidCompatibility;
      }
      p += head->size;
    }
    return reinterpret_cast<DelegateHandle*>(const_cast<uint8_t*>(plan));
  }

  Error execute(BackendExecutionContext& context, DelegateHandle* handle, Span<EValue*> args) const override {
    const auto* plan = reinterpret_cast<const uint8_t*>(handle);
    const auto* h = reinterpret_cast<const cmx_plan_header*>(plan);
    const size_t n_args = h->n_inputs + 1 + h->n_outputs;
    if (args.size() != n_args) return Error::InvalidArgument;
    void* io[CMX_PLAN_MAX_ARGS];
#ifdef CMX_UNTRUSTED_PROGRAM
    /* a program from a model slot is input: toTensor() aborts on an argument that is not a tensor */
    for (size_t i = 0; i < n_args; ++i) {
      if (!args[i]->isTensor()) return Error::InvalidArgument;
    }
#endif
    for (size_t i = 0; i < n_args; ++i) io[i] = args[i]->toTensor().mutable_data_ptr();
    if (args[h->n_inputs]->toTensor().nbytes() < h->work_bytes) return Error::MemoryAllocationFailed;
    /* init checked every record against these sizes: the arguments must hold them */
    const auto* io_bytes = reinterpret_cast<const uint32_t*>(plan + sizeof(cmx_plan_header)) + h->n_inputs + h->n_outputs;
    for (size_t i = 0, k = 0; i < n_args; ++i) {
      if (i == h->n_inputs) continue;  // the working memory
      if (args[i]->toTensor().nbytes() < io_bytes[k++]) return Error::InvalidArgument;
    }
    uint8_t* work = static_cast<uint8_t*>(io[h->n_inputs]);
#ifdef ET_EVENT_TRACER_ENABLED
    auto* tracer = context.event_tracer();
#else
    (void)context;
#endif

    const uint8_t* p = plan + h->layers_offset;
    arm_cmsis_nn_status status = ARM_CMSIS_NN_SUCCESS;
    for (uint32_t i = 0; i < h->n_layers && status == ARM_CMSIS_NN_SUCCESS; ++i) {
      const auto* head = reinterpret_cast<const cmx_layer_head*>(p);
      p += head->size;
#ifdef ET_EVENT_TRACER_ENABLED
      auto entry = executorch::runtime::event_tracer_start_profiling_delegate(
          tracer, nullptr, static_cast<executorch::runtime::DebugHandle>(head->debug));
#endif
      int8_t* out = nullptr;
      cmx_run::Ticks ticks{0, 0};
      size_t out_bytes = 0;
      status = cmx_run::run_layer(head, plan, work, io, out, out_bytes, ticks);
      (void)out_bytes;
      (void)ticks;
#ifdef ET_EVENT_TRACER_ENABLED
      executorch::runtime::event_tracer_end_profiling_delegate(tracer, entry);
      executorch::runtime::event_tracer_log_profiling_delegate(
          tracer, "kernel", static_cast<executorch::runtime::DebugHandle>(head->debug), ticks.start, ticks.end);
#endif
#ifdef ET_EVENT_TRACER_ENABLED
      if (cmx_backend_layer_output != nullptr) cmx_backend_layer_output(head->debug, out, out_bytes);
#endif
      (void)out;
      if (status != ARM_CMSIS_NN_SUCCESS) {
        ET_LOG(Error, "cmx backend: layer %u (kind %d) failed: CMSIS-NN status %d", (unsigned)i, (int)head->op,
               (int)status);
        return Error::Internal;
      }
    }
    return Error::Ok;
  }
};

CmxCmsisNNBackend g_backend;

}  // namespace

/* Called by cmx_register_kernels() (model/cmx_kernels.cpp) when a program has delegated layers:
 * an explicit call, since a static library drops a registration made by a static initializer. */
extern "C" int cmx_register_backend(void) {
  return static_cast<int>(executorch::runtime::register_backend({"CmxCmsisNNBackend", &g_backend}));
}

/* What this runtime can run, for a model that arrives in a slot (cmx_slots.cpp): bit k set when
 * layer kind k is compiled in, and the plan version it reads. */
extern "C" uint64_t cmx_backend_kinds(void) {
  uint64_t kinds = 0;
  for (int32_t op = 1; op < 64; ++op) {
    if (compiled_in(op)) kinds |= (uint64_t)1 << op;
  }
  return kinds;
}

extern "C" uint32_t cmx_backend_plan_version(void) { return CMX_PLAN_VERSION; }
