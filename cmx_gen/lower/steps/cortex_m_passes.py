"""ExecuTorch's CortexMPassManager for the target's ISA: the graph onto CMSIS-NN kernels, then
cmx-gen's own passes in their list (own_passes.py); the int16 layers become cmx-gen's s16 ops first
(s16_ops.py), as upstream's passes take int8 patterns only. One-input-channel convolutions stay regular
convolutions (conv_choice.py); with `--io int8`, an output that was only requantized is returned as
the int8 it was (int8_io.py). A pass that fails on a node makes that node a float
island (failures.py, float_islands.py)."""

from __future__ import annotations

import copy
import functools

import torch

from cmx_gen.common.errors import ExportError
from cmx_gen.lower.activation_bits import any_int16
from cmx_gen.lower.ops import own_passes, s16_ops
from cmx_gen.lower.rewrites import conv_choice, int8_io
from cmx_gen.lower.state import Edge, Given, Lowered, Quantized, Rewritten, Step
from cmx_gen.lower.steps.failures import lowering_error


def _failed_node(given: Given, edge: Edge, cells: dict[str, float], pass_name: str, node: str) -> torch.fx.Node | None:
    """The node `pass_name` failed on, in the graph it was given: the passes before it run again on a
    fresh copy (only when one failed, so a program that lowers is made exactly as before)."""
    from executorch.backends.cortex_m.passes.cortex_m_pass_manager import CortexMPassManager

    passes = CortexMPassManager(None, target_config=given.config).passes
    names = [p.__name__ for p in passes]
    if pass_name not in names:
        return None
    program = copy.deepcopy(edge.manager.exported_program())
    own_passes.before_upstream(program, cells, given.options)
    before = passes[: names.index(pass_name)]
    try:
        with conv_choice.one_channel_convs_as_conv():
            program = CortexMPassManager(program, passes=before, target_config=given.config).transform()
    except Exception:
        return None
    return next((n for n in program.graph.nodes if n.name == node), None)


def run(given: Given, rewritten: Rewritten, quantized: Quantized, edge: Edge) -> Lowered:
    from executorch.backends.cortex_m.passes.cortex_m_pass_manager import CortexMPassManager

    io = edge.io
    program = copy.deepcopy(edge.manager.exported_program())  # the passes transform the graph they are given
    try:
        own_passes.before_upstream(program, quantized.lstm_cells, given.options)
        with conv_choice.one_channel_convs_as_conv():
            lowered = CortexMPassManager(program, target_config=given.config).transform()
        own_passes.run_all(lowered, rewritten, quantized, given.options.delegate)
        if any_int16(given.options):
            s16_ops.check_no_int16_left(lowered)
        if io:
            io = int8_io.drop_output_requantize(lowered, io)
    except ExportError:
        raise
    except Exception as exc:
        raise lowering_error(
            exc, functools.partial(_failed_node, given, edge, quantized.lstm_cells), rewritten.graph
        ) from exc
    # --io int8: the program is fed what the caller's quantization of the float inputs gives.
    inputs = int8_io.quantize_inputs(given.exported.inputs, io) if io else given.exported.inputs
    return Lowered(program=lowered, io=io, inputs=inputs)


STEP = Step(
    "cortex_m_passes",
    run,
    lambda given, *_: f"lowering to cortex_m (CMSIS-NN) kernels for {given.target.core} ({given.target.isa})",
)
