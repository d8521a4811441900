"""What the layer builders (layers.py) write with: how a builder refers to what the plan holds
(Emit), CMSIS-NN's dims fields from a tensor, and which layout copies are plain copies or transposes."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from cmx_gen.common.dim_order import placed_dims
from cmx_gen.lower.delegate.kernel_choice import node_val as _val
from cmx_gen.lower.fx_nodes import fx_args


@dataclass(frozen=True)
class Emit:
    """How a builder refers to what the plan holds: a value node's operand (an offset in the working
    memory or a delegate argument), a graph constant's offset in the plan data (NONE for None) and
    its bytes, bytes laid out here (an own kernel's weights), and the core's CMSIS-NN code path."""

    operand: Callable[[torch.fx.Node], int]
    constant: Callable[[Any], int]
    constant_bytes: Callable[[torch.fx.Node], bytes]
    data: Callable[[bytes], int]
    isa: str


def is_int8(node: Any) -> bool:
    val = _val(node)
    return isinstance(val, torch.Tensor) and val.dtype == torch.int8


def is_int16(node: Any) -> bool:
    val = _val(node)
    return isinstance(val, torch.Tensor) and val.dtype == torch.int16


def element_width(*nodes: Any) -> int:
    """The bytes of an element the nodes all hold: 1 all int8, 2 all int16 (the copies move either), else 0."""
    return 1 if all(is_int8(n) for n in nodes) else 2 if all(is_int16(n) for n in nodes) else 0


def shape4(val: Any) -> tuple[int, int, int, int]:
    """A 4-D tensor's shape as it is (a weight already laid out as the kernel reads it)."""
    a, b, c, d = (int(s) for s in val.shape)
    return a, b, c, d


def dims_fields(name: str, dims: tuple[int, int, int, int]) -> dict[str, int]:
    return {f"{name}_{d}": v for d, v in zip("nhwc", dims)}


def window_fields(
    in_off: Any, out_off: Any, stride: Any, padding: Any, dilation: Any, act: tuple[Any, Any]
) -> dict[str, Any]:
    """A convolution's or depthwise layer's offsets, window (H, W pairs as the node holds them) and
    activation range, as the plan records name them."""
    return {
        "input_offset": in_off,
        "output_offset": out_off,
        "stride_w": stride[1],
        "stride_h": stride[0],
        "pad_w": padding[1],
        "pad_h": padding[0],
        "dilation_w": dilation[1],
        "dilation_h": dilation[0],
        "act_min": act[0],
        "act_max": act[1],
    }


def byte_identical_view(node: torch.fx.Node) -> bool:
    """A reshape whose output holds the input's bytes in the same order: a plain copy."""

    src, out = _val(fx_args(node)[0]), _val(node)
    return src is not None and out is not None and _memory_is_logical(src) and _memory_is_logical(out)


def transpose_shape(node: torch.fx.Node) -> tuple[int, int, int] | None:
    """(batches, rows, cols) when a layout copy moves memory [batches][rows][cols] to
    [batches][cols][rows] (NCHW <-> NHWC and the like), else None."""
    src, out = _val(fx_args(node)[0]), _val(node)
    if src is None or out is None or tuple(src.shape) != tuple(out.shape):
        return None
    return _rotation(placed_dims(src), placed_dims(out), [int(s) for s in src.shape])


def permute_transpose_shape(node: torch.fx.Node) -> tuple[int, int, int] | None:
    """(batches, rows, cols) when a permute of a tensor in logical memory order into one in logical order
    moves memory [batches][rows][cols] to [batches][cols][rows] (`x.transpose(1, 2)` of [b][t][c]), else None."""
    src, out = _val(fx_args(node)[0]), _val(node)
    if src is None or out is None or not (_memory_is_logical(src) and _memory_is_logical(out)):
        return None
    n = src.dim()
    perm = [int(p) % n for p in fx_args(node)[1]]
    return _rotation(list(range(n)), perm, [int(s) for s in src.shape])


def view_transpose_shape(node: torch.fx.Node) -> tuple[int, int, int] | None:
    """(batches, rows, cols) when a reshape reads an input whose memory is not in its logical order
    (a channels-last image flattened: `x.flatten(2)`) as a transpose of the input's memory into its
    logical order, after which the reshape moves no byte; else None."""
    src, out = _val(fx_args(node)[0]), _val(node)
    if src is None or out is None or not _memory_is_logical(out):
        return None
    before = placed_dims(src)
    return None if before == sorted(before) else _rotation(before, sorted(before), [int(s) for s in src.shape])


def _memory_is_logical(val: Any) -> bool:
    return placed_dims(val) == sorted(placed_dims(val))


def _rotation(before: list[int], after: list[int], size: list[int]) -> tuple[int, int, int] | None:
    """(batches, rows, cols) when memory in dim order `before` becomes `after` by moving
    [batches][rows][cols] to [batches][cols][rows], else None."""
    batch = 0
    while batch < len(before) and before[batch] == after[batch]:
        batch += 1
    rest_in, rest_out = before[batch:], after[batch:]
    for split in range(1, len(rest_in)):
        if rest_out == rest_in[split:] + rest_in[:split]:
            return (
                math.prod(size[d] for d in before[:batch]),
                math.prod(size[d] for d in rest_in[:split]),
                math.prod(size[d] for d in rest_in[split:]),
            )
    return None
