"""The quantized graph into ExecuTorch's edge dialect with the cortex_m compile config; with
`--io int8`, the program's boundary quantize/dequantize come off (int8_io.py)."""

from __future__ import annotations

from dataclasses import replace

import torch

from cmx_gen.common.errors import ExportError
from cmx_gen.lower import int8_io
from cmx_gen.lower.state import Lowering, Step
from cmx_gen.lower.steps.failures import lowering_error


def run(state: Lowering) -> Lowering:
    from executorch.backends.cortex_m.edge_compile_config import cortex_m_edge_compile_config
    from executorch.exir import to_edge

    try:
        edge = to_edge(torch.export.export(state.quantized, state.exported.inputs), compile_config=cortex_m_edge_compile_config())
        io = int8_io.strip_boundaries(edge.exported_program()) if state.options.io == "int8" else None
    except ExportError:  # ours, already one line with its fix (int8_io refusing an output)
        raise
    except Exception as exc:
        raise lowering_error(exc) from exc
    return replace(state, edge=edge, io=io)


STEP = Step("to_edge", run)
