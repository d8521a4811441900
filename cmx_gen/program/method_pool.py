"""Exact byte counts for the ExecuTorch method and temp allocators of a program on 32-bit Arm.

Why: the method allocator is a bump allocator filled once by `Program::load_method`; its size
is a pure function of the program (values, tensors, lists, instructions). Replaying the
allocations of runtime/executor/method.cpp and tensor_parser*.cpp (ExecuTorch 1.5) with the
sizes/alignments of the Cortex-M ABI gives the exact figure, so the firmware's pool needs no
guessed margin. The firmware's counting allocator prints the same number (`method=U/A`).

Sizes below were measured with arm-none-eabi-g++ 12 (sizeof/alignof, any Cortex-M):
EValue 16/8, TensorImpl 32/4, Tensor 4/4, BoxedEvalueList<T> 12/4, optional<Tensor> 8/4,
ArrayRef<T> 8/4, Chain 16/4, OpFunction 4/4, InstructionArgs (Span) 8/4, TensorMeta 12/4,
BackendDelegate 40/8, CompileSpec 12/4. cmx-gen's own backend allocates nothing at init (its plan
is read in place); a program delegated to another backend is refused here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

EVALUE = (16, 8)
TENSOR_IMPL = (32, 4)
TENSOR = (4, 4)
BOXED_LIST = (12, 4)
OPTIONAL_TENSOR = (8, 4)
ARRAY_REF = (8, 4)
CHAIN = (16, 4)
OP_FUNCTION = (4, 4)
INSTRUCTION_ARGS = (8, 4)
TENSOR_META = (12, 4)
BACKEND_DELEGATE = (40, 8)
COMPILE_SPEC = (12, 4)
CMX_BACKEND = "CmxCmsisNNBackend"  # cmx_gen/lower/delegate/preprocess.BACKEND_ID (no lower/ import here)
POINTER = (4, 4)
INT64 = (8, 8)
INT32 = (4, 4)
BYTE = (1, 1)
# runtime/core/exec_aten/util/tensor_dimension_limit.h
TENSOR_DIMENSION_LIMIT = 16


class _Bump:
    """Replays MemoryAllocator::allocate: align the cursor, then add the size; the bytes (padding
    included) are counted under `part`, what the runtime holds them for."""

    def __init__(self) -> None:
        self.cur = 0
        self.part = "values"
        self.parts: dict[str, int] = {}

    def list(self, item: tuple[int, int], count: int) -> None:
        size, align = item
        before = self.cur
        self.cur = (self.cur + align - 1) // align * align + size * count
        self.parts[self.part] = self.parts.get(self.part, 0) + self.cur - before

    def one(self, item: tuple[int, int]) -> None:
        self.list(item, 1)


@dataclass(frozen=True)
class AllocatorNeeds:
    method_bytes: int  # exact bytes load_method takes from the method allocator
    temp_used_bytes: int  # peak temp use while resolving operators (kernels here use none)
    temp_pool_bytes: int  # temp pool size at which the runtime uses it at all (see below)
    # method_bytes by what they hold: values (the EValue array), tensors (TensorImpl, strides),
    # lists (int and tensor lists: kernel arguments), instructions (chains, kernels, their arguments)
    parts: tuple[tuple[str, int], ...] = ()


def _tensor(bump: _Bump, val: Any) -> int:
    """What Method::init takes for one tensor value (its TensorImpl and strides; sizes and dim order
    too when not static); returns its dimension count."""
    from executorch.exir import schema

    dim = len(val.sizes)
    info = val.extra_tensor_info
    if info is not None and getattr(info, "location", None) == schema.TensorDataLocation.EXTERNAL:
        raise NotImplementedError("external constant tensors (.ptd) are not embedded by cmx-gen")
    if int(val.shape_dynamism) != 0:  # not STATIC: sizes and dim order are copied
        bump.list(INT32, dim)
        bump.list(BYTE, dim)
    bump.list(INT32, dim)  # strides
    bump.one(TENSOR_IMPL)
    return dim


def _list(bump: _Bump, val: Any) -> None:
    """What Method::init takes for one list or string value (kernel arguments)."""
    from executorch.exir import schema

    if isinstance(val, schema.IntList):
        bump.list(POINTER, len(val.items))
        bump.list(INT64, len(val.items))
        bump.one(BOXED_LIST)
    elif isinstance(val, (schema.BoolList, schema.DoubleList, schema.String)):
        bump.one(ARRAY_REF)
    elif isinstance(val, schema.TensorList):
        bump.list(TENSOR, len(val.items))
        bump.list(POINTER, len(val.items))
        bump.one(BOXED_LIST)
    elif isinstance(val, schema.OptionalTensorList):
        bump.list(POINTER, len(val.items))
        bump.list(OPTIONAL_TENSOR, len(val.items))
        bump.one(BOXED_LIST)


def allocator_needs(plan: Any) -> AllocatorNeeds:
    """Method/temp allocator bytes for an execution plan (program.forward_plan), exactly as the
    runtime takes them."""
    from executorch.exir import schema

    foreign = sorted({d.id for d in plan.delegates if d.id != CMX_BACKEND})
    if foreign:
        raise NotImplementedError(
            f"programs delegated to {', '.join(foreign)}: its init allocates memory cmx-gen cannot count"
        )
    bump = _Bump()
    values = plan.values
    bump.list(EVALUE, len(values))
    if plan.inputs:
        bump.list(BYTE, len(plan.inputs))  # input_set_ (bool)
    dims: dict[int, int] = {}
    for index, value in enumerate(values):
        val = value.val
        bump.part = "tensors" if isinstance(val, schema.Tensor) else "lists"
        if isinstance(val, schema.Tensor):
            dims[index] = _tensor(bump, val)
        else:
            _list(bump, val)
    bump.part = "instructions"
    bump.list(BACKEND_DELEGATE, len(plan.delegates))  # delegates_ (an empty list is still aligned)
    for delegate in plan.delegates:
        if delegate.compile_specs:
            bump.list(COMPILE_SPEC, len(delegate.compile_specs))  # BackendDelegate::PopulateCompileSpecs
    bump.list(CHAIN, len(plan.chains))
    temp_used = 0
    max_args = 0
    for chain in plan.chains:
        bump.list(OP_FUNCTION, len(chain.instructions))
        bump.list(INSTRUCTION_ARGS, len(chain.instructions))
        for instruction in chain.instructions:
            args = instruction.instr_args
            if isinstance(args, (schema.KernelCall, schema.DelegateCall)):
                bump.list(POINTER, len(args.args))
            if isinstance(args, schema.KernelCall):
                n = len(args.args)
                max_args = max(max_args, n)
                temp_used = max(temp_used, TENSOR_META[0] * n + sum(dims.get(a, 0) for a in args.args))
    # Method::resolve_operator puts the per-call TensorMeta on the temp allocator only when the
    # temp pool is at least n_args * (sizeof(TensorMeta) + kTensorDimensionLimit) bytes;
    # otherwise it takes them from the method allocator, for good.
    temp_pool = max_args * (TENSOR_META[0] + TENSOR_DIMENSION_LIMIT)
    return AllocatorNeeds(
        method_bytes=bump.cur, temp_used_bytes=temp_used, temp_pool_bytes=temp_pool, parts=tuple(bump.parts.items())
    )
