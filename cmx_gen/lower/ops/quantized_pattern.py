"""The `dequantize -> layer [-> activation] -> quantize` pattern that cmx-gen's own ops take over in a
lowered program (the int16 layers, the per-channel linear layers, the recurrent layers): where it ends, and
the op that takes its place."""

from __future__ import annotations

import torch

from cmx_gen.lower.fx_nodes import op_name

# The activations a layer's output quantize folds in (its range is the clamp): they go with the layer.
FUSED_ACTIVATIONS = ("aten::relu", "aten::hardtanh", "aten::clamp")


def fused_end(first: torch.fx.Node) -> tuple[torch.fx.Node, torch.fx.Node]:
    """The last node of a layer whose values `first` carries (it, or the one fused activation reading it
    alone) and the quantize after it."""
    after = next(iter(first.users)) if len(first.users) == 1 else first
    last = after if op_name(after) in FUSED_ACTIVATIONS and len(after.users) == 1 else first
    return last, next(iter(last.users))


def take_over(
    graph: torch.fx.Graph, made: torch.fx.Node, node: torch.fx.Node, q: torch.fx.Node, gone: list[torch.fx.Node]
) -> None:
    """`made` in place of the pattern of `node` ending at the quantize `q`: it takes `node`'s provenance and
    `q`'s value, `q`'s readers read it, and each of `gone` nothing reads any more is erased, in order."""
    made.meta = {**node.meta, "val": q.meta["val"]}
    q.replace_all_uses_with(made)
    for old in dict.fromkeys(gone):
        if isinstance(old, torch.fx.Node) and not old.users:
            graph.erase_node(old)
