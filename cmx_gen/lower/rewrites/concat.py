"""`torch.cat` of int8 tensors as cmx-gen's backend runs it (issue 53's U-Net).

Two things go wrong with the `aten::cat` the cortex_m lowering leaves between int8 layers:
- ExecuTorch's portable `cat.out` copies `size(dim) x trailing` elements per leading index of the
  *logical* shape whatever the dim order, so a channel concat of channels-last images interleaves
  the wrong bytes on the target (the host's torch.cat is right: a FAIL at `aten::cat.out`);
- upstream's QDQ folding keeps one set of quantization parameters for the whole concat, so a branch
  observed apart from the others (a skip connection, the output of a float upsample) is taken at the
  wrong scale.

`share_quantization` requantizes, in the quantized float graph, each input whose (scale, zero point)
differ from the concat's output (a quantize -> dequantize pair: a 256-entry table once lowered,
tables.py); `to_int8` replaces the int8 concat by `cmx::quantized_cat`, which only cmx-gen's
backend runs: one strided copy per input in the tensors' own memory order (layers.py), an input in
another order first transposed into the output's (image_layout.py)."""

from __future__ import annotations

import math
from typing import Any

import torch

from cmx_gen.lower.delegate.emit import element_width, is_int16
from cmx_gen.lower.fx_nodes import fx_args, op_name
from cmx_gen.lower.rewrites.image_layout import (
    CHANNELS_LAST,
    in_memory_order,
    in_order,
    laid_out,
    placed_like,
    reads_nhwc,
)

CAT_OPS = ("aten::cat", "aten::concat", "aten::concatenate")


@torch.library.custom_op("cmx::quantized_cat", mutates_args=())
def quantized_cat(tensors: list[torch.Tensor], dim: int, dim_order: list[int]) -> torch.Tensor:
    """The concat of int8 (or int16) tensors of one quantization (their requantization is a table before it),
    written in memory order `dim_order`. The order is an argument, not derived from the inputs'
    strides: ExecuTorch derives each node's dim order again when it delegates and serializes, and
    torch.cat of inputs whose orders differ but place their bytes alike (a one-channel image beside a
    channels-last one) is contiguous, while the backend writes the order chosen here (fuzzer seed
    7010: the output declared contiguous, written channels-last, FAIL 149 LSB on QEMU)."""
    return in_memory_order(torch.cat(tensors, dim), dim_order)


@quantized_cat.register_fake
def _(tensors: list[torch.Tensor], dim: int, dim_order: list[int]) -> torch.Tensor:
    return in_memory_order(torch.cat([torch.empty_like(t) for t in tensors], dim), dim_order)


def runs(node: torch.fx.Node) -> tuple[int, tuple[int, ...], int] | None:
    """A concat in its tensors' memory order: (outer count, each input's run of bytes, the output's
    run); None when an input is not an int8 (or int16) tensor laid out in the output's order."""
    tensors, dim = fx_args(node)[0], fx_args(node)[1] if len(fx_args(node)) > 1 else 0
    out = node.meta["val"]
    dim = int(dim) % out.dim()
    order = [int(d) for d in out.dim_order()]
    width = element_width(node, *fx_args(node)[0])
    if not width or not all(placed_like(t.meta["val"], tuple(order)) for t in tensors):
        return None
    at = order.index(dim)

    def run_of(val: torch.Tensor) -> int:
        return width * math.prod(int(val.shape[d]) for d in order[at:])

    return math.prod(int(out.shape[d]) for d in order[:at]), tuple(run_of(t.meta["val"]) for t in tensors), run_of(out)


def share_quantization(graph: torch.fx.GraphModule) -> None:
    """In the quantized float graph (convert_pt2e's): each concat input dequantized with other
    parameters than the quantize after the concat is requantized to them first (dequantize ->
    quantize -> dequantize), which changes no value the float graph computes (the quantize after the
    concat rounds each element alike), so upstream's folding, which keeps one set of parameters for a
    concat, folds a true one. The quantize -> dequantize pair becomes a table (tables.py)."""
    q_ops = torch.ops.quantized_decomposed
    for node in list(graph.graph.nodes):
        if node.target not in (torch.ops.aten.cat.default, torch.ops.aten.concat.default) or len(node.users) != 1:
            continue
        after = next(iter(node.users))
        if after.target != q_ops.quantize_per_tensor.default:
            continue
        out_q = tuple(after.args[1:])
        inputs = list(node.args[0])
        for k, x in enumerate(inputs):
            if not isinstance(x, torch.fx.Node) or x.target != q_ops.dequantize_per_tensor.default:
                continue
            if tuple(x.args[1:3]) == out_q[:2]:
                continue
            with graph.graph.inserting_before(node):
                q = graph.graph.call_function(q_ops.quantize_per_tensor.default, (x, *out_q))
                dq = graph.graph.call_function(q_ops.dequantize_per_tensor.default, (q, *out_q))
            q.meta, dq.meta = dict(x.meta), dict(x.meta)  # the input's source line
            inputs[k] = dq
        node.args = (inputs, *node.args[1:])
    graph.graph.lint()
    graph.recompile()


def to_int8(program: Any) -> None:
    """Each int8 concat as `cmx::quantized_cat` (its inputs share its quantization: share_quantization);
    an int16 one likewise where its inputs lie in its order already (cmx_transpose_s8 moves bytes)."""
    graph = program.graph_module.graph
    for node in list(graph.nodes):
        if op_name(node) not in CAT_OPS or not element_width(node, *fx_args(node)[0]):
            continue
        tensors, dim = fx_args(node)[0], (fx_args(node)[1] if len(fx_args(node)) > 1 else 0)
        if any(t.op != "call_function" for t in tensors):
            continue  # a constant (a class token) is no tensor of the working memory: the portable cat
        order = _order(node)
        if is_int16(node) and not all(placed_like(t.meta["val"], order) for t in tensors):
            continue
        node.meta["val"] = laid_out(node.meta["val"], order)
        tensors = [in_order(t, order, node) for t in tensors]
        node.args = (tensors, *node.args[1:])
        assert runs(node) is not None, node.name
        with graph.inserting_before(node):
            made = graph.call_function(torch.ops.cmx.quantized_cat.default, (list(tensors), int(dim), list(order)))
        made.meta = dict(node.meta)
        node.replace_all_uses_with(made)
        graph.erase_node(node)
    graph.lint()
    program.graph_module.recompile()


def _order(cat: torch.fx.Node) -> tuple[int, ...]:
    """The memory order the concat writes: channels-last when a convolution or a pool reads it (an
    image), else the order its output has. An input in another order is transposed into it first (a
    branch that went through a reshape, an attention's tokens back to an image, is contiguous while the
    skip beside it is channels-last)."""
    val = cat.meta["val"]
    if val.dim() == 4 and any(reads_nhwc(user) for user in cat.users):
        return CHANNELS_LAST
    return tuple(int(d) for d in val.dim_order())
