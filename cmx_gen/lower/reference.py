"""Expected outputs of the lowered program, and its quantization error against the float model.

The firmware is later checked against `reference.npz` bit-exact: the expected outputs come from the
lowered program run on the host, not from the float model, with every op computed as its CMSIS-NN C
kernel computes it (kernel_models.py where ExecuTorch's Python op rounds differently). ExecuTorch's
own Python reference is run beside it; the report gives their distance, op by op.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from cmx_gen.lower.kernel_models import FALLBACKS, ISA_DEPENDENT, MODELS

if TYPE_CHECKING:
    from cmx_gen.lower.lowering import LoweredModel


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


def op_name(node: torch.fx.Node) -> str:
    """`cortex_m::quantized_avg_pool2d` for an operator call, "" for anything else."""
    schema = getattr(node.target, "_schema", None) if node.op == "call_function" else None
    return schema.name if schema is not None else ""


def module_path(node: torch.fx.Node) -> str:
    """The module a node came from: its nn_module_stack path (`features.3`), else the model class
    for functional calls in forward (`Residual`)."""
    stack = list((node.meta.get("nn_module_stack") or {}).values())
    path, cls = stack[-1] if stack else ("", "")
    if "torch.export" in str(cls):  # the quantize/dequantize torch.export adds around the model
        return "model input/output"
    return str(path) if path else (str(cls).rsplit(".", 1)[-1] or "forward")


_FRAME = re.compile(r'File "([^"]+)", line (\d+), in \w+\n\s*(.*)')


def user_frame(node: torch.fx.Node) -> tuple[str, str, str] | None:
    """(path, line, code) of the user's line that made the node: the first frame of its stack trace."""
    match = _FRAME.search(node.meta.get("stack_trace") or "")
    return (match.group(1), match.group(2), match.group(3).strip()) if match else None


def source_line(node: torch.fx.Node) -> str:
    """`model.py:17 x = F.avg_pool2d(x, 4)`: the user's line that made the node."""
    frame = user_frame(node)
    return f"{Path(frame[0]).name}:{frame[1]} {frame[2]}" if frame else ""


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


def compare_references(lowered: "LoweredModel", output_scales: list[float]) -> dict[str, Any]:
    """report.json's `reference`: which reference the firmware is checked against, how far
    ExecuTorch's Python reference is from it at the outputs (LSB of each output), and by op."""
    def lsb(a: tuple[torch.Tensor, ...], b: tuple[torch.Tensor, ...]) -> int:
        worst = 0
        for x, y, scale in zip(a, b, output_scales or [0.0] * len(a)):
            diff = (x.float() - y.float()).abs().max().item() if x.numel() else 0.0
            worst = max(worst, round(diff / scale) if scale else int(diff > 0))
        return worst

    ops = sorted(lowered.op_diffs, key=lambda d: d.index)
    if lowered.python_outputs is None:
        return {
            "checked_against": "cmsis-nn",
            "description": "bit-exact host models of the CMSIS-NN C kernels; ExecuTorch's Python reference cannot run "
                           f"this program ({', '.join(sorted(lowered.python_missing))} has no integer kernel in torch)",
            "python_reference_max_lsb": None,
            "python_reference_max_lsb_calibration": None,
            "ops": [d.to_dict() for d in ops],
        }
    sample = lsb(lowered.reference_outputs, lowered.python_outputs)
    everywhere = max([sample, *(lsb(k, p) for k, p in lowered.calibration_references if p is not None)])
    return {
        "checked_against": "cmsis-nn",
        "description": "ExecuTorch's Python cortex_m ops, with bit-exact host models of the CMSIS-NN C kernels "
                       f"for {', '.join(sorted(MODELS))}",
        "python_reference_max_lsb": sample,
        "python_reference_max_lsb_calibration": everywhere,
        "ops": [d.to_dict() for d in ops],
    }


def _logical(tensor: torch.Tensor) -> np.ndarray:
    """Contiguous NCHW numpy array: the firmware re-lays it out by the program's dim_order."""
    return tensor.detach().contiguous().cpu().numpy()


def reference_arrays(lowered: "LoweredModel") -> dict[str, np.ndarray]:
    arrays = {f"input_{i}": _logical(x) for i, x in enumerate(lowered.sample_inputs)}
    arrays.update({f"output_{i}": _logical(y) for i, y in enumerate(lowered.reference_outputs)})
    return arrays


def _is_classifier(outputs: tuple[torch.Tensor, ...]) -> bool:
    return len(outputs) == 1 and outputs[0].dim() == 2 and outputs[0].shape[1] > 1


def quantization_error(lowered: "LoweredModel") -> dict[str, Any]:
    """Max abs error (float vs INT8 program) on the sample input and over the calibration set.

    For a classifier (one [N, K] output) also the top-1 agreement between float and INT8 over
    the calibration set.
    """
    def real(outputs: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:  # --io int8 outputs, dequantized
        from cmx_gen.lower.int8_io import dequantize_outputs

        return dequantize_outputs(outputs, lowered.io) if lowered.io else outputs

    pairs = [(f, real(q)) for f, q in [(lowered.float_outputs, lowered.reference_outputs), *lowered.calibration_outputs]]
    max_abs = 0.0
    for float_out, int8_out in pairs:
        for f, q in zip(float_out, int8_out):
            max_abs = max(max_abs, float((f.float() - q.float()).abs().max()))
    result: dict[str, Any] = {
        "max_abs_err": round(max_abs, 6),
        "sample_max_abs_err": round(max(float((f.float() - q.float()).abs().max()) for f, q in zip(*pairs[0])), 6),
        "samples": len(pairs),
        "top1_agreement": None,
    }
    if _is_classifier(lowered.float_outputs) and lowered.calibration_outputs:
        agree = sum(int(torch.equal(f[0].argmax(dim=-1), q[0].argmax(dim=-1))) for f, q in pairs[1:])
        result["top1_agreement"] = round(agree / len(lowered.calibration_outputs), 4)
    return result
