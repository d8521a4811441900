"""cmx-gen's own graph passes, in the order they run after upstream's CortexMPassManager (a list, as
its `pass_list` is). Each edits the lowered program in place; a pass marked `backend_only` makes ops
only cmx-gen's backend runs, so it is skipped with `--no-delegate`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.export import ExportedProgram

from cmx_gen.common.errors import ExportError
from cmx_gen.lower import float_islands, linear_per_channel
from cmx_gen.lower.activation_bits import any_int16
from cmx_gen.lower.facts import LowerOptions
from cmx_gen.lower.ops import own_ops, recurrent_graph, s16_ops, tables
from cmx_gen.lower.rewrites import concat, image_layout, one_channel, transpose_conv, upsample
from cmx_gen.lower.state import Quantized, Rewritten


@dataclass(frozen=True)
class OwnPass:
    name: str
    run: Callable[[ExportedProgram, Rewritten, Quantized], None]
    backend_only: bool = True


PASSES: tuple[OwnPass, ...] = (
    OwnPass("recurrent layers as one int8 call", lambda p, r, q: recurrent_graph.to_int8(p, q.lstm_cells)),
    OwnPass("LayerNorm, mean, bmm on int8", lambda p, r, q: own_ops.to_int8(p)),
    OwnPass("element-wise runs as tables", lambda p, r, q: tables.to_int8(p)),
    OwnPass("nearest upsampling on int8", lambda p, r, q: upsample.to_int8(p)),
    OwnPass("transposed convolutions of stride = kernel as 1x1 ones", lambda p, r, q: transpose_conv.to_rows(p)),
    OwnPass("concat in memory order", lambda p, r, q: concat.to_int8(p)),
    OwnPass("float ops left on int8 named", lambda p, r, q: float_islands.leftover(p, r.graph)),
    OwnPass("images and element-wise operands laid out", lambda p, r, q: image_layout.lay_out(p), backend_only=False),
    OwnPass(
        "one-channel images copied plain for portable kernels", lambda p, r, q: one_channel.copy_for_portable_readers(p)
    ),
)


def before_upstream(program: ExportedProgram, cells: dict[str, float], options: LowerOptions) -> None:
    """What cmx-gen's ops take before upstream's passes, which take int8 per-tensor patterns only: the int16
    layers as its s16 ops (recurrent_graph.to_int16, s16_ops.to_int16), per-channel linear layers
    (linear_per_channel.to_int8); the signature then names what the graph returns. Both run on cmx-gen's
    backend only."""
    int16, per_channel = any_int16(options), options.per_channel_linear
    if (int16 or per_channel) and not options.delegate:
        what = "16-bit activations" if int16 else "per-channel linear layers"
        raise ExportError(
            f"{what} run on cmx-gen's backend only (the cortex_m kernels are int8, one scale a tensor)",
            "drop --no-delegate (delegate = false), or lower without --precision int16 / --per-channel-linear",
        )
    if int16:
        recurrent_graph.to_int16(program, cells)
        s16_ops.to_int16(program)
    if per_channel:
        linear_per_channel.to_int8(program)
    name_outputs(program)


def run_all(program: ExportedProgram, rewritten: Rewritten, quantized: Quantized, delegate: bool) -> None:
    """PASSES in order on `program` (with `delegate` False, only those not `backend_only`)."""
    for own in PASSES:
        if delegate or not own.backend_only:
            own.run(program, rewritten, quantized)
    name_outputs(program)


def name_outputs(program: ExportedProgram) -> None:
    """A pass that replaced a node the program returns (with --io int8, the output's quantize that
    the int8 LayerNorm took over) leaves the signature naming the old node, which delegation refuses:
    the signature names what the graph returns."""
    from torch.export.graph_signature import TensorArgument

    returned = program.graph_module.graph.output_node().args[0]
    for spec, node in zip(program.graph_signature.output_specs, returned):
        if isinstance(spec.arg, TensorArgument) and isinstance(node, torch.fx.Node) and spec.arg.name != node.name:
            spec.arg = TensorArgument(name=node.name)
