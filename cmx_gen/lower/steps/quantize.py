"""Quantize with the calibration set: CortexMQuantizer (less the --keep-fp32 parts, keep_fp32.py, and
the float islands of an earlier try, float_islands.py),
prepare_pt2e, one forward per sample, convert_pt2e; a concat's inputs requantized to its output's
parameters where the quantizer left them apart (concat.py); an activation's quantize narrowed to what it
can produce, so upstream fuses it (activation_range.py). The rewritten float graph stays as it was, for the
per-layer error."""

from __future__ import annotations

import copy

from cmx_gen.lower import activation_bits, keep_fp32, linear_per_channel, weight_bits
from cmx_gen.lower.host_models import layer_error
from cmx_gen.lower.ops import recurrent_graph
from cmx_gen.lower.rewrites import activation_range, concat
from cmx_gen.lower.state import Given, Quantized, Rewritten, Step
from cmx_gen.model.export import export_error
from cmx_gen.model.source import fresh


def run(given: Given, rewritten: Rewritten) -> Quantized:
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    graph = copy.deepcopy(rewritten.graph)  # prepare_pt2e edits the graph it is given
    kept = given.options.keep_fp32 + tuple(island.part for island in given.islands)
    narrow = weight_bits.annotator(graph, given.options)
    widen = activation_bits.annotator(graph, given.options)
    per_channel = linear_per_channel.annotate if given.options.per_channel_linear else lambda model: None
    quantizer = keep_fp32.quantizer(kept, graph, lambda model: (narrow(model), widen(model), per_channel(model)))
    try:
        prepared = prepare_pt2e(graph, quantizer)
        for sample in given.exported.calibration:
            prepared(*fresh(sample))
        quantized = convert_pt2e(prepared)
        concat.share_quantization(quantized)
        activation_range.narrow(quantized)
        scales = layer_error.output_scales(quantized)
        cells = recurrent_graph.cell_ranges(rewritten.graph, [fresh(sample) for sample in given.exported.calibration])
    except Exception as exc:
        raise export_error("quantization", exc) from exc
    return Quantized(graph=quantized, scales=scales, lstm_cells=cells)


STEP = Step("quantize", run, lambda given, _: f"calibrating on {len(given.exported.calibration)} samples")
