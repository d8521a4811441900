"""Read a serialized ExecuTorch program (`.pte`): operators, memory plan, I/O specs and sizes.

Everything here comes from the flatbuffer itself, so a `.pte` lowered elsewhere can be analysed the
same way as one cmx-gen lowered.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from cmx_gen.common.errors import ModelSourceError
from cmx_gen.common.op_classes import classify
from cmx_gen.common.record import Record
from cmx_gen.program import method_pool
from cmx_gen.program.method_pool import AllocatorNeeds

# executorch ScalarType codes -> numpy-style names (schema/scalar_type.fbs).
SCALAR_TYPES = {
    0: "uint8",
    1: "int8",
    2: "int16",
    3: "int32",
    4: "int64",
    5: "float16",
    6: "float32",
    7: "float64",
    11: "bool",
}
SCALAR_BYTES = {0: 1, 1: 1, 2: 2, 3: 4, 4: 8, 5: 2, 6: 4, 7: 8, 11: 1}
DTYPE_BYTES = {name: SCALAR_BYTES[code] for code, name in SCALAR_TYPES.items()}


class Quant(Record):
    """How a float I/O tensor maps to int8: `real = scale * (q - zero_point)`; `at` "boundary" (the
    program's own quantize/dequantize) or "io" (the caller's, --io int8)."""

    scale: float | None = None
    zero_point: int | None = 0
    at: str | None = None


class TensorSpec(Record):
    """One input or output of the program."""

    shape: list[int]
    dtype: str
    dim_order: list[int]
    quant: Quant | None = None
    # An input the program does not plan (input_memory = "caller"): the caller's buffer, read in
    # place (cmx_input_bind), not in the planned pool.
    caller_buffer: bool = False

    @property
    def numel(self) -> int:
        count = 1
        for dim in self.shape:
            count *= int(dim)
        return count

    @property
    def nbytes(self) -> int:
        return self.numel * DTYPE_BYTES.get(self.dtype, 0)


class Operator(Record):
    """One operator of the program: how many calls it makes and its class (data/op_classes.yaml)."""

    name: str
    count: int
    class_: str = Field(alias="class")  # cmsis_nn | quant_boundary | data_movement | fallback


class OutputPlace(Record):
    """Where an instruction's output tensor lives in planned memory, and its layout."""

    mem_id: int
    offset: int
    nbytes: int
    dtype: str
    shape: list[int]
    dim_order: list[int]
    reference: bool = False  # the host holds its expected bytes (model/trace_reference.bin)


@dataclass(frozen=True)
class PlanRow:
    """One instruction of `forward`, in execution order (its index is the runtime's debug handle)."""

    index: int
    op: str
    output: OutputPlace | None = None


@dataclass(frozen=True)
class ProgramInfo:
    """The facts of one `.pte` that the report, the memory budget and the firmware need."""

    pte_bytes: int
    sha256: str
    constant_bytes: int
    operators: list[Operator]  # in first-use order
    inputs: list[TensorSpec]
    outputs: list[TensorSpec]
    planned_buffer_sizes: list[int]  # one per mem_id >= 1 (mem_id 0 is reserved by executorch)
    scratch_bytes: int
    method_allocator_bytes: int
    temp_allocator_bytes: int
    num_values: int
    num_instructions: int
    delegates: list[str] = field(default_factory=list)
    # One per instruction of `forward`, in execution order (the runtime's debug handle is this
    # index): what the on-target profile and trace are keyed on.
    instructions: list[PlanRow] = field(default_factory=list)
    # The ISA its linear layers were lowered for: upstream gives cortex_m::quantized_linear a kernel
    # sum (bias and input offset folded in) for MVE, which only the Helium kernel reads, and a bias
    # otherwise, which only the DSP and scalar kernels read. None: the program has no such call.
    linear_lowered_for: str | None = None

    @property
    def fallbacks(self) -> list[str]:
        return [op.name for op in self.operators if op.class_ == "fallback"]

    @property
    def planned_bytes(self) -> int:
        return sum(self.planned_buffer_sizes)

    @property
    def caller_input_bytes(self) -> int:
        """The inputs the caller keeps in its own buffers (not in the planned pool)."""
        return sum(spec.nbytes for spec in self.inputs if spec.caller_buffer)


def read(data: bytes) -> Any:
    """The deserialized program (executorch.exir.schema.Program). The one place a `.pte` is parsed:
    every other module asks this one (analyse, operator_names, allocator_needs)."""
    from executorch.exir._serialize._program import deserialize_pte_binary

    try:
        pte = deserialize_pte_binary(data)
    except Exception as exc:
        raise ModelSourceError(
            f"not a readable .pte ({type(exc).__name__}: {exc})", "give a .pte written by ExecuTorch 1.x"
        ) from exc
    return pte.program if hasattr(pte, "program") else pte


def _op_name(op: Any) -> str:
    """ "ns::name.overload" of a plan operator, as the runtime looks it up."""
    return f"{op.name}.{op.overload}" if op.overload else op.name


