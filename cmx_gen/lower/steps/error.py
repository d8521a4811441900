"""The INT8 program's error against the float model: outputs on an evenly spread subset of the
calibration set (the Python reference kernels take ~0.6 s a sample for DS-CNN), and per layer
(layer_error.py)."""

from __future__ import annotations

from cmx_gen.lower.host_models import layer_error
from cmx_gen.lower.host_models.reference import merge_diffs, run_references
from cmx_gen.lower.rewrites import int8_io
from cmx_gen.lower.state import Errors, Given, Lowered, Quantized, Referenced, Rewritten, Step
from cmx_gen.model.export import export_error
from cmx_gen.model.source import Inputs, call_float

ERROR_SAMPLES = 32  # calibration samples the INT8-vs-float error is measured on


def subset(calibration: tuple[Inputs, ...]) -> tuple[Inputs, ...]:
    step = max(1, len(calibration) // ERROR_SAMPLES)
    return calibration[::step][:ERROR_SAMPLES]


def run(given: Given, rewritten: Rewritten, quantized: Quantized, lowered: Lowered, referenced: Referenced) -> Errors:
    io, module, isa = lowered.io, given.exported.module, given.target.isa
    outputs, references, per_layer, diffs = [], [], [], []
    try:
        for sample in subset(given.exported.calibration):
            runs = run_references(
                referenced.runnable, int8_io.quantize_inputs(sample, io) if io else sample, isa, record=True
            )
            per_layer.append((sample, runs.values))
            diffs.append(runs.diffs)
            outputs.append((call_float(module, sample), runs.kernel_exact))
            references.append((runs.kernel_exact, runs.python))
    except Exception as exc:
        raise export_error("running the lowered program on calibration data", exc) from exc
    layers = layer_error.layer_errors(rewritten.graph, quantized.scales, referenced.runnable, per_layer)
    return Errors(
        calibration_outputs=tuple(outputs),
        calibration_references=tuple(references),
        layers=tuple(layers),
        diffs=merge_diffs(*diffs),
    )


STEP = Step(
    "error",
    run,
    lambda given, *_: f"per-layer error against the float model on {len(subset(given.exported.calibration))} samples",
)
