"""ExecuTorch's CortexMPassManager for the target's ISA: the graph onto CMSIS-NN kernels. One-input-
channel convolutions stay regular convolutions (conv_choice.py); with `--io int8`, an output that
was only requantized is returned as the int8 it was (int8_io.py)."""

from __future__ import annotations

from dataclasses import replace

from cmx_gen.common.errors import ExportError
from cmx_gen.lower import conv_choice, int8_io
from cmx_gen.lower.state import Lowering, Step
from cmx_gen.lower.steps.failures import lowering_error


def run(state: Lowering) -> Lowering:
    from executorch.backends.cortex_m.passes.cortex_m_pass_manager import CortexMPassManager

    io = state.io
    try:
        with conv_choice.one_channel_convs_as_conv():
            lowered = CortexMPassManager(state.edge.exported_program(), target_config=state.config).transform()
        if io:
            io = int8_io.drop_output_requantize(lowered, io)
    except ExportError:
        raise
    except Exception as exc:
        raise lowering_error(exc) from exc
    # --io int8: the program is fed what the caller's quantization of the float inputs gives.
    inputs = int8_io.quantize_inputs(state.exported.inputs, io) if io else state.exported.inputs
    return replace(state, lowered=lowered, io=io, program_inputs=inputs)


STEP = Step("cortex_m_passes", run, lambda state: f"lowering to cortex_m (CMSIS-NN) kernels for {state.target.core} ({state.target.isa})")
