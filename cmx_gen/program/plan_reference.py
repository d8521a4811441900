"""The reference for a `.pte` lowered elsewhere: the program's own execution plan, run on the host.

There is no graph to run, only the plan the firmware runs: its values (constants with their bytes,
planned tensors, scalars, lists) and its kernel calls in order. Planned tensors live where the plan
puts them, in simulated planned buffers, as on the target: a view the plan elided (a flatten before
a linear layer) is the same bytes read with another shape, and buffers the plan reuses are reused. Each call is computed with the host
model of its C kernel where ExecuTorch's Python op rounds differently (kernel_models.py, the same
models cmx-gen's own lowering checks against), else with the op's Python implementation
(ExecuTorch's cortex_m and dim-order ops, torch's aten ops); a call into cmx-gen's own backend runs
its plan layer by layer the same way (lower/delegate/host_run.py). A plan with a call no host model can
compute (another backend's delegate, control flow, an op torch has no kernel for on that dtype)
has no reference:
`NoHostModel` names it, and the app then runs without one (RAN).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from cmx_gen.common.dim_order import from_layout, to_layout
from cmx_gen.lower.host_models.kernel_models import compute
from cmx_gen.program.pte import forward_plan, read

# ExecuTorch ScalarType codes -> torch dtypes (what a cortex_m program holds).
_DTYPES = {
    0: torch.uint8,
    1: torch.int8,
    2: torch.int16,
    3: torch.int32,
    4: torch.int64,
    6: torch.float32,
    7: torch.float64,
    11: torch.bool,
}


DELEGATE = "<DelegateCall>"  # a call into cmx-gen's backend in PlanRunner.calls (its plan in place of a function)


class NoHostModel(Exception):
    """A call of the plan that no host model computes: the program has no host reference."""


def _register_python_ops() -> None:
    """ExecuTorch's Python ops register themselves with torch on import."""
    # The cortex_m package must be entered through its passes (operators.py alone is a circular import).
    import executorch.backends.cortex_m.passes.cortex_m_pass_manager  # noqa: F401
    import executorch.exir.passes.dim_order_ops_registry  # noqa: F401


def _in_memory_format(tensor: torch.Tensor, dim_order: Sequence[int]) -> torch.Tensor:
    """The tensor in the memory format its dim order names (the Python ops see what the graph had)."""
    if list(dim_order) == [0, 2, 3, 1] and tensor.dim() == 4:
        return tensor.contiguous(memory_format=torch.channels_last)
    return tensor.contiguous()


