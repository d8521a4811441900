"""Plan layers of the int16 ops (ops/s16_ops.py): CMSIS-NN's s16 wrappers with the arguments the
ops hold. Their weights come from the graph as the quantizer made them (OIHW), so the filter is laid
out here as the kernels read it (OHWI; a depthwise layer's [1][kh][kw][channels]); the int32 bias is
stored as the int64 the kernels add; offsets are 0 (symmetric activations)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from cmx_gen.lower.delegate.cmsis_sizes import dims
from cmx_gen.lower.delegate.conv_layers import int32s
from cmx_gen.lower.delegate.emit import Emit, dims_fields, window_fields
from cmx_gen.lower.delegate.kernel_choice import node_val as _val
from cmx_gen.lower.delegate.kernel_choice import s16_depthwise, s16_scratch
from cmx_gen.lower.delegate.own_layers import bmm_layer, lstm_layer
from cmx_gen.lower.delegate.plan import NONE, Layer
from cmx_gen.lower.fx_nodes import fx_args, op_name
from cmx_gen.lower.host_models import s16_models
from cmx_gen.lower.host_models.s16_models import ADD_LEFT_SHIFT


def _bias64(emit: Emit, bias: Any) -> int:
    """The int32 bias constant as int64 (the s16 kernels' bias), NONE without one."""
    if bias is None:
        return NONE
    return emit.data(np.frombuffer(emit.constant_bytes(bias), dtype="<i4").astype("<i8").tobytes())


def conv(node: torch.fx.Node, emit: Emit, scratch: int) -> Layer:
    """cmx::quantized_conv2d_s16: conv_s16 (arm_convolve_wrapper_s16) or, one group a channel,
    depthwise_s16 (arm_depthwise_conv_wrapper_s16)."""
    x, weight, bias, stride, padding, dilation, groups, mults, shifts, act_min, act_max = fx_args(node)
    out_c, in_per_group, kh, kw = (int(v) for v in _val(weight).shape)
    filt = np.frombuffer(emit.constant_bytes(weight), dtype=np.int8).reshape(out_c, in_per_group, kh, kw)
    depthwise = s16_depthwise(node)
    # OHWI; a depthwise filter [1][kh][kw][out] (its one input channel a group)
    laid = filt.transpose(1, 2, 3, 0) if depthwise else filt.transpose(0, 2, 3, 1)
    window = window_fields(0, 0, stride, padding, dilation, (act_min, act_max))
    fields: dict[str, Any] = {
        "input": emit.operand(x),
        "output": emit.operand(node),
        "weight": emit.data(np.ascontiguousarray(laid).tobytes()),
        "bias": _bias64(emit, bias),
        "multipliers": emit.data(int32s(mults, emit).tobytes()),
        "shifts": emit.data(int32s(shifts, emit).tobytes()),
        "scratch": scratch,
        "scratch_bytes": s16_scratch(node, emit.isa),
    }
    if depthwise:
        fields["ch_mult"] = out_c // int(_val(x).shape[1])
    return Layer(
        "depthwise_s16" if depthwise else "conv_s16",
        {
            **fields,
            **window,
            **dims_fields("input", dims(_val(x))),
            **dims_fields("filter", (1, kh, kw, out_c) if depthwise else (out_c, kh, kw, in_per_group)),
            **dims_fields("bias", (1, 1, 1, out_c)),
            **dims_fields("output", dims(_val(node))),
        },
        node=node.name,
    )


def linear(node: torch.fx.Node, emit: Emit, scratch: int) -> Layer:
    """cmx::quantized_linear_s16: linear_s16 (arm_fully_connected_s16), one multiplier for the tensor."""
    x, weight, bias, mult, shift, act_min, act_max = fx_args(node)
    xv, out = _val(x), _val(node)
    in_feat, out_feat = int(xv.shape[-1]), int(out.shape[-1])
    batches = int(np.prod([int(s) for s in xv.shape[:-1]]))
    return Layer(
        "linear_s16",
        {
            "input": emit.operand(x),
            "output": emit.operand(node),
            "weight": emit.constant(weight),
            "bias": _bias64(emit, bias),
            "kernel_sum": NONE,
            "multiplier": int(mult),
            "shift": int(shift),
            "input_offset": 0,
            "filter_offset": 0,
            "output_offset": 0,
            "act_min": act_min,
            "act_max": act_max,
            **dims_fields("input", (batches, 1, 1, in_feat)),
            **dims_fields("filter", (in_feat, 1, 1, out_feat)),
            **dims_fields("bias", (1, 1, 1, out_feat)),
            **dims_fields("output", (batches, 1, 1, out_feat)),
        },
        node=node.name,
    )


def lut(node: torch.fx.Node, emit: Emit, scratch: int) -> Layer:
    """cmx::quantized_lut_s16: lut_s16 (cmx_lut_s8_s16), int8 in, int16 out, its table of 256 int16."""
    x, table = fx_args(node)
    fields = {
        "input": emit.operand(x),
        "output": emit.operand(node),
        "count": int(_val(x).numel()),
        "table": emit.data(np.asarray(table, dtype="<i2").tobytes()),
    }
    return Layer("lut_s16", fields, node=node.name)


def narrow(node: torch.fx.Node, emit: Emit, scratch: int) -> Layer:
    """cmx::quantized_narrow_s16: narrow_s16 (cmx_narrow_s16_s8), int16 in, int8 out, its thresholds."""
    x, thresholds, lowest, multiplier, shift = fx_args(node)
    fields = {
        "input": emit.operand(x),
        "output": emit.operand(node),
        "count": int(_val(x).numel()),
        "table": emit.data(np.asarray(thresholds, dtype="<i2").tobytes()) if thresholds else NONE,
        "steps": len(thresholds),
        "lowest": lowest,
        "multiplier": multiplier,
        "shift": shift,
    }
    return Layer("narrow_s16", fields, node=node.name)


def softmax(node: torch.fx.Node, emit: Emit, scratch: int) -> Layer:
    """cmx::quantized_softmax_s16: softmax_s16 (arm_softmax_s16) over the last dimension, its exp and
    one-by-one tables (s16_models') as plan data."""
    x, mult, shift = fx_args(node)
    shape = _val(x).shape
    fields = {"input": emit.operand(x), "output": emit.operand(node), "row_size": int(shape[-1])}
    fields |= {"rows": int(_val(x).numel()) // int(shape[-1]), "multiplier": int(mult), "shift": int(shift)}
    fields |= {"exp_table": emit.data(s16_models.EXP_TABLE.astype("<i2").tobytes())}
    fields |= {"one_by_one_table": emit.data(s16_models.ONE_BY_ONE_TABLE.astype("<i2").tobytes())}
    return Layer("softmax_s16", fields, node=node.name)


def activation(node: torch.fx.Node, emit: Emit, scratch: int) -> Layer:
    """cmx::quantized_activation_s16: activation_s16 (arm_nn_activation_s16), sigmoid or tanh."""
    x, left_shift, tanh = fx_args(node)
    fields = {"input": emit.operand(x), "output": emit.operand(node), "count": int(_val(x).numel())}
    fields |= {"left_shift": int(left_shift), "type": int(bool(tanh))}  # arm_nn_activation_type
    return Layer("activation_s16", fields, node=node.name)


def add(node: torch.fx.Node, emit: Emit, scratch: int) -> Layer:
    """cmx::quantized_add_s16: add_s16 (arm_elementwise_add_s16) over two int16 tensors of one shape."""
    a, b, quant, act_min, act_max = fx_args(node)
    m1, s1, m2, s2, mo, so = (int(v) for v in quant)
    count = int(_val(node).numel())
    fields = {"input1": emit.operand(a), "input2": emit.operand(b), "output": emit.operand(node)}
    fields |= {"input1_offset": 0, "input1_multiplier": m1, "input1_shift": s1}
    fields |= {"input2_offset": 0, "input2_multiplier": m2, "input2_shift": s2}
    fields |= {"left_shift": ADD_LEFT_SHIFT, "output_offset": 0, "output_multiplier": mo, "output_shift": so}
    fields |= {"act_min": act_min, "act_max": act_max, "block": count, "count": count}
    return Layer("add_s16", fields, node=node.name)


def mul(node: torch.fx.Node, emit: Emit, scratch: int) -> Layer:
    """cmx::quantized_mul_s16: mul_s16 (arm_elementwise_mul_s16) over two int16 tensors of one shape."""
    a, b, mult, shift, act_min, act_max = fx_args(node)
    count = int(_val(node).numel())
    fields = {"input1": emit.operand(a), "input2": emit.operand(b), "output": emit.operand(node)}
    fields |= {"input1_offset": 0, "input2_offset": 0, "output_offset": 0}
    fields |= {"output_multiplier": int(mult), "output_shift": int(shift)}
    fields |= {"act_min": act_min, "act_max": act_max, "block": count, "count": count}
    return Layer("mul_s16", fields, node=node.name)


def pool(node: torch.fx.Node, emit: Emit, scratch: int) -> Layer:
    """cmx::quantized_pool2d_s16: avg_pool_s16 (arm_avgpool_s16) or max_pool_s16 (arm_max_pool_s16)."""
    x, kernel, stride, padding, average, act_min, act_max = fx_args(node)
    n, h, w, c = dims(_val(x))
    out = _val(node)
    fields: dict[str, Any] = {"input": emit.operand(x), "output": emit.operand(node)}
    if average:
        fields |= {"scratch": scratch, "scratch_bytes": s16_scratch(node, emit.isa)}
    fields |= {"stride_w": stride[1], "stride_h": stride[0], "pad_w": padding[1], "pad_h": padding[0]}
    fields |= {"act_min": act_min, "act_max": act_max}
    fields |= dims_fields("input", (n, h, w, c))
    fields |= dims_fields("filter", (1, int(kernel[0]), int(kernel[1]), 1))
    fields |= dims_fields("output", (n, int(out.shape[2]), int(out.shape[3]), c))
    return Layer("avg_pool_s16" if average else "max_pool_s16", fields, node=node.name)


BUILDERS = {
    "cmx::quantized_conv2d_s16": conv,
    "cmx::quantized_linear_s16": linear,
    "cmx::quantized_lut_s16": lut,
    "cmx::quantized_narrow_s16": narrow,
    "cmx::quantized_add_s16": add,
    "cmx::quantized_mul_s16": mul,
    "cmx::quantized_pool2d_s16": pool,
    "cmx::quantized_lstm_s16": lstm_layer,
    "cmx::quantized_bmm_s16": bmm_layer,
    "cmx::quantized_softmax_s16": softmax,
    "cmx::quantized_activation_s16": activation,
}


def supports(node: torch.fx.Node) -> bool:
    """A convolution of one group or one group a channel (the s16 wrappers take no other grouping), on
    a 4-D image; a fully connected layer always."""
    if fx_args(node)[0] is None:
        return False
    if op_name(node) == "cmx::quantized_pool2d_s16":
        return bool(_val(node).dim() == 4)
    if op_name(node) != "cmx::quantized_conv2d_s16":  # a table, an add, a multiplication, a linear layer, an LSTM
        return True
    groups = int(fx_args(node)[6])
    return _val(fx_args(node)[0]).dim() == 4 and (groups == 1 or s16_depthwise(node))
