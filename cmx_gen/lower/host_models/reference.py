"""Expected outputs of the lowered program.

The firmware is later checked against `reference.npz` bit-exact: the expected outputs come from the
lowered program run on the host, not from the float model, with every op computed as its CMSIS-NN C
kernel computes it (kernel_models.py where ExecuTorch's Python op rounds differently). ExecuTorch's
own Python reference is run beside it; the report gives their distance, op by op
(program/reference_check.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import torch

from cmx_gen.lower.facts import OpDiff
from cmx_gen.lower.fx_nodes import module_path, op_name, reference_name, source_line
from cmx_gen.lower.host_models.kernel_models import FALLBACKS, ISA_DEPENDENT, MODELS


class _KernelExactInterpreter(torch.fx.Interpreter):
    """Runs a lowered program once with the host models of the C kernels (kernel_models.MODELS) in
    place of ExecuTorch's Python ops, and notes where the two disagree on the same inputs."""

    def __init__(self, module: torch.fx.GraphModule, isa: str, compare_python: bool, record: bool) -> None:
        super().__init__(module)
        self.isa = isa  # the target's CMSIS-NN ISA: some kernels round differently with MVE
        self.compare_python = compare_python
        self.diffs: dict[str, OpDiff] = {}
        self.python_missing: set[str] = set()  # ops ExecuTorch's Python reference cannot run
        self.record: dict[str, object] | None = {} if record else None
        # Indexed like the program's instructions: operator calls, not scratch allocations.
        calls = [n for n in module.graph.nodes if n.op == "call_function" and hasattr(n.target, "_schema")]
        self._calls = {n: i for i, n in enumerate(calls)}

    def run_node(self, node: torch.fx.Node) -> Any:
        result = self._run_node(node)
        if self.record is not None and op_name(node):
            self.record[reference_name(node)] = result
        return result

    def _run_node(self, node: torch.fx.Node) -> Any:
        name = op_name(node)
        if name in FALLBACKS:
            try:
                return super().run_node(node)
            except NotImplementedError:  # torch has no integer kernel for this case
                self.python_missing.add(name)
                args, kwargs = self.fetch_args_kwargs_from_env(node)
                return FALLBACKS[name](*args, **kwargs)
        if name not in MODELS:
            return super().run_node(node)
        args, kwargs = self.fetch_args_kwargs_from_env(node)
        exact = MODELS[name](*args, **kwargs, **({"isa": self.isa} if name in ISA_DEPENDENT else {}))
        if not self.compare_python:
            return exact
        python = cast(Callable[..., torch.Tensor], node.target)(*args, **kwargs)
        delta = (exact.to(torch.int32) - python.to(torch.int32)).abs()
        if delta.numel() and int(delta.max()):
            self.diffs[node.name] = OpDiff(
                index=self._calls[node],
                node=node.name,
                op=name,
                module=module_path(node),
                max_lsb=int(delta.max()),
                elements=int((delta > 0).sum()),
                numel=delta.numel(),
                source=source_line(node),
            )
        return exact


@dataclass(frozen=True)
class ReferenceRuns:
    """One input through the lowered program under both references, and the ops where they part."""

    kernel_exact: tuple[torch.Tensor, ...]  # what the firmware is specified to compute
    python: tuple[torch.Tensor, ...] | None  # ExecuTorch's Python ops throughout; None if one cannot run
    diffs: dict[str, OpDiff] = field(default_factory=dict)  # by node, in the order they were met
    python_missing: frozenset[str] = frozenset()  # ops ExecuTorch's Python reference cannot run
    # with record=True: every op's result, by node (a tensor, or a tuple of them for an op of several outputs)
    values: dict[str, object] = field(default_factory=dict)


def run_references(
    program: torch.fx.GraphModule, inputs: tuple[torch.Tensor, ...], isa: str, record: bool = False
) -> ReferenceRuns:
    """`inputs` through the kernel-exact host models and through ExecuTorch's Python ops."""
    from cmx_gen.model.source import call

    interpreter = _KernelExactInterpreter(program, isa, compare_python=True, record=record)
    exact = _outputs(interpreter, inputs)
    python = None if interpreter.python_missing else call(program, inputs)
    return ReferenceRuns(
        kernel_exact=exact,
        python=python,
        diffs=dict(interpreter.diffs),
        python_missing=frozenset(interpreter.python_missing),
        values=interpreter.record or {},
    )


def kernel_exact(program: torch.fx.GraphModule, inputs: tuple[torch.Tensor, ...], isa: str) -> tuple[torch.Tensor, ...]:
    """The kernel-exact outputs alone (a data set's many samples: ExecuTorch's Python ops are not run)."""
    return _outputs(_KernelExactInterpreter(program, isa, compare_python=False, record=False), inputs)


def _outputs(interpreter: _KernelExactInterpreter, inputs: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
    """One run of `interpreter` on fresh copies of `inputs`, its outputs as a tuple."""
    from cmx_gen.model.source import fresh

    with torch.no_grad():
        out = interpreter.run(*fresh(inputs))
    return (out,) if isinstance(out, torch.Tensor) else tuple(out)


def merge_diffs(*runs: dict[str, OpDiff]) -> dict[str, OpDiff]:
    """Where the references parted over several runs: per node, the worst LSB and the most elements."""
    merged: dict[str, OpDiff] = {}
    for diffs in runs:
        for name, diff in diffs.items():
            old = merged.get(name)
            merged[name] = (
                diff
                if old is None
                else diff.model_copy(
                    update={"max_lsb": max(diff.max_lsb, old.max_lsb), "elements": max(diff.elements, old.elements)}
                )
            )
    return merged
