"""Quantize and lower a model to a cortex_m `.pte` with ExecuTorch's own APIs.

export -> prepare_pt2e(CortexMQuantizer) -> calibrate -> convert_pt2e -> export -> to_edge with
`cortex_m_edge_compile_config()` -> `CortexMPassManager` (for the target's ISA) -> to_executorch.

The scratch buffers CortexMPassManager plans depend on the ISA (a pte lowered for DSP cores
corrupts memory on an M55 and the reverse fails), so the target is recorded in every output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import torch

from cmx_gen import progress
from cmx_gen.noise import quiet_executorch, quiet_third_party
from cmx_gen.targets import TARGETS
from cmx_gen.errors import ExportError, ModelSourceError, TargetError
from cmx_gen.model_source import Inputs, ModelSource, call



ERROR_SAMPLES = 32  # calibration samples the INT8-vs-float error is measured on


@dataclass
class Target:
    core: str  # "cortex-m55"
    isa: str  # "MVE" | "DSP" | "SCALAR"

    def to_dict(self) -> dict[str, str]:
        return {"core": self.core, "isa": self.isa}


def target_config(core: str) -> Any:
    """executorch's CortexMTargetConfig for a `cortex-mXX` name (one-line error otherwise)."""
    quiet_third_party()
    from executorch.backends.cortex_m.target_config import CortexMTargetConfig

    if core not in TARGETS:
        raise TargetError(f"unknown target {core!r}", f"use one of: {', '.join(TARGETS)}")
    return CortexMTargetConfig.from_target_string(core)


def resolve_target(core: str) -> Target:
    return Target(core=core, isa=target_config(core).backend.name)


@dataclass
class LoweredModel:
    """The result of lowering: program bytes plus what is needed to check it later."""

    pte: bytes
    target: Target
    sample_inputs: Inputs
    reference_outputs: tuple[torch.Tensor, ...]
    float_outputs: tuple[torch.Tensor, ...]
    calibration_outputs: list[tuple[tuple[torch.Tensor, ...], tuple[torch.Tensor, ...]]] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)


_EXPORT_HINTS = [
    (re.compile(r"data.dependent|GuardOnDataDependent|could not guard", re.I),
     "forward branches on tensor values: replace Python if/while on tensors with torch.where/torch.cond"),
    (re.compile(r"\.item\(\)|tolist|numpy", re.I), "forward converts tensors to Python values: keep everything a tensor"),
    (re.compile(r"not supported|Unsupported", re.I), "forward uses something torch.export cannot trace: see the cause above"),
    (re.compile(r"size mismatch|shape|Expected .* dim", re.I), "the example inputs do not match what forward expects: check --input-shape"),
]


def _first_line(exc: BaseException, limit: int = 200) -> str:
    """The first non-empty line of an exception's message (its type name when it has none)."""
    first = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
    return first if len(first) <= limit else first[:limit] + "..."


def _export_error(stage: str, exc: Exception) -> ExportError:
    text = str(exc).strip()
    first = _first_line(exc)
    hint = "make forward traceable by torch.export (tensor-only inputs and outputs, no data-dependent Python control flow)"
    for pattern, candidate in _EXPORT_HINTS:
        if pattern.search(text):
            hint = candidate
            break
    return ExportError(f"{stage} failed: {type(exc).__name__}: {first}", hint + "; --debug shows the full trace")


def lower(source: ModelSource, core: str) -> LoweredModel:
    """Quantize with the calibration set and lower for one core; compute reference outputs."""
    import time

    config = target_config(core)
    target = Target(core=core, isa=config.backend.name)
    from executorch.backends.cortex_m.edge_compile_config import cortex_m_edge_compile_config
    from executorch.backends.cortex_m.passes.cortex_m_pass_manager import CortexMPassManager
    from executorch.backends.cortex_m.quantizer.quantizer import CortexMQuantizer
    from executorch.exir import EdgeProgramManager, to_edge
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    quiet_executorch()  # executorch resets its logger level on import

    assert source.module is not None and source.example_inputs is not None
    inputs = source.example_inputs
    timings: dict[str, float] = {}
    started = time.monotonic()

    try:
        float_outputs = call(source.module, inputs)
    except Exception as exc:
        raise ModelSourceError(
            f"the model fails on its example inputs: {type(exc).__name__}: {_first_line(exc)}",
            "check --input-shape or example_inputs() against what forward expects",
        ) from exc

    with progress.step(f"exporting for {core} ({target.isa})"):
        try:
            graph = torch.export.export(source.module, inputs).module(check_guards=False)
        except Exception as exc:
            raise _export_error("torch.export", exc) from exc
    timings["export_s"] = time.monotonic() - started

    with progress.step(f"calibrating on {len(source.calibration)} samples"):
        try:
            prepared = prepare_pt2e(graph, CortexMQuantizer())
            for sample in source.calibration:
                prepared(*sample)
            quantized = convert_pt2e(prepared)
        except Exception as exc:
            raise _export_error("quantization", exc) from exc
    timings["calibrate_s"] = time.monotonic() - started - sum(timings.values())

    with progress.step("lowering to cortex_m (CMSIS-NN) kernels"):
        try:
            edge = to_edge(torch.export.export(quantized, inputs), compile_config=cortex_m_edge_compile_config())
            lowered = CortexMPassManager(edge.exported_program(), target_config=config).transform()
        except Exception as exc:
            raise _export_error("lowering", exc) from exc
        # Reference outputs come from the lowered program itself (cortex_m ops have Python
        # implementations), before to_executorch turns the graph into out-variants.
        runnable = lowered.module()
        try:
            reference = call(runnable, inputs)
        except Exception as exc:
            raise ExportError(
                f"the lowered program does not run: {type(exc).__name__}: {_first_line(exc)} "
                "(an op was left on int8 data without a cortex_m kernel)",
                "place activations directly after a conv/linear layer, or replace the op named above; --debug shows where",
            ) from exc
        # The Python reference kernels are slow (~0.6 s a sample for DS-CNN): measure the INT8
        # error on an evenly spread subset of the calibration set.
        step = max(1, len(source.calibration) // ERROR_SAMPLES)
        subset = source.calibration[::step][:ERROR_SAMPLES]
        try:
            calibration_outputs = [(call(source.module, s), call(runnable, s)) for s in subset]
        except Exception as exc:
            raise _export_error("running the lowered program on calibration data", exc) from exc
        try:
            pte = EdgeProgramManager(lowered, compile_config=cortex_m_edge_compile_config()).to_executorch().buffer
        except Exception as exc:
            raise _export_error("serialization (to_executorch)", exc) from exc
    timings["lower_s"] = time.monotonic() - started - sum(timings.values())

    return LoweredModel(
        pte=pte,
        target=target,
        sample_inputs=inputs,
        reference_outputs=reference,
        float_outputs=float_outputs,
        calibration_outputs=calibration_outputs,
        timings=timings,
    )
