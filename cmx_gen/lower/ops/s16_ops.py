"""The int16 layers (8w16a, activation_bits.py) as cmx-gen's ops, before upstream's passes see them.

Upstream's cortex_m passes take int8 patterns only: on int16 ones they make int8 kernel calls on int16
tensors, or leave a float `aten.linear` reading int16 data when a ReLU does not fuse. So `to_int16` runs
on the edge program first and replaces each `dequantize(int16) -> conv/linear [-> activation] ->
quantize(int16)` by `cmx::quantized_conv2d_s16` or `cmx::quantized_linear_s16` on the int16 tensors,
its int8 weights and int32 bias as the quantizer made them, and the per-channel multipliers and shifts
CMSIS-NN's s16 kernels take. Only cmx-gen's backend runs these ops (layers.py: conv_s16, depthwise_s16,
linear_s16); their Python implementations are the kernels' arithmetic (host_models/s16_models.py),
so the host reference is bit-exact."""

from __future__ import annotations

from typing import Any

import torch

from cmx_gen.common.errors import ExportError
from cmx_gen.lower.fx_nodes import constant_tensor, fx_args, op_name
from cmx_gen.lower.host_models import s16_models
from cmx_gen.lower.ops.lstm import multiplier


@torch.library.custom_op("cmx::quantized_conv2d_s16", mutates_args=())
def quantized_conv2d_s16(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None,
    stride: list[int],
    padding: list[int],
    dilation: list[int],
    groups: int,
    multipliers: list[int],
    shifts: list[int],
    act_min: int,
    act_max: int,
) -> torch.Tensor:
    """arm_convolve_wrapper_s16 / arm_depthwise_conv_wrapper_s16 on the host (s16_models.conv2d_s16):
    x int16 NCHW (channels-last in memory), weight int8 OIHW, bias int32 (widened to int64)."""
    return s16_models.conv2d_s16(
        x, weight, bias, stride, padding, dilation, groups, multipliers, shifts, act_min, act_max
    )


@quantized_conv2d_s16.register_fake
def _(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: Any,
    stride: list[int],
    padding: list[int],
    dilation: list[int],
    *rest: Any,
) -> torch.Tensor:
    sizes = [
        (int(x.shape[2 + i]) + 2 * padding[i] - dilation[i] * (int(weight.shape[2 + i]) - 1) - 1) // stride[i] + 1
        for i in range(2)
    ]
    out = x.new_empty((x.shape[0], weight.shape[0], *sizes), dtype=torch.int16)
    return out.contiguous(memory_format=torch.channels_last)


@torch.library.custom_op("cmx::quantized_linear_s16", mutates_args=())
def quantized_linear_s16(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, mult: int, shift: int, act_min: int, act_max: int
) -> torch.Tensor:
    """arm_fully_connected_s16 on the host (s16_models.fully_connected_s16): x int16 [..., in], weight
    int8 [out][in], bias int32 (widened to int64), one multiplier for the tensor."""
    return s16_models.fully_connected_s16(x, weight, bias, mult, shift, act_min, act_max)


@quantized_linear_s16.register_fake
def _(x: torch.Tensor, weight: torch.Tensor, *rest: Any) -> torch.Tensor:
    return x.new_empty((*x.shape[:-1], weight.shape[0]), dtype=torch.int16)


@torch.library.custom_op("cmx::quantized_lut_s16", mutates_args=())
def quantized_lut_s16(x: torch.Tensor, table: list[int]) -> torch.Tensor:
    """cmx_lut_s8_s16 on the host: each int8 value's int16 from the 256-entry table (index value + 128)."""
    return torch.tensor(table, dtype=torch.int16)[x.to(torch.int64) + 128]


@quantized_lut_s16.register_fake
def _(x: torch.Tensor, table: list[int]) -> torch.Tensor:
    return torch.empty_like(x, dtype=torch.int16)


_ACTIVATIONS = ("aten::relu", "aten::hardtanh", "aten::clamp")
_LAYERS = ("aten::convolution", "aten::linear")


def _int16_qparams(node: Any, kind: str) -> tuple[float, int, int] | None:
    """(scale, quant_min, quant_max) of an int16 per-tensor quantize/dequantize with zero point 0."""
    if not (isinstance(node, torch.fx.Node) and op_name(node) == f"quantized_decomposed::{kind}"):
        return None
    args = fx_args(node)
    if len(args) < 6 or args[5] != torch.int16 or int(args[2]) != 0:
        return None
    return float(args[1]), int(args[3]), int(args[4])


def _weight(program: Any, node: Any) -> tuple[torch.fx.Node, list[float]] | None:
    """The int8 weight constant under a dequantize, and its scale per output channel."""
    name = op_name(node) if isinstance(node, torch.fx.Node) else ""
    if name not in ("quantized_decomposed::dequantize_per_channel", "quantized_decomposed::dequantize_per_tensor"):
        return None
    args = fx_args(node)
    const = constant_tensor(program, args[0]) if isinstance(args[0], torch.fx.Node) else None
    if const is None or const.dtype != torch.int8:
        return None
    if name.endswith("per_tensor"):
        return args[0], [float(args[1])] * int(const.shape[0])
    scales = constant_tensor(program, args[1])
    if scales is None or int(args[3]) != 0:
        return None
    return args[0], [float(s) for s in scales.reshape(-1)]


