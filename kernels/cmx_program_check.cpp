/*
 * cmx_program_check.cpp - a program from a model slot (placement = "slot") is input. ExecuTorch's
 * verifier (Program::Verification::InternalConsistency) and validate_program() check the
 * flatbuffer's structure and its values, but the runtime (runtime/executor/method.cpp, ExecuTorch
 * 1.5) then reads some optional fields without a null check: a compile spec's key and value
 * (BackendDelegate::PopulateCompileSpecs), a delegate's processed data (GetProcessedData), the
 * plan's name (load_method's log, each delegate's init and execute context), an operator's
 * overload (a failed kernel call's log). A crafted program that leaves one out would make the
 * firmware read address 0. cmx_init() runs this check on a slot's program before it loads it.
 *
 * Compiled with the program verifier (CMX_ET_VERIFY, set by a slot app's model/cmx_ops.cmake).
 */
#include <stddef.h>
#include <stdint.h>

#include <executorch/schema/program_generated.h>

namespace {

bool delegate_ok(const executorch_flatbuffer::BackendDelegate* d) {
  if (d == nullptr || d->id() == nullptr || d->processed() == nullptr) return false;
  if (d->compile_specs() != nullptr) {
    for (const auto* spec : *d->compile_specs()) {
      if (spec == nullptr || spec->key() == nullptr || spec->value() == nullptr) return false;
    }
  }
  return true;
}

}  // namespace

/* 1: the program's fields the runtime reads unchecked are all there; 0: a field is missing, or the
 * buffer is not a program the flatbuffer verifier accepts. */
extern "C" int cmx_program_check(const uint8_t* pte, size_t nbytes) {
  flatbuffers::Verifier verifier(pte, nbytes);
  if (!executorch_flatbuffer::VerifyProgramBuffer(verifier)) return 0;
  const auto* plans = executorch_flatbuffer::GetProgram(pte)->execution_plan();
  if (plans == nullptr) return 0;
  for (const auto* plan : *plans) {
    if (plan == nullptr || plan->name() == nullptr) return 0;
    if (plan->operators() != nullptr) {
      for (const auto* op : *plan->operators()) {
        if (op == nullptr || op->name() == nullptr || op->overload() == nullptr) return 0;
      }
    }
    if (plan->delegates() != nullptr) {
      for (const auto* d : *plan->delegates()) {
        if (!delegate_ok(d)) return 0;
      }
    }
  }
  return 1;
}
