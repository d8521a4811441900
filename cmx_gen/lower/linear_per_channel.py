"""`per_channel_linear = true`: a fully connected layer's int8 weights with a scale per output channel, as
convolutions have them, instead of upstream's one scale for the tensor (its cortex_m quantized_linear takes
one multiplier). A layer whose rows differ in range (an autoencoder's, a classifier's head) keeps each row's
bits.

The quantizer's linear layers at int8 take upstream's own per-channel weight spec and its per-channel int32
bias spec (`annotate`); before upstream's passes, each `dequantize(int8) -> linear(per-channel weight) [->
activation] -> quantize(int8)` becomes `cmx::quantized_linear_pc` (`to_int8`), which cmx-gen's backend runs
on CMSIS-NN's arm_fully_connected_per_channel_s8 (delegate kind linear_per_channel); its Python
implementation is that kernel's arithmetic, so the host reference is bit-exact. int16 and int4 layers keep
their own kernels' one scale."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from cmx_gen.lower.fx_nodes import constant_tensor, fx_args, op_name
from cmx_gen.lower.host_models.kernel_models import requantize
from cmx_gen.lower.ops.lstm import multiplier
from cmx_gen.lower.ops.quantized_pattern import fused_end, take_over


@torch.library.custom_op("cmx::quantized_linear_pc", mutates_args=())
def quantized_linear_pc(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None,
    input_offset: int,
    output_offset: int,
    multipliers: list[int],
    shifts: list[int],
    act_min: int,
    act_max: int,
) -> torch.Tensor:
    """arm_fully_connected_per_channel_s8 on the host: int32 sums of (x + input_offset) times the int8
    weight [out][in] plus the bias, each output channel requantized by its own multiplier and shift."""
    rows = x.reshape(-1, x.shape[-1]).to(torch.int64).numpy() + input_offset
    acc = rows @ weight.to(torch.int64).numpy().T
    if bias is not None:
        acc = acc + bias.to(torch.int64).numpy()
    out = np.stack([requantize(acc[:, c], m, s) for c, (m, s) in enumerate(zip(multipliers, shifts))], axis=-1)
    y = np.clip(out + output_offset, act_min, act_max).astype(np.int8)
    return torch.from_numpy(y).reshape(*x.shape[:-1], weight.shape[0])


@quantized_linear_pc.register_fake
def _(x: torch.Tensor, weight: torch.Tensor, *rest: Any) -> torch.Tensor:
    return x.new_empty((*x.shape[:-1], weight.shape[0]), dtype=torch.int8)


def annotate(graph: torch.fx.GraphModule) -> None:
    """Each int8 linear layer's weight spec per output channel, its bias spec derived per channel (upstream's
    INT8_PER_CHANNEL_CONFIG's); a layer at int16 activations or 4-bit weights is left as it is."""
    from executorch.backends.arm.quantizer.arm_quantizer_utils import _get_int32_per_channel_bias_qspec
    from executorch.backends.cortex_m.quantizer.quantization_configs import INT8_WEIGHT_PER_CHANNEL_QSPEC

    for node in graph.graph.nodes:
        annotation = node.meta.get("quantization_annotation")
        if str(node.target) != "aten.linear.default" or annotation is None:
            continue
        specs = annotation.input_qspec_map
        x, weight = node.args[0], node.args[1]
        x_spec, w_spec = specs.get(x), specs.get(weight)
        if getattr(x_spec, "dtype", None) != torch.int8 or getattr(w_spec, "quant_max", None) == 7:
            continue  # int16 activations, 4-bit weights
        if w_spec is None or getattr(w_spec, "dtype", None) != torch.int8:
            continue
        specs[weight] = INT8_WEIGHT_PER_CHANNEL_QSPEC
        if len(node.args) > 2 and node.args[2] is not None:
            specs[node.args[2]] = _get_int32_per_channel_bias_qspec(node)


def to_int8(program: Any) -> int:
    """Each `dequantize -> linear(per-channel weight) [-> activation] -> quantize` of the edge program
    (edited in place), all int8, as cmx::quantized_linear_pc. Returns how many it replaced."""
    graph = program.graph_module.graph
    count = 0
    for node in list(graph.nodes):
        if op_name(node) != "aten::linear" or len(node.users) != 1:
            continue
        last, q = fused_end(node)
        made = _call(program, graph, node, q)
        if made is None:
            continue
        take_over(graph, made, node, q, [q, last, node])
        count += 1
    graph.eliminate_dead_code()
    graph.lint()
    program.graph_module.recompile()
    return count


def _per_tensor_int8(node: Any, kind: str) -> tuple[float, int, int, int] | None:
    """(scale, zero point, quant_min, quant_max) of an int8 per-tensor quantize/dequantize."""
    if not isinstance(node, torch.fx.Node) or op_name(node) != f"quantized_decomposed::{kind}_per_tensor":
        return None
    args = fx_args(node)
    return (float(args[1]), int(args[2]), int(args[3]), int(args[4])) if args[5] == torch.int8 else None


def _call(program: Any, graph: torch.fx.Graph, node: torch.fx.Node, q: torch.fx.Node) -> torch.fx.Node | None:
    """The cmx::quantized_linear_pc for `node` before `q`, or None where it is not this pattern."""
    args = fx_args(node)
    x_q, y_q = _per_tensor_int8(args[0], "dequantize"), _per_tensor_int8(q, "quantize")
    w_dq = args[1]
    if x_q is None or y_q is None or op_name(w_dq) != "quantized_decomposed::dequantize_per_channel":
        return None
    w_node, w_scales = fx_args(w_dq)[0], constant_tensor(program, fx_args(w_dq)[1])
    weight = constant_tensor(program, w_node)
    if weight is None or weight.dtype != torch.int8 or w_scales is None:
        return None
    bias = fx_args(args[2])[0] if len(args) > 2 and args[2] is not None else None
    if bias is not None and getattr(constant_tensor(program, bias), "dtype", None) != torch.int32:
        return None
    pairs = [multiplier(x_q[0] * float(s) / y_q[0]) for s in w_scales.reshape(-1)]
    call = (
        fx_args(args[0])[0],
        w_node,
        bias,
        -x_q[1],
        y_q[1],
        [m for m, _ in pairs],
        [s for _, s in pairs],
        y_q[2],
        y_q[3],
    )
    with graph.inserting_before(q):
        return graph.call_function(torch.ops.cmx.quantized_linear_pc.default, call)
