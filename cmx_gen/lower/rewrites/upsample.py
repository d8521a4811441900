"""Nearest upsampling of int8 images as cmx-gen's backend runs it (issue 53's U-Net).

`nn.Upsample(scale_factor=2)` / `F.interpolate(mode="nearest")` has no int8 kernel upstream: it stayed a
float island between a dequantize and a quantize, which cut the U-Net's backend call in two. Nearest
upsampling only picks values, so it is exact on int8: `to_int8` (after upstream's passes) takes
dequantize -> upsample -> quantize as `cmx::quantized_upsample_nearest`, after a 256-entry table from the
dequantize's parameters to the quantize's where they differ (tables.requantize_table: what the float graph
computes for each picked value). cmx-gen's backend runs it as strided copies: each source row's pixels
(C bytes each) written sw apart into each of its sh output rows (layers.py).
Integer scale factors on channels-last or contiguous images only; anything else stays the float island it was."""

from __future__ import annotations

from typing import Any, NamedTuple

import torch

from cmx_gen.lower.delegate.emit import is_int8
from cmx_gen.lower.fx_nodes import fx_args, op_name
from cmx_gen.lower.rewrites.image_layout import CHANNELS_LAST, placed_like

UPSAMPLE_OPS = ("aten::upsample_nearest2d",)
CONTIGUOUS = (0, 1, 2, 3)


def _source_index(size: int, out: int) -> torch.Tensor:
    """The source index of each output index, as torch's own nearest upsampling picks it."""
    grid = torch.arange(size, dtype=torch.float32).reshape(1, 1, size, 1)
    picked = torch.nn.functional.interpolate(grid, size=(out, 1), mode="nearest")
    return picked.reshape(-1).to(torch.int64)


@torch.library.custom_op("cmx::quantized_upsample_nearest", mutates_args=())
def quantized_upsample_nearest(x: torch.Tensor, size: list[int]) -> torch.Tensor:
    """Nearest upsampling of an int8 NCHW image to `size` (out H, out W), the rows and columns torch's
    float nearest upsampling picks."""
    rows = _source_index(x.shape[2], size[0])
    cols = _source_index(x.shape[3], size[1])
    return x.index_select(2, rows).index_select(3, cols).contiguous(memory_format=_format(x))


def _format(x: torch.Tensor) -> torch.memory_format:
    return (
        torch.channels_last
        if x.dim() == 4 and x.is_contiguous(memory_format=torch.channels_last)
        else torch.contiguous_format
    )


@quantized_upsample_nearest.register_fake
def _(x: torch.Tensor, size: list[int]) -> torch.Tensor:
    return x.new_empty((x.shape[0], x.shape[1], size[0], size[1])).contiguous(memory_format=_format(x))


class Geometry(NamedTuple):
    """An upsampling the backend copies: NHWC input (n, h, w, c) and the integer factors (sh, sw)."""

    n: int
    h: int
    w: int
    c: int
    sh: int
    sw: int


def _factors(shape_in: Any, shape_out: Any) -> tuple[int, int] | None:
    h, w, oh, ow = int(shape_in[2]), int(shape_in[3]), int(shape_out[2]), int(shape_out[3])
    if oh % h or ow % w:
        return None
    sh, sw = oh // h, ow // w
    if not (torch.equal(_source_index(h, oh), _repeat(h, sh)) and torch.equal(_source_index(w, ow), _repeat(w, sw))):
        return None
    return sh, sw


def _repeat(size: int, times: int) -> torch.Tensor:
    return torch.arange(size).repeat_interleave(times)


def geometry(node: torch.fx.Node) -> Geometry | None:
    """The copies of a `cmx::quantized_upsample_nearest`: None unless its int8 input and output are
    images laid out alike (channels-last, or contiguous) and each source row and column repeats a whole
    number of times."""
    x = fx_args(node)[0]
    val, out = x.meta["val"], node.meta["val"]
    if not (is_int8(x) and is_int8(node)) or val.dim() != 4:
        return None
    order = _copied_layout(val, out)
    if order is None:
        return None
    factors = _factors(val.shape, out.shape)
    if factors is None:
        return None
    n, c, h, w = (int(s) for s in val.shape)
    # a contiguous image is n * c one-byte-pixel images
    return Geometry(n, h, w, c, *factors) if order == CHANNELS_LAST else Geometry(n * c, h, w, 1, *factors)


def _copied_layout(val: Any, out: Any) -> tuple[int, ...] | None:
    """The memory order the backend copies an image in, when input and output share it: channels-last
    (an image of a convolution) or contiguous (tokens reshaped back to an image), as their bytes lie (a
    one-channel image lies alike in both, whatever dim order ExecuTorch gives it); else None."""
    order = next((order for order in (CHANNELS_LAST, CONTIGUOUS) if placed_like(val, order)), None)
    return order if order is not None and placed_like(out, order) else None


def _is_upsample(node: Any) -> bool:
    return isinstance(node, torch.fx.Node) and op_name(node) in UPSAMPLE_OPS


def to_int8(program: Any) -> None:
    """dequantize -> nearest upsampling -> quantize as the int8 `cmx::quantized_upsample_nearest` of the
    dequantize's input, requantized first by a table where the two parameters differ."""
    from cmx_gen.lower.ops.own_ops import drop_unused, qparams_of
    from cmx_gen.lower.ops.tables import requantize_table

    graph = program.graph_module.graph
    for q in list(graph.nodes):
        y_q = qparams_of(q, "quantize_per_tensor")
        up = fx_args(q)[0] if y_q is not None else None
        if y_q is None or not isinstance(up, torch.fx.Node) or not _is_upsample(up) or len(up.users) != 1:
            continue
        dq = fx_args(up)[0]
        x_q = qparams_of(dq, "dequantize_per_tensor", program)
        if (
            x_q is None
            or _factors(dq.meta["val"].shape, q.meta["val"].shape) is None
            or _copied_layout(dq.meta["val"], q.meta["val"]) is None
        ):
            continue  # the backend would not take it: the float island it was
        size = [int(s) for s in q.meta["val"].shape[2:]]
        x = fx_args(dq)[0]
        with graph.inserting_before(q):
            if x_q != y_q:
                table = graph.call_function(torch.ops.cmx.quantized_lut.default, (x, requantize_table(x_q, y_q)))
                table.meta = {**dq.meta, "val": x.meta["val"]}
                x = table
            made = graph.call_function(torch.ops.cmx.quantized_upsample_nearest.default, (x, size))
        made.meta = {**up.meta, "val": q.meta["val"]}
        q.replace_all_uses_with(made)
        graph.erase_node(q)
        graph.erase_node(up)
        drop_unused(graph, [dq])
    graph.lint()
    program.graph_module.recompile()