def _bias(program: Any, node: Any) -> torch.fx.Node | None:
    """The int32 bias constant under its dequantize (None: no bias)."""
    if node is None or not isinstance(node, torch.fx.Node):
        return None
    source = fx_args(node)[0] if op_name(node).startswith("quantized_decomposed::dequantize") else None
    const = constant_tensor(program, source) if isinstance(source, torch.fx.Node) else None
    if const is None or const.dtype != torch.int32:
        raise ExportError(f"int16 layer {node.name}: its bias is not an int32 constant", "report it with the model")
    return source


def _requantize(in_scale: float, weight_scales: list[float], out_scale: float, at: str) -> tuple[list[int], list[int]]:
    pairs = [multiplier(in_scale * w / out_scale) for w in weight_scales]
    if any(shift > s16_models.MAX_SHIFT_S16 for _, shift in pairs):
        raise ExportError(
            f"int16 layer {at}: its output scale is too fine for CMSIS-NN's s16 requantization (shift above 14)",
            "run that layer at int8: --precision-for PART=int8",
        )
    return [m for m, _ in pairs], [s for _, s in pairs]


def _int8_to_int16(graph: torch.fx.Graph, quantize: torch.fx.Node) -> torch.fx.Node:
    """An int16 quantize of an int8 dequantize (an int8 layer's output into an int16 one) as
    cmx::quantized_lut_s16: the 256 values the int8 tensor can hold, each dequantized and quantized as the
    two nodes do. Upstream's passes would fold the pair away and hand the int8 bytes to the int16 layer.
    Anything else is returned as it is."""
    source = fx_args(quantize)[0]
    name = op_name(source) if isinstance(source, torch.fx.Node) else ""
    if name != "quantized_decomposed::dequantize_per_tensor" or fx_args(source)[5] != torch.int8:
        return quantize
    values = torch.arange(-128, 128, dtype=torch.int8)
    floats = torch.ops.quantized_decomposed.dequantize_per_tensor(values, *fx_args(source)[1:6])
    table = torch.ops.quantized_decomposed.quantize_per_tensor(floats, *fx_args(quantize)[1:6])
    with graph.inserting_before(quantize):
        made = graph.call_function(torch.ops.cmx.quantized_lut_s16.default, (fx_args(source)[0], table.tolist()))
    made.meta = {**quantize.meta}
    quantize.replace_all_uses_with(made)
    graph.erase_node(quantize)
    if not source.users:
        graph.erase_node(source)
    return made


def to_int16(program: Any) -> int:
    """Replace each int16 `dequantize -> conv/linear [-> activation] -> quantize` of the edge program
    (edited in place) by cmx-gen's s16 op. Returns how many layers it replaced."""
    graph = program.graph_module.graph
    count = 0
    for node in list(graph.nodes):
        if op_name(node) not in _LAYERS or len(node.users) != 1:
            continue
        after = next(iter(node.users))
        last = after if op_name(after) in _ACTIVATIONS and len(after.users) == 1 else node
        q = next(iter(last.users))
        out_q = _int16_qparams(q, "quantize_per_tensor")
        args = fx_args(node)
        in_q = _int16_qparams(args[0], "dequantize_per_tensor")
        weight = _weight(program, args[1])
        if out_q is None or in_q is None or weight is None:
            continue
        w_node, w_scales = weight
        bias = _bias(program, args[2] if len(args) > 2 else None)
        mults, shifts = _requantize(in_q[0], w_scales, out_q[0], node.name)
        x16 = _int8_to_int16(graph, fx_args(args[0])[0])
        with graph.inserting_before(q):
            if op_name(node) == "aten::linear":
                made = graph.call_function(
                    torch.ops.cmx.quantized_linear_s16.default, (x16, w_node, bias, mults[0], shifts[0], *out_q[1:])
                )
            else:
                stride, padding, dilation, transposed, _, groups = args[3:9]
                if transposed:
                    continue
                made = graph.call_function(
                    torch.ops.cmx.quantized_conv2d_s16.default,
                    (
                        x16,
                        w_node,
                        bias,
                        list(stride),
                        list(padding),
                        list(dilation),
                        int(groups),
                        mults,
                        shifts,
                        *out_q[1:],
                    ),
                )
        made.meta = {**node.meta, "val": q.meta["val"]}
        q.replace_all_uses_with(made)
        dead = [q, last, node] if last is node else [q, last, node]
        for gone in dict.fromkeys(dead):
            if not gone.users:
                graph.erase_node(gone)
        for dq in args[:3]:
            if isinstance(dq, torch.fx.Node) and not dq.users:
                graph.erase_node(dq)
        count += 1
    graph.eliminate_dead_code()
    graph.lint()
    program.graph_module.recompile()
    return count
