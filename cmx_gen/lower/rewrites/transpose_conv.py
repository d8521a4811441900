"""A transposed convolution whose stride is its kernel (a U-Net's `nn.ConvTranspose2d(c, c // 2, 2, stride=2)`)
as a 1x1 convolution and a depth-to-space copy, both in cmx-gen's backend.

Upstream lowers it to `cortex_m::quantized_transpose_conv2d` (CMSIS-NN's arm_transpose_conv_s8), which
cmx-gen's backend has no kind for: each one ended a delegate, and on the M4 the two of a small U-Net cost
2.4 M cycles for 262 K MACs (9 a MAC). With stride = kernel and no padding the kernel's windows do not
overlap: output pixel (kh y + i, kw x + j) is input pixel (y, x) times the taps (i, j) alone. So it is a
1x1 convolution to kh x kw x C_out channels, channel (i kw + j) C_out + o holding tap (i, j) of output
channel o (its weights, bias, multiplier and shift are o's), whose NHWC bytes `cmx::quantized_depth_to_space`
moves to their pixels: for each input row and i, the row's W runs of kw x C_out bytes (copy_layers.py).
The same int32 sums and requantization as CMSIS-NN's transposed convolution: the same bytes
(tests/lower/test_transpose_conv.py checks the two against each other).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch

from cmx_gen.lower.delegate.emit import is_int8
from cmx_gen.lower.fx_nodes import call_like, constant_tensor, fx_args, op_name
from cmx_gen.lower.rewrites.image_layout import CHANNELS_LAST, laid_out, placed_like

TRANSPOSE_CONV = "cortex_m::quantized_transpose_conv2d"


@torch.library.custom_op("cmx::quantized_depth_to_space", mutates_args=())
def quantized_depth_to_space(x: torch.Tensor, block: list[int]) -> torch.Tensor:
    """An NCHW image of kh x kw x C channels (channel (i kw + j) C + o) as C channels at kh x kw times the
    pixels: pixel (kh y + i, kw x + j) of channel o is channel (i kw + j) C + o of pixel (y, x)."""
    kh, kw = block
    n, k, h, w = x.shape
    c = k // (kh * kw)
    out = x.reshape(n, kh, kw, c, h, w).permute(0, 3, 4, 1, 5, 2).reshape(n, c, h * kh, w * kw)
    return out.clone(memory_format=torch.channels_last)  # a copy: never a view of its input


@quantized_depth_to_space.register_fake
def _(x: torch.Tensor, block: list[int]) -> torch.Tensor:
    kh, kw = block
    n, k, h, w = x.shape
    shape = (n, k // (kh * kw), h * kh, w * kw)
    return x.new_empty(shape).contiguous(memory_format=torch.channels_last)


class Geometry(NamedTuple):
    """A depth-to-space the backend copies: NHWC input (n, h, w) of kh x kw x c channels."""

    n: int
    h: int
    w: int
    c: int
    kh: int
    kw: int


def geometry(node: torch.fx.Node) -> Geometry | None:
    """The copies of a `cmx::quantized_depth_to_space`: None unless its int8 input and output lie
    channels-last."""
    x = fx_args(node)[0]
    val, out = x.meta["val"], node.meta["val"]
    if not (is_int8(x) and is_int8(node)) or not (placed_like(val, CHANNELS_LAST) and placed_like(out, CHANNELS_LAST)):
        return None
    kh, kw = (int(v) for v in fx_args(node)[1])
    n, k, h, w = (int(s) for s in val.shape)
    return Geometry(n, h, w, k // (kh * kw), kh, kw)


class _Taken(NamedTuple):
    """A transposed convolution this rewrite takes, its constants' values (OHWI weights; per output
    channel the bias or None, multipliers and shifts)."""

    weight: torch.Tensor
    bias: torch.Tensor | None
    multipliers: torch.Tensor
    shifts: torch.Tensor


def _taken(node: torch.fx.Node, program: Any) -> _Taken | None:
    """A transposed convolution of stride = kernel, no padding, no output padding, no dilation, one group,
    int8, its weights, bias, multipliers and shifts graph constants; else None."""
    x, weight, bias, stride, padding, out_pad, dilation = fx_args(node)[:7]
    w = constant_tensor(program, weight)
    if w is None or w.dim() != 4 or not is_int8(node) or not is_int8(x):
        return None
    _, kh, kw, cin = (int(s) for s in w.shape)
    if [int(s) for s in stride] != [kh, kw] or any(int(v) for v in (*padding, *out_pad)):
        return None
    if [int(d) for d in dilation] != [1, 1] or cin != int(x.meta["val"].shape[1]):
        return None
    b = constant_tensor(program, bias) if bias is not None else None
    mult, shift = (constant_tensor(program, fx_args(node)[k]) for k in (9, 10))
    if (bias is not None and b is None) or mult is None or shift is None:
        return None
    return _Taken(w, b, mult, shift)


def _constant(program: Any, name: str, data: torch.Tensor) -> torch.fx.Node:
    """A new parameter of `program` (a placeholder before its first), holding `data`."""
    from executorch.backends.transforms.utils import create_constant_placeholder
    from torch.export.graph_signature import InputKind

    graph = program.graph_module.graph
    first = next(n for n in graph.nodes if n.op == "placeholder")
    with graph.inserting_before(first):
        made: torch.fx.Node = create_constant_placeholder(program, graph, name, InputKind.PARAMETER, data)
    return made


def _rewrite(node: torch.fx.Node, program: Any, taken: _Taken) -> None:
    from executorch.exir.dialects._ops import ops as exir_ops

    x, _, _, _, _, _, _, in_off, out_off, _, _, act_min, act_max = fx_args(node)[:13]
    cout, kh, kw, cin = (int(s) for s in taken.weight.shape)
    taps = kh * kw
    # channel (i kw + j) cout + o: tap (i, j) of output channel o, with o's bias, multiplier and shift
    weights = taken.weight.permute(1, 2, 0, 3).reshape(taps * cout, 1, 1, cin).contiguous()
    bias = taken.bias if taken.bias is not None else torch.zeros(cout, dtype=torch.int32)
    per_channel = [c.reshape(-1).repeat(taps).contiguous() for c in (bias, taken.multipliers, taken.shifts)]
    made = [
        _constant(program, f"{node.name}_as_1x1_{what}", data)
        for what, data in zip(("weight", "bias", "multipliers", "shifts"), (weights, *per_channel))
    ]
    graph = program.graph_module.graph
    val = node.meta["val"]
    n, _, h, wd = (int(s) for s in x.meta["val"].shape)
    with graph.inserting_before(node):
        conv_val = laid_out(val.new_empty((n, taps * cout, h, wd)), CHANNELS_LAST)
        args = (x, made[0], made[1], [1, 1], [0, 0], [1, 1], in_off, out_off, made[2], made[3], act_min, act_max)
        # its scratch: the transposed convolution's (an allocation sized where the program is planned)
        conv = call_like(
            graph, exir_ops.edge.cortex_m.quantized_conv2d.default, (*args, fx_args(node)[13]), node, val=conv_val
        )
        d2s = call_like(
            graph,
            torch.ops.cmx.quantized_depth_to_space.default,
            (conv, [kh, kw]),
            node,
            val=laid_out(val, CHANNELS_LAST),
        )
    # the convolution reports as the transposed convolution (its profile and trace id), the copies as a
    # layer of their own: an id no other node has (the profile and the trace key each layer by its id)
    if isinstance(node.meta.get("debug_handle"), int):
        handles = [other.meta.get("debug_handle") for other in graph.nodes]
        conv.meta["debug_handle"] = node.meta["debug_handle"]
        d2s.meta["debug_handle"] = 1 + max(handle for handle in handles if isinstance(handle, int))
    node.replace_all_uses_with(d2s)
    graph.erase_node(node)


def to_rows(program: Any) -> None:
    """Each transposed convolution of stride = kernel as a 1x1 convolution and a depth-to-space."""
    graph = program.graph_module.graph
    for node in [n for n in graph.nodes if op_name(n) == TRANSPOSE_CONV]:
        taken = _taken(node, program)
        if taken is not None:
            _rewrite(node, program, taken)
    graph.lint()
    program.graph_module.recompile()
