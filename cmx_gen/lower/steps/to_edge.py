"""The quantized graph into ExecuTorch's edge dialect with the cortex_m compile config; with
`--io int8`, the program's boundary quantize/dequantize come off (int8_io.py)."""

from __future__ import annotations

import torch

from cmx_gen.common.errors import ExportError
from cmx_gen.lower.rewrites import int8_io
from cmx_gen.lower.state import Edge, Given, Quantized, Step
from cmx_gen.lower.steps.failures import lowering_error


def run(given: Given, quantized: Quantized) -> Edge:
    from executorch.backends.cortex_m.edge_compile_config import cortex_m_edge_compile_config
    from executorch.exir import to_edge

    try:
        program = torch.export.export(quantized.graph, given.exported.inputs)
        edge = to_edge(program, compile_config=cortex_m_edge_compile_config())
        io = int8_io.strip_boundaries(edge.exported_program()) if given.options.io == "int8" else None
    except ExportError:  # ours, already one line with its fix (int8_io refusing an output)
        raise
    except Exception as exc:
        raise lowering_error(exc) from exc
    return Edge(manager=edge, io=io)


STEP = Step("to_edge", run)
