"""Expected outputs of the lowered program.

The firmware is later checked against `reference.npz` bit-exact: the expected outputs come from the
lowered program run on the host, not from the float model, with every op computed as its CMSIS-NN C
kernel computes it (kernel_models.py where ExecuTorch's Python op rounds differently). ExecuTorch's
own Python reference is run beside it; the report gives their distance, op by op
(program/reference_check.py).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import torch

from cmx_gen.lower.fx_nodes import module_path, op_name, source_line
from cmx_gen.lower.kernel_models import FALLBACKS, ISA_DEPENDENT, MODELS


@dataclass
class OpDiff:
    """Where ExecuTorch's Python op and the host model of its C kernel disagree (same inputs)."""

    index: int  # position among the program's operator calls, in execution order
    node: str
    op: str  # "cortex_m::quantized_avg_pool2d"
    module: str  # the PyTorch module path the node came from ("features.3", or the class for functional ops)
    max_lsb: int
    elements: int  # elements that differ
    numel: int
    source: str = ""  # the user's line that made the node

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class KernelExactInterpreter(torch.fx.Interpreter):
    """Runs a lowered program with the host models of the C kernels (kernel_models.MODELS) in place
    of ExecuTorch's Python ops, and records where the two disagree on the same inputs."""

    def __init__(self, module: torch.fx.GraphModule, isa: str = "") -> None:
        super().__init__(module)
        self.isa = isa  # the target's CMSIS-NN ISA: some kernels round differently with MVE
        self.compare_python = True  # False: the kernel-exact result only (a data set's many samples)
        self.diffs: dict[str, OpDiff] = {}
        self.python_missing: set[str] = set()  # ops ExecuTorch's Python reference cannot run
        # When a dict: every operator call's result by node name (the on-target trace's reference).
        self.record: dict[str, Any] | None = None
        # Indexed like the program's instructions: operator calls, not scratch allocations.
        calls = [n for n in module.graph.nodes if n.op == "call_function" and hasattr(n.target, "_schema")]
        self._calls = {n: i for i, n in enumerate(calls)}

    def run_node(self, node: torch.fx.Node) -> Any:
        result = self._run_node(node)
        if self.record is not None and op_name(node):
            self.record[node.name] = result
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
        python = node.target(*args, **kwargs)
        delta = (exact.to(torch.int32) - python.to(torch.int32)).abs()
        if delta.numel() and int(delta.max()):
            old = self.diffs.get(node.name)
            self.diffs[node.name] = OpDiff(
                index=self._calls[node], node=node.name, op=name, module=module_path(node),
                max_lsb=max(int(delta.max()), old.max_lsb if old else 0),
                elements=max(int((delta > 0).sum()), old.elements if old else 0), numel=delta.numel(),
                source=source_line(node),
            )
        return exact


@dataclass
class ReferenceRuns:
    """Outputs of one input under both references, and the ops where they part."""

    kernel_exact: tuple[torch.Tensor, ...]  # what the firmware is specified to compute
    python: tuple[torch.Tensor, ...] | None  # ExecuTorch's Python ops throughout; None if one cannot run


def run_references(program: torch.fx.GraphModule, inputs: tuple[torch.Tensor, ...],
                   interpreter: KernelExactInterpreter) -> ReferenceRuns:
    from cmx_gen.model.source import call, fresh

    with torch.no_grad():
        exact = interpreter.run(*fresh(inputs))
    exact = (exact,) if isinstance(exact, torch.Tensor) else tuple(exact)
    python = None if interpreter.python_missing else call(program, inputs)
    return ReferenceRuns(kernel_exact=exact, python=python)
