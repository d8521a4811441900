"""The model stage's last step: torch.export of the model on its example inputs, once.

`export` returns an `Exported`, which lowering starts from and the cache keys on: the exported
program, the inputs laid out as that program takes them (channels-last where a conv/pool reads
them, input_layout.py), the float model's outputs and the hash of the graph with its weights.
It is frozen: later stages make their own objects and never write into this one (nor into the
ModelSource it came from).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from cmx_gen.common import progress
from cmx_gen.common.errors import ExportError, ModelSourceError
from cmx_gen.model import input_layout
from cmx_gen.model.source import Inputs, ModelSource, call


@dataclass(frozen=True)
class Exported:
    """A model exported for lowering. `inputs` and `calibration` are the source's, laid out as
    `program` takes them; `float_outputs` are the float model's on `inputs`."""

    source: ModelSource
    program: torch.export.ExportedProgram
    inputs: Inputs
    calibration: tuple[Inputs, ...]
    float_outputs: tuple[torch.Tensor, ...]
    graph_sha256: str  # the graph's code, signature, weights, buffers and constants (graph_fingerprint)

    @property
    def module(self) -> torch.nn.Module:
        """The float model (export() takes only sources that have one)."""
        if self.source.module is None:
            raise TypeError(f"{self.source.spec} has no module to lower")
        return self.source.module


def export(source: ModelSource) -> Exported:
    """Run the float model on its example inputs (a model that fails on them is told so before
    torch.export words it as a tracing problem), export it, and export it again when some inputs
    must go channels-last."""
    assert source.module is not None and source.example_inputs is not None, "a .pte is not exported"
    float_outputs = run_on_example_inputs(source)
    program = _export(source.module, source.example_inputs)
    inputs, calibration = input_layout.lay_out(program, source.example_inputs, tuple(source.calibration))
    if [x.stride() for x in inputs] != [x.stride() for x in source.example_inputs]:
        try:
            program = _export(source.module, inputs)
        except ExportError:
            # forward's x.view(n, -1) of a conv's output needs the contiguous strides it has in
            # PyTorch: traced as the reshape it is in value (a copy where the strides refuse a view)
            with _views_as_reshapes() as reshaped:
                program = _export(source.module, inputs)
            progress.say(
                f"{len(reshaped)} x.view(...) of a channels-last tensor in forward traced as x.reshape(...) "
                "(the same values; the input is channels-last for its convolution)"
            )
    return Exported(
        source=source,
        program=program,
        inputs=inputs,
        calibration=calibration,
        float_outputs=float_outputs,
        graph_sha256=graph_fingerprint(program),
    )


def graph_fingerprint(program: Any) -> str:
    """sha256 of an exported graph: its code, signature, weights, buffers and constants.

    Two models from one file with equal weights (a subclass adding a weightless pool) differ
    here, where a hash of the files and the state dict cannot tell them apart.
    """
    digest = hashlib.sha256()
    digest.update(program.graph_module.code.encode())
    digest.update(str(program.graph_signature).encode())
    for name, value in sorted([*program.state_dict.items(), *program.constants.items()]):
        digest.update(name.encode() + b"\0")
        if isinstance(value, torch.Tensor):
            digest.update(str((tuple(value.shape), value.dtype)).encode())
            digest.update(value.detach().contiguous().cpu().reshape(-1).view(torch.uint8).numpy().tobytes())
        else:
            digest.update(repr(value).encode())
    return digest.hexdigest()


def run_on_example_inputs(source: ModelSource) -> tuple[torch.Tensor, ...]:
    """The float model's outputs on its example inputs; its failure is the user's to fix."""
    assert source.module is not None and source.example_inputs is not None
    try:
        return call(source.module, source.example_inputs)
    except Exception as exc:
        raise ModelSourceError(
            f"the model fails on its example inputs: {type(exc).__name__}: {first_line(exc)}",
            "check --input-shape or example_inputs() against what forward expects",
        ) from exc


@contextlib.contextmanager
def _views_as_reshapes() -> Iterator[list[str]]:
    """While exporting: Tensor.view of a non-contiguous tensor (a channels-last image flattened) is
    Tensor.reshape, a view where the strides allow one and a copy where they refuse it, as PyTorch
    itself defines reshape; the list names each one made so."""
    original = torch.Tensor.view
    made: list[str] = []

    def view(self: torch.Tensor, *shape: Any) -> torch.Tensor:
        # decided before tracing anything: a view that fails would leave its node in the graph
        if self.is_contiguous() or any(isinstance(s, torch.dtype) for s in shape):
            return original(self, *shape)
        made.append(f"{tuple(self.shape)} -> {shape}")
        return self.reshape(*shape)  # a view where the strides allow one, else a copy

    torch.Tensor.view = view  # type: ignore[method-assign, assignment]
    try:
        yield made
    finally:
        torch.Tensor.view = original  # type: ignore[method-assign]


def _export(module: torch.nn.Module, inputs: Inputs) -> Any:
    # torch.export prints the partial graph to stderr when it fails: keep it for --debug.
    printed = io.StringIO()
    try:
        with contextlib.redirect_stderr(printed):
            return torch.export.export(module, inputs)
    except Exception as exc:
        error = export_error("torch.export", exc, _last_user_line(printed.getvalue()))
        error.details = printed.getvalue()
        raise error from exc


_EXPORT_HINTS = [
    (
        re.compile(r"data.dependent|GuardOnDataDependent|could not guard", re.I),
        "forward branches on tensor values: replace Python if/while on tensors with torch.where/torch.cond",
    ),
    (
        re.compile(r"\.item\(\)|tolist|numpy", re.I),
        "forward converts tensors to Python values: keep everything a tensor",
    ),
    (
        re.compile(r"not supported|Unsupported", re.I),
        "forward uses something torch.export cannot trace: see the cause above",
    ),
    (
        re.compile(r"size mismatch|shape|Expected .* dim", re.I),
        "the example inputs do not match what forward expects: check --input-shape",
    ),
]

_STAGE_HINTS = {
    "torch.export": "make forward traceable by torch.export (tensor-only inputs and outputs, no data-dependent Python control flow)",
    "quantization": "check the calibration data (finite values shaped like the inputs) and that forward runs on it",
    "delegation": "lower with delegate = false ([options] in cmx.toml, or --no-delegate) to run every operator on "
    "its own kernel, and report the model",
}


def first_line(exc: BaseException, limit: int = 200) -> str:
    """The first non-empty line of an exception's message (its type name when it has none)."""
    first = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
    return first if len(first) <= limit else first[:limit] + "..."


def export_error(stage: str, exc: Exception, where: str = "") -> ExportError:
    """One line for a step of export or lowering that rejected the model, with the likeliest fix."""
    text = str(exc).strip()
    hint = _STAGE_HINTS.get(stage, f"the {stage} step rejected the model: see the cause above")
    if where:
        stage += f" at {where}"
    for pattern, candidate in _EXPORT_HINTS:
        if pattern.search(text):
            hint = candidate
            break
    return ExportError(
        f"{stage} failed: {type(exc).__name__}: {first_line(exc)}", hint + "; --debug shows the full trace"
    )


def _last_user_line(graph_dump: str) -> str:
    """`small.py:79 if x.sum() > 0:` from the `# File: ... in forward, code: ...` comments torch
    prints in a failed export's graph: the last one is the statement it stopped at."""
    found = re.findall(r"# File: (\S+?):(\d+) in \w+, code: (.*)", graph_dump)
    if not found:
        return ""
    path, line, code = found[-1]
    return f"{Path(path).name}:{line} `{code.strip()}`"
