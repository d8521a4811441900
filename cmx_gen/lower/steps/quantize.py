"""Quantize with the calibration set: CortexMQuantizer (less the --keep-fp32 parts, keep_fp32.py),
prepare_pt2e, one forward per sample, convert_pt2e. The float graph is kept for the per-layer error."""

from __future__ import annotations

import copy
from dataclasses import replace

from cmx_gen.lower import keep_fp32, layer_error
from cmx_gen.lower.state import Lowering, Step
from cmx_gen.model.export import export_error
from cmx_gen.model.source import fresh


def run(state: Lowering) -> Lowering:
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    graph = state.graph
    float_graph = copy.deepcopy(graph)  # prepare_pt2e edits `graph`
    quantizer = keep_fp32.quantizer(state.options.keep_fp32, graph)
    try:
        prepared = prepare_pt2e(graph, quantizer)
        for sample in state.exported.calibration:
            prepared(*fresh(sample))
        quantized = convert_pt2e(prepared)
        scales = layer_error.output_scales(quantized)
    except Exception as exc:
        raise export_error("quantization", exc) from exc
    return replace(state, graph=None, float_graph=float_graph, quantized=quantized, scales=scales)


STEP = Step("quantize", run, lambda state: f"calibrating on {len(state.exported.calibration)} samples")