def forward_plan(program: Any) -> Any:
    """The `forward` execution plan (the first one when no method is called forward)."""
    plans = {plan.name: plan for plan in program.execution_plan}
    return plans.get("forward") or program.execution_plan[0]


def operator_names(data: bytes) -> list[str]:
    """Every plan's operators ("ns::name.overload"), as the runtime looks them up to register them.

    Memoized on the program's hash: parsing a .pte imports exir, which takes seconds.
    """
    from cmx_gen.common.memo import memo_json

    def names() -> list[str]:
        return [_op_name(op) for plan in read(data).execution_plan for op in plan.operators]

    found: list[str] = memo_json("ops", (hashlib.sha256(data).hexdigest(),), names)
    return found


def delegate_plans(program: Any) -> list[bytes]:
    """The processed blob of each delegate of `forward` (cmx-gen's backend: its plan), in order."""
    blobs = []
    for delegate in forward_plan(program).delegates:
        ref = delegate.processed
        if int(ref.location) != 0:  # DataLocation.INLINE: where to_executorch puts cmx-gen's plans
            raise ModelSourceError(
                f"delegate {delegate.id} keeps its data in a segment",
                "lower the model with cmx-gen, whose plans are inline",
            )
        blobs.append(bytes(program.backend_delegate_data[ref.index].data))
    return blobs


def _plan_layers(blob: bytes) -> list[tuple[str, dict[str, int]]]:
    from cmx_gen.lower.delegate.plan import read_layers

    return read_layers(blob)


def backend_layers(data: bytes) -> list[str]:
    """The layer kinds cmx-gen's backend runs for this program (plan order, every delegate), so
    kernels/ compiles exactly those. Memoized on the program's hash like operator_names."""
    from cmx_gen.common.memo import memo_json

    def kinds() -> list[str]:
        return [kind for blob in delegate_plans(read(data)) for kind, _ in _plan_layers(blob)]

    found: list[str] = memo_json("backend_layers", (hashlib.sha256(data).hexdigest(),), kinds)
    return found


def allocator_needs(data: bytes) -> AllocatorNeeds:
    """Method/temp allocator bytes of the `forward` plan (method_pool.py replays load_method)."""
    return method_pool.allocator_needs(forward_plan(read(data)))


def _constant_bytes(program: Any) -> int:
    inline = sum(len(buffer.storage) for buffer in program.constant_buffer)
    inline += sum(len(data.data) for data in program.backend_delegate_data)  # cmx-gen's plans hold their weights
    segment = 0
    if program.constant_segment is not None and program.constant_segment.offsets:
        index = program.constant_segment.segment_index
        if index < len(program.segments):
            segment = program.segments[index].size
    return inline + segment


def _kernel_calls(plan: Any) -> list[tuple[str, list[int]]]:
    calls = []
    for chain in plan.chains:
        for instruction in chain.instructions:
            args = instruction.instr_args
            if hasattr(args, "op_index"):
                calls.append((_op_name(plan.operators[args.op_index]), list(args.args)))
    return calls


def _tensor(value: Any) -> Any | None:
    val = value.val
    return val if hasattr(val, "sizes") and hasattr(val, "scalar_type") else None


def _nbytes(tensor: Any) -> int:
    count = 1
    for dim in tensor.sizes:
        count *= dim
    return count * SCALAR_BYTES.get(int(tensor.scalar_type), 4)


def _scalar(value: Any) -> float | int | None:
    val = value.val
    for attr in ("double_val", "int_val"):
        if hasattr(val, attr):
            found: float | int = getattr(val, attr)
            return found
    return None


def _linear_lowered_for(plan: Any, calls: list[tuple[str, list[int]]]) -> str | None:
    """'MVE' when the program's quantized_linear calls carry a kernel sum (argument 3), 'DSP or
    SCALAR' when they carry none, None without such a call (aten_to_cortex_m_pass picks by ISA)."""
    sums = {
        _tensor(plan.values[args[3]]) is not None
        for name, args in calls
        if name.startswith("cortex_m::quantized_linear")
    }
    if not sums:
        return None
    return "MVE" if True in sums else "DSP or SCALAR"


def _io_spec(plan: Any, index: int, calls: list[tuple[str, list[int]]], is_input: bool) -> TensorSpec:
    tensor = _tensor(plan.values[index])
    if tensor is None:
        return TensorSpec(shape=[], dtype="scalar", dim_order=[])
    dtype = SCALAR_TYPES.get(int(tensor.scalar_type), str(tensor.scalar_type))
    quant = None
    # Float I/O is (de)quantized at the graph edge: report the boundary's parameters.
    boundary = "quantize_per_tensor" if is_input else "dequantize_per_tensor"
    for name, args in calls:
        if boundary not in name:
            continue
        if (is_input and args[0] == index) or (not is_input and args[-1] == index):
            scale, zero_point = _scalar(plan.values[args[1]]), _scalar(plan.values[args[2]])
            quant = Quant(scale=scale, zero_point=zero_point, at="boundary")
            break
    return TensorSpec(
        shape=list(tensor.sizes),
        dtype=dtype,
        dim_order=list(tensor.dim_order),
        quant=quant,
        caller_buffer=is_input and tensor.allocation_info is None,
    )


