"""The INT8 program's error against the float model: outputs on an evenly spread subset of the
calibration set (the Python reference kernels take ~0.6 s a sample for DS-CNN), and per layer
(layer_error.py)."""

from __future__ import annotations

from dataclasses import replace

from cmx_gen.lower import int8_io, layer_error
from cmx_gen.lower.reference import run_references
from cmx_gen.lower.state import Lowering, Step
from cmx_gen.model.export import export_error
from cmx_gen.model.source import Inputs, call

ERROR_SAMPLES = 32  # calibration samples the INT8-vs-float error is measured on


def subset(calibration: tuple[Inputs, ...]) -> tuple[Inputs, ...]:
    step = max(1, len(calibration) // ERROR_SAMPLES)
    return calibration[::step][:ERROR_SAMPLES]


def run(state: Lowering) -> Lowering:
    exact, io = state.exact, state.io
    module = state.exported.source.module
    outputs, references, per_layer = [], [], []
    try:
        for sample in subset(state.exported.calibration):
            exact.record = {}
            runs = run_references(state.runnable, int8_io.quantize_inputs(sample, io) if io else sample, exact)
            per_layer.append((sample, exact.record))
            exact.record = None
            outputs.append((call(module, sample), runs.kernel_exact))
            references.append((runs.kernel_exact, runs.python))
    except Exception as exc:
        raise export_error("running the lowered program on calibration data", exc) from exc
    layers = layer_error.layer_errors(state.float_graph, state.scales, state.runnable, per_layer)
    return replace(state, calibration_outputs=tuple(outputs), calibration_references=tuple(references),
                   layers=tuple(layers))


STEP = Step("error", run,
            lambda state: f"per-layer error against the float model on {len(subset(state.exported.calibration))} samples")