class PlanRunner:
    """One program's `forward` plan, ready to run on inputs (logical NumPy arrays)."""

    def __init__(self, pte: bytes, isa: str) -> None:
        _register_python_ops()
        self.program = read(pte)
        self.plan = forward_plan(self.program)
        self.isa = isa
        self.calls = self._calls()

    def _constant(self, tensor: Any) -> torch.Tensor | None:
        index = int(tensor.data_buffer_idx)
        if tensor.allocation_info is not None or index <= 0 or index >= len(self.program.constant_buffer):
            return None
        # The storage is padded to the buffer alignment: the tensor is its first bytes.
        return self._from_bytes(bytes(self.program.constant_buffer[index].storage), tensor, 0)

    def _initial(self, index: int) -> Any:
        """A value before the plan runs: constants, scalars and lists."""
        val = self.plan.values[index].val
        kind = type(val).__name__
        if kind == "Tensor":
            return self._constant(val)  # None for a planned tensor: it lives in the planned buffers
        if kind in ("Int", "Bool"):
            return val.int_val if kind == "Int" else val.bool_val
        if kind == "Double":
            return float(val.double_val)  # inf and nan come back from the program's JSON as strings
        if kind == "String":
            return val.string_val
        if kind == "Null":
            return None
        if kind in ("IntList", "TensorList", "OptionalTensorList"):
            return [int(i) for i in val.items]  # value indices: resolved when a call reads them
        if kind == "DoubleList":
            return [float(v) for v in val.items]
        if kind == "BoolList":
            return list(val.items)
        raise NoHostModel(f"a value of kind {kind}")

    def _calls(self) -> list[tuple[int, str, Any, list[int], list[Any]]]:
        """(instruction index, op name, the Python callable, plan args, the schema arguments those args
        are) per kernel call; NoHostModel for anything else."""
        calls: list[tuple[int, str, Any, list[int], list[Any]]] = []
        for chain in self.plan.chains:
            for index, instruction in enumerate(chain.instructions):
                args = instruction.instr_args
                kind = type(args).__name__
                if kind == "FreeCall":
                    continue
                if kind == "DelegateCall":
                    calls.append(
                        (index, DELEGATE, self._delegate(int(args.delegate_index)), [int(a) for a in args.args], [])
                    )
                    continue
                if not hasattr(args, "op_index"):
                    raise NoHostModel(f"a {kind} instruction")
                op = self.plan.operators[args.op_index]
                function, passed = self._function(op.name, op.overload)
                calls.append((index, op.name, function, [int(a) for a in args.args], passed))
        return calls

    def _delegate(self, index: int) -> bytes:
        """The plan of a call into cmx-gen's backend (host_run.py runs it); any other backend's
        blob means nothing on the host."""
        from cmx_gen.lower.delegate.preprocess import BACKEND_ID

        delegate = self.plan.delegates[index]
        if delegate.id != BACKEND_ID or int(delegate.processed.location) != 0:
            raise NoHostModel(f"a DelegateCall instruction into {delegate.id}")
        return bytes(self.program.backend_delegate_data[int(delegate.processed.index)].data)

    def _run_delegate(self, plan: bytes, args: list[int]) -> None:
        from cmx_gen.lower.delegate import host_run

        views = []
        for index in args:
            tensor = self.plan.values[index].val
            if type(tensor).__name__ != "Tensor" or tensor.allocation_info is None:
                raise NoHostModel("a delegate argument outside the planned memory")
            dtype, sizes, _ = self._spec(tensor)
            buffer, offset = self._where(tensor)
            nbytes = int(np.prod(sizes)) * torch.empty(0, dtype=dtype).element_size()
            views.append(memoryview(buffer)[offset : offset + nbytes])
        try:
            host_run.run(plan, views, self.isa)
        except Exception as exc:
            raise NoHostModel(f"a cmx backend layer ({type(exc).__name__}: {str(exc).splitlines()[0][:120]})") from exc

    @staticmethod
    def _function(name: str, overload: str) -> tuple[Any, list[Any]]:
        """The functional overload behind an out-variant kernel, and the schema arguments the plan
        passes (the out variant's but its outs): the overload whose arguments are those, names and
        types (`mul.out` -> `mul.Tensor`, not `mul(Scalar a, Scalar b)`), else one that takes them
        among others (`full_like.out` -> `full_like`, with its defaults), else by name."""
        namespace, _, op = name.partition("::")
        packet = getattr(getattr(torch.ops, namespace, None), op, None)
        if packet is None:
            raise NoHostModel(f"{name}.{overload} (no Python op)")
        out_variant = getattr(packet, overload or "default", None)
        if out_variant is not None:
            passed = [a for a in out_variant._schema.arguments if not a.is_out]
            wanted = [(a.name, str(a.type)) for a in passed]
            functional = [getattr(packet, c) for c in packet.overloads()]
            functional = [f for f in functional if not any(a.is_out for a in f._schema.arguments)]
            typed = [f for f in functional if [(a.name, str(a.type)) for a in f._schema.arguments] == wanted]
            wider = [f for f in functional if set(wanted) <= {(a.name, str(a.type)) for a in f._schema.arguments}]
            if typed or wider:
                return (typed or wider)[0], passed
        fallback = "default" if overload in ("out", "") else overload.removesuffix("_out")
        found = getattr(packet, fallback, None)
        if found is None:
            raise NoHostModel(f"{name}.{overload} (no Python op)")
        return found, list(found._schema.arguments)

    @staticmethod
    def _spec(tensor: Any) -> tuple[torch.dtype, list[int], list[int]]:
        dtype = _DTYPES.get(int(tensor.scalar_type))
        if dtype is None:
            raise NoHostModel(f"a tensor of dtype code {tensor.scalar_type}")
        return dtype, [int(s) for s in tensor.sizes], [int(d) for d in tensor.dim_order]

    def _where(self, tensor: Any) -> tuple[bytearray, int]:
        info = tensor.allocation_info
        offset = int(info.memory_offset_low) + (int(info.memory_offset_high) << 32)
        return self.memory[int(info.memory_id)], offset

    def _from_bytes(self, buffer: Any, tensor: Any, offset: int) -> torch.Tensor:
        """`tensor` read from `buffer` at `offset`, laid out in memory by its dim order."""
        dtype, sizes, order = self._spec(tensor)
        flat = np.frombuffer(
            buffer, dtype=torch.empty(0, dtype=dtype).numpy().dtype, count=int(np.prod(sizes)), offset=offset
        )
        return _in_memory_format(torch.from_numpy(from_layout(flat, sizes, order).copy()), order)

    def _load(self, tensor: Any) -> torch.Tensor:
        """A planned tensor, read from the planned buffers."""
        buffer, offset = self._where(tensor)
        return self._from_bytes(buffer, tensor, offset)

    def _store(self, tensor: Any, value: torch.Tensor) -> None:
        dtype, sizes, order = self._spec(tensor)
        buffer, offset = self._where(tensor)
        data = to_layout(value.detach().to(dtype).reshape(sizes).contiguous().numpy(), order).tobytes()
        buffer[offset : offset + len(data)] = data

    def _read(self, values: dict[int, Any], index: int) -> Any:
        """An argument's value; a list of values (ints, tensors) is stored as their indices."""
        val = self.plan.values[index].val
        kind = type(val).__name__
        if kind in ("IntList", "TensorList", "OptionalTensorList"):
            return [self._read(values, i) if i >= 0 else None for i in values[index]]
        if kind == "Tensor" and val.allocation_info is not None:
            return self._load(val)
        return values.get(index)

    def run(self, inputs: Sequence[NDArray[Any]], trace: dict[int, bytes] | None = None) -> list[NDArray[Any]]:
        """The plan's outputs (logical NumPy arrays) for `inputs` (logical NumPy arrays). `trace`: filled
        with each operator call's output bytes, as they lie in memory, by instruction index (what the
        trace image prints)."""
        self.memory = [bytearray(int(size)) for size in self.plan.non_const_buffer_sizes]
        values: dict[int, Any] = {i: self._initial(i) for i in range(len(self.plan.values))}
        for index, array in zip(self.plan.inputs, inputs):
            self._store(self.plan.values[index].val, torch.from_numpy(np.ascontiguousarray(array)))
        for at, name, function, args, passed in self.calls:
            if name == DELEGATE:
                self._run_delegate(function, args)
                continue
            # The plan passes the out variant's arguments: the functional ones, then its outs and returns.
            outs = args[len(passed) :]
            positional, keywords = [], {}
            for argument, index in zip(passed, args):
                value = self._read(values, index)
                if "ScalarType" in str(argument.real_type) and isinstance(value, int):  # serialized as its code
                    value = _DTYPES[value]
                if argument.kwarg_only:
                    keywords[argument.name] = value
                else:
                    positional.append(value)
            try:
                result = compute(name, function, positional, keywords, self.isa)
            except Exception as exc:  # torch has no kernel for it on this dtype, or the op refuses
                raise NoHostModel(f"{name} ({type(exc).__name__}: {str(exc).splitlines()[0][:120]})") from exc
            results = list(result) if isinstance(result, (tuple, list)) else [result]
            if outs and type(self.plan.values[outs[0]].val).__name__ == "TensorList":
                outs = list(values[outs[0]])  # split_with_sizes_copy.out: a planned tensor per result
            for position, out in enumerate(outs):
                value, spec = results[position % len(results)], self.plan.values[out].val
                if (
                    isinstance(value, torch.Tensor)
                    and type(spec).__name__ == "Tensor"
                    and spec.allocation_info is not None
                ):
                    self._store(spec, value)
                    if trace is not None and position == 0:
                        buffer, offset = self._where(spec)
                        trace[at] = bytes(buffer[offset : offset + int(value.numel()) * value.element_size()])
                else:
                    values[out] = value
        return [self._read(values, i).contiguous().numpy() for i in self.plan.outputs]


def reference(pte: bytes, inputs: Sequence[NDArray[Any]], isa: str) -> list[NDArray[Any]]:
    """The program's outputs for `inputs`, computed on the host as the firmware computes them;
    NoHostModel when a call has no host model."""
    return PlanRunner(pte, isa).run(inputs)
