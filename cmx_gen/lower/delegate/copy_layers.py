"""Layers of cmx-gen's backend that are strided copies (copy_region records, memcpy in the runtime):
a concat (one copy a part), a nearest upsampling (one a row and copy), a permute that keeps the last
dimension last (an attention's head split and merge: one a row of the output's leading dimensions), and
a select or slice (a sequence's last step: one); and the int8 permutes that are a batch of 2-D transposes
(a token-mixing `x.transpose(1, 2)`: cmx_transpose_s8)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import torch

from cmx_gen.lower.delegate.emit import (
    Emit,
    element_width,
    is_int8,
    is_int16,
    permute_transpose_shape,
    transpose_shape,
    view_transpose_shape,
)
from cmx_gen.lower.delegate.kernel_choice import node_val as _val
from cmx_gen.lower.delegate.plan import Layer
from cmx_gen.lower.fx_nodes import fx_args, op_name
from cmx_gen.lower.rewrites import concat, transpose_conv, upsample


def _cat(node: torch.fx.Node, emit: Emit) -> tuple[Layer, ...]:
    """cmx::quantized_cat: each input's runs copied beside the others' (copy_region), in memory order."""
    found = concat.runs(node)
    assert found is not None, node.name
    outer, runs, out_run = found
    records, at = [], 0
    for tensor, run in zip(fx_args(node)[0], runs):
        if run:
            fields = {"input": emit.operand(tensor), "input_at": 0, "output": emit.operand(node), "output_at": at}
            fields.update(rows=outer, row_bytes=run, input_stride=run, output_stride=out_run)
            records.append(Layer("copy_region", fields, node=node.name))
        at += run
    return tuple(records)


# A permute that keeps the last dimension last (an attention's head split and merge) as strided copies:
# one copy_region a row of the output's leading dimensions, at most this many.
PERMUTES = ("aten::permute_copy", "cortex_m::transpose")
MAX_PERMUTE_RECORDS = 64


def permute_runs(node: torch.fx.Node) -> list[dict[str, int]] | None:
    """The copy_region fields (less input and output) of a permute of a contiguous int8 (or int16) tensor into a
    contiguous one that keeps its last dimension last: for each index of the output's leading dims
    (those of size 1 left out), its second-last dimension's rows of last-dimension runs; None for any
    other permute."""
    x = fx_args(node)[0]
    xv, out = _val(x), _val(node)
    n = xv.dim()
    perm = [int(p) % n for p in fx_args(node)[1]]
    plain = [list(v.dim_order()) == list(range(n)) for v in (xv, out)]
    width = element_width(x, node)
    if n < 2 or perm[-1] != n - 1 or not all(plain) or not width:
        return None
    # the input's strides in bytes, contiguous
    strides = [width * math.prod(int(d) for d in xv.shape[k + 1 :]) for k in range(n)]
    # (size, input stride) of each output dimension in output order, size-1 ones left out
    dims = [(int(xv.shape[p]), strides[p]) for p in perm[:-1] if int(xv.shape[p]) != 1] or [(1, 0)]
    (rows, row_stride), run = dims[-1], width * int(xv.shape[-1])
    outer = dims[:-1]
    if math.prod(size for size, _ in outer) > MAX_PERMUTE_RECORDS:
        return None
    records = []
    for k, index in enumerate(itertools.product(*(range(size) for size, _ in outer))):
        at = sum(i * stride for i, (_, stride) in zip(index, outer))
        fields = {"input_at": at, "output_at": k * rows * run, "rows": rows, "row_bytes": run}
        records.append({**fields, "input_stride": row_stride, "output_stride": run})
    return records


def permute_plan(node: torch.fx.Node) -> object:
    """How the backend moves a permute's bytes: copy runs (permute_runs), an int8 batch of transposes
    (permute_transpose_shape), or None (it stays outside)."""
    runs = permute_runs(node)
    if runs is not None:
        return runs
    return permute_transpose_shape(node) if is_int8(node) and is_int8(fx_args(node)[0]) else None


def transpose_layer(node: torch.fx.Node, emit: Emit, shape: tuple[int, int, int]) -> Layer:
    """cmx_transpose_s8: memory [batches][rows][cols] to [batches][cols][rows]."""
    batches, rows, cols = shape
    fields = {"input": emit.operand(fx_args(node)[0]), "output": emit.operand(node)}
    return Layer("transpose", fields | {"batches": batches, "rows": rows, "cols": cols}, node=node.name)


def _permute(node: torch.fx.Node, emit: Emit) -> tuple[Layer, ...]:
    """aten::permute_copy / cortex_m::transpose: strided copies (keeping the last dimension last) or a transpose."""
    runs = permute_runs(node)
    if runs is None:
        shape = permute_transpose_shape(node)
        assert shape is not None, node.name
        return (transpose_layer(node, emit, shape),)
    x = fx_args(node)[0]
    return tuple(
        Layer("copy_region", {"input": emit.operand(x), "output": emit.operand(node), **fields}, node=node.name)
        for fields in runs
    )


def _upsample(node: torch.fx.Node, emit: Emit) -> tuple[Layer, ...]:
    """cmx::quantized_upsample_nearest of an NHWC image: for each source row, each of its sh output
    rows and each of the sw copies of a pixel, the row's w pixels (c bytes each) written sw apart."""
    g = upsample.geometry(node)
    assert g is not None, node.name
    x, records = fx_args(node)[0], []
    out_row = g.w * g.sw * g.c
    for row in range(g.n * g.h):
        for dy in range(g.sh):
            for dx in range(g.sw):
                fields = {"input": emit.operand(x), "input_at": row * g.w * g.c, "output": emit.operand(node)}
                fields.update(output_at=(row * g.sh + dy) * out_row + dx * g.c, rows=g.w, row_bytes=g.c)
                fields.update(input_stride=g.c, output_stride=g.sw * g.c)
                records.append(Layer("copy_region", fields, node=node.name))
    return tuple(records)