def _instructions(plan: Any) -> list[PlanRow]:
    """Every instruction of the plan: its operator ("" for moves, jumps, frees, delegate calls) and
    where its output tensor lives in planned memory (mem_id >= 1, byte offset, size, layout), or
    None when it has none (a view, a non-tensor, a constant): the trace reads these bytes on target."""
    rows: list[PlanRow] = []
    for chain in plan.chains:
        for instruction in chain.instructions:
            args = instruction.instr_args
            if not hasattr(args, "op_index"):
                rows.append(PlanRow(len(rows), f"<{type(args).__name__}>"))
                continue
            tensor = _tensor(plan.values[args.args[-1]]) if args.args else None
            info = tensor.allocation_info if tensor is not None else None
            output = None
            if tensor is not None and info is not None and info.memory_id > 0:
                output = OutputPlace(
                    mem_id=int(info.memory_id),
                    offset=int(info.memory_offset_low) | (int(info.memory_offset_high) << 32),
                    nbytes=_nbytes(tensor),
                    dtype=SCALAR_TYPES.get(int(tensor.scalar_type), str(tensor.scalar_type)),
                    shape=list(tensor.sizes),
                    dim_order=list(tensor.dim_order),
                )
            rows.append(PlanRow(len(rows), _op_name(plan.operators[args.op_index]), output))
    return rows


def _scratch_bytes(plan: Any, calls: list[tuple[str, list[int]]]) -> int:
    """Largest CMSIS-NN scratch buffer: planned uint8 tensors passed to cortex_m kernels (not outputs).

    The peak, not the sum: the memory planner overlaps buffers whose lifetimes do not meet, so
    the scratch buffers of different layers share space.
    """
    seen: set[int] = set()
    peak = 0
    for name, args in calls:
        if not name.startswith("cortex_m::"):
            continue
        for index in args[:-1]:
            tensor = _tensor(plan.values[index])
            if tensor is None or index in seen or int(tensor.scalar_type) != 0:
                continue
            info = tensor.allocation_info
            if info is not None and info.memory_id > 0:
                seen.add(index)
                peak = max(peak, _nbytes(tensor))
    return peak


def analyse(data: bytes) -> ProgramInfo:
    """Read the `forward` plan of a `.pte`."""
    program = read(data)
    plan = forward_plan(program)
    calls = _kernel_calls(plan)
    # what cmx-gen's backend runs counts as operators too, one row per layer kind ("cmx::conv"), a
    # layer once however many records run it (a patched stage's, lower/delegate/patch_plan.py)
    per_plan = [_plan_layers(blob) for blob in delegate_plans(program)]
    planned_layers = [layer for layers_of in per_plan for layer in layers_of]
    layers = [
        f"cmx::{kind}"
        for at, layers_of in enumerate(per_plan)
        for (_, _, kind) in dict.fromkeys((at, f["debug"], kind) for kind, f in layers_of)
    ]
    names = [n for n, _ in calls] + layers
    counts = Counter(names)
    operators = [Operator(name=name, count=counts[name], class_=classify(name)) for name in dict.fromkeys(names)]
    planned = [int(size) for size in plan.non_const_buffer_sizes[1:]]
    try:
        needs = method_pool.allocator_needs(plan)
    except NotImplementedError as exc:
        raise ModelSourceError(
            f"cmx-gen cannot size the runtime pools of this program: {exc}",
            "cmx-gen apps run cortex_m programs without delegates or external constants: lower the model with cmx-gen",
        ) from exc
    return ProgramInfo(
        pte_bytes=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        constant_bytes=_constant_bytes(program),
        operators=operators,
        inputs=[_io_spec(plan, i, calls, True) for i in plan.inputs],
        outputs=[_io_spec(plan, i, calls, False) for i in plan.outputs],
        planned_buffer_sizes=planned,
        scratch_bytes=max([_scratch_bytes(plan, calls)] + [f.get("scratch_bytes", 0) for _, f in planned_layers]),
        method_allocator_bytes=needs.method_bytes,
        # cortex_m kernels take their scratch from planned memory; the temp pool only has to be
        # large enough for the runtime to resolve operators in it (see method_pool.py).
        temp_allocator_bytes=max(needs.temp_pool_bytes, needs.temp_used_bytes),
        num_values=len(plan.values),
        num_instructions=sum(len(chain.instructions) for chain in plan.chains),
        delegates=[d.id for d in plan.delegates],
        instructions=_instructions(plan),
        linear_lowered_for=_linear_lowered_for(plan, calls),
    )
