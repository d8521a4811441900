"""to_executorch: the lowered program as .pte bytes, and which graph node each instruction runs
(instructions.py), for the report's operator table."""

from __future__ import annotations

from dataclasses import replace

from cmx_gen.lower.state import Lowering, Step
from cmx_gen.model.export import export_error


def run(state: Lowering) -> Lowering:
    from executorch.backends.cortex_m.edge_compile_config import cortex_m_edge_compile_config
    from executorch.exir import EdgeProgramManager

    try:
        program = EdgeProgramManager(state.lowered, compile_config=cortex_m_edge_compile_config()).to_executorch()
        pte = program.buffer
    except Exception as exc:
        raise export_error("serialization (to_executorch)", exc) from exc
    return replace(state, program=program, pte=pte)


STEP = Step("serialize", run)