def _depth_to_space(node: torch.fx.Node, emit: Emit) -> tuple[Layer, ...]:
    """cmx::quantized_depth_to_space of an NHWC image: for each input row and each i of the block's kh,
    the row's w runs of kw x c bytes (channels (i kw .. i kw + kw - 1) x c of each pixel) to output row
    kh row + i, side by side."""
    g = transpose_conv.geometry(node)
    assert g is not None, node.name
    x, records = fx_args(node)[0], []
    pixel, run = g.kh * g.kw * g.c, g.kw * g.c
    for row in range(g.n * g.h):
        for i in range(g.kh):
            fields = {"input": emit.operand(x), "input_at": row * g.w * pixel + i * run, "output": emit.operand(node)}
            fields.update(output_at=(row * g.kh + i) * g.w * run, rows=g.w, row_bytes=run)
            fields.update(input_stride=pixel, output_stride=run)
            records.append(Layer("copy_region", fields, node=node.name))
    return tuple(records)


# A part of a tensor along one dimension (a sequence's last step: `y[:, -1]`) as one strided copy.
SELECTIONS = ("aten::select_copy", "aten::slice_copy")


def selection_run(node: torch.fx.Node) -> dict[str, int] | None:
    """The copy_region fields (less input and output) of a select or a slice of step 1 between contiguous
    int8 or int16 tensors: the dimensions before it are the rows, the part its row; None for any other."""
    if op_name(node) not in SELECTIONS:
        return None
    x = fx_args(node)[0]
    xv, out = _val(x), _val(node)
    width = element_width(x, node)
    n = xv.dim()
    if not width or n < 1 or any(list(v.dim_order()) != list(range(v.dim())) for v in (xv, out)):
        return None
    args = fx_args(node)
    dim, size = int(args[1]) % n, int(xv.shape[int(args[1]) % n])
    if op_name(node) == "aten::select_copy":
        first, count = int(args[2]) % size, 1
    else:
        start, end, step = (int(args[k]) if len(args) > k and args[k] is not None else None for k in (2, 3, 4))
        first, stop, _ = slice(start, end).indices(size)
        count = max(0, stop - first)
        if step not in (None, 1) or count == 0:
            return None
    inner = width * math.prod(int(d) for d in xv.shape[dim + 1 :])
    rows = math.prod(int(d) for d in xv.shape[:dim])
    return {"input_at": first * inner, "output_at": 0, "rows": rows, "row_bytes": count * inner} | {
        "input_stride": size * inner,
        "output_stride": count * inner,
    }


def _selection(node: torch.fx.Node, emit: Emit) -> tuple[Layer, ...]:
    run = selection_run(node)
    assert run is not None, node.name
    fields = {"input": emit.operand(fx_args(node)[0]), "output": emit.operand(node), **run}
    return (Layer("copy_region", fields, node=node.name),)


# Nodes whose work is several records (a concat: one copy a part; an upsampling: one a row and copy).
SEVERAL: dict[str, Callable[[torch.fx.Node, Emit], tuple[Layer, ...]]] = {
    "cmx::quantized_cat": _cat,
    "cmx::quantized_upsample_nearest": _upsample,
    "cmx::quantized_depth_to_space": _depth_to_space,
    **{name: _permute for name in PERMUTES},
    **{name: _selection for name in SELECTIONS},
}


# An int16 layout copy (a channels-last image flattened for a linear head) as strided copies of one
# element: one copy_region a column of memory [batches][rows][cols] (cmx_transpose_s8 moves bytes).
LAYOUT_OPS = ("dim_order_ops::_clone_dim_order", "aten::view_copy", "aten::squeeze_copy", "aten::unsqueeze_copy")


def transpose16_shape(node: torch.fx.Node) -> tuple[int, int, int] | None:
    """(batches, rows, cols) of an int16 layout copy that moves elements, within MAX_PERMUTE_RECORDS
    records; None for anything else."""
    if op_name(node) not in LAYOUT_OPS or not is_int16(node):
        return None
    shape = transpose_shape(node) if op_name(node) == LAYOUT_OPS[0] else view_transpose_shape(node)
    if shape is None or shape[0] * shape[2] > MAX_PERMUTE_RECORDS:
        return None
    return shape


def _transpose16(node: torch.fx.Node, emit: Emit) -> tuple[Layer, ...]:
    shape = transpose16_shape(node)
    assert shape is not None, node.name
    batches, rows, cols = shape
    records = []
    for b in range(batches):
        for col in range(cols):
            fields = {
                "input": emit.operand(fx_args(node)[0]),
                "input_at": 2 * (b * rows * cols + col),
                "output": emit.operand(node),
                "output_at": 2 * (b * rows * cols + col * rows),
            }
            fields.update(rows=rows, row_bytes=2, input_stride=2 * cols, output_stride=2)
            records.append(Layer("copy_region", fields, node=node.name))
    return tuple(records)


def several(node: torch.fx.Node) -> Callable[[torch.fx.Node, Emit], tuple[Layer, ...]] | None:
    """The builder of a node that is several copy_region records, None for one of one record."""
    if transpose16_shape(node) is not None:
        return _transpose16
    return SEVERAL.get(op_name(node))
