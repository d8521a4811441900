"""One plan layer per cortex_m operator node: the same CMSIS-NN arguments the cortex_m kernel
wrappers (backends/cortex_m/ops/op_*.cpp) compute on every call, computed once here.

`supports(node)` is the partitioner's question; `BUILDERS[op](node, emit, scratch)` the preprocess
step's answer. Each builder mirrors its wrapper line for line (dims from the logical NCHW sizes,
offsets negated where the wrapper negates them), which is what makes the delegate bit-exact by
construction. Where the core has one, a layer runs a kernel of cmx-gen's own instead (own_kernels.py).
Layers that are strided copies (a concat, an upsampling, a permute) are several records each
(copy_layers.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from cmx_gen.lower.delegate import conv_layers, own_kernels, own_layers, s16_layers
from cmx_gen.lower.delegate.cmsis_sizes import dims
from cmx_gen.lower.delegate.copy_layers import (
    PERMUTES,
    SELECTIONS,
    permute_plan,
    selection_run,
    transpose16_shape,
    transpose_layer,
)
from cmx_gen.lower.delegate.emit import (
    Emit,
    byte_identical_view,
    dims_fields,
    is_int8,
    is_int16,
    transpose_shape,
    view_transpose_shape,
    window_fields,
)
from cmx_gen.lower.delegate.kernel_choice import depthwise_kind, int4_kind, scratch_bytes
from cmx_gen.lower.delegate.kernel_choice import node_val as _val
from cmx_gen.lower.delegate.kernel_numbers import fc_s4_weights, fc_weights
from cmx_gen.lower.delegate.plan import NONE, Layer
from cmx_gen.lower.fx_nodes import fx_args, op_name
from cmx_gen.lower.rewrites import concat, transpose_conv, upsample
from cmx_gen.lower.rewrites.image_layout import ELEMENTWISE_OPERANDS


def _channel_broadcast(a: Any, b: Any) -> bool:
    """cortex_m_ops_common.h is_channel_broadcast."""
    if a.dim() != b.dim() or a.dim() != 4 or a.shape[1] != b.shape[1]:
        return False
    return bool(a.numel() == a.shape[1] or b.numel() == b.shape[1])


def _binary_ok(node: torch.fx.Node, first: int, second: int) -> bool:
    a, b, out = _val(fx_args(node)[first]), _val(fx_args(node)[second]), _val(node)
    if a is None or b is None:
        return False
    return _channel_broadcast(a, b) or (tuple(a.shape) == tuple(b.shape) == tuple(out.shape))


# The arguments a layer reads as tensors of the working memory (operands), by position; every other
# kind reads its first. A constant there (a position embedding added, a learned scale) is no tensor
# the plan can address: such a node stays outside, on its cortex_m kernel.
OPERANDS: dict[str, tuple[int, ...]] = {
    **ELEMENTWISE_OPERANDS,
    "cmx::quantized_bmm": (0, 2),
    "cmx::quantized_bmm_s16": (0, 1),
}


def operands(node: torch.fx.Node) -> list[Any]:
    """The node's operand arguments (OPERANDS; a concat's every input)."""
    args = fx_args(node)
    if op_name(node) == "cmx::quantized_cat":
        return list(args[0])
    return [args[k] for k in OPERANDS.get(op_name(node), (0,)) if k < len(args)]


_VIEWS = ("aten::view_copy", "aten::squeeze_copy", "aten::unsqueeze_copy")


# The copies (copy_region records) and what says how they copy (None: this one it does not).
COPIES: dict[str, Callable[[torch.fx.Node], object]] = {
    "cmx::quantized_cat": concat.runs,
    "cmx::quantized_upsample_nearest": upsample.geometry,
    "cmx::quantized_depth_to_space": transpose_conv.geometry,
    **{name: permute_plan for name in PERMUTES},
    **{name: selection_run for name in SELECTIONS},
}


def supports(node: torch.fx.Node, constants: frozenset[str] = frozenset()) -> bool:
    """Whether the backend runs this node exactly as today's kernel does (else it stays outside).
    `constants`: the names of the program's constant placeholders (parameters, buffers, lifted)."""
    name = op_name(node)
    if any(isinstance(a, torch.fx.Node) and a.name in constants for a in operands(node)):
        return False
    if name in COPIES:
        return COPIES[name](node) is not None
    if name in s16_layers.BUILDERS:
        return s16_layers.supports(node)
    if (name in _VIEWS or name == "dim_order_ops::_clone_dim_order") and is_int16(node):
        # an int16 reshape: a copy of its bytes, or element copies (copy_layers.transpose16_shape)
        return is_int16(fx_args(node)[0]) and (byte_identical_view(node) or transpose16_shape(node) is not None)
    if name not in BUILDERS or not is_int8(node):
        return False
    if name in _VIEWS:
        return is_int8(fx_args(node)[0]) and (byte_identical_view(node) or view_transpose_shape(node) is not None)
    if name == "dim_order_ops::_clone_dim_order":
        return is_int8(fx_args(node)[0]) and (byte_identical_view(node) or transpose_shape(node) is not None)
    if name in own_layers.CLAMPS:
        return own_layers.clamp_bound(node)
    if name == "cortex_m::quantized_add":
        return _binary_ok(node, 0, 4)
    if name == "cortex_m::quantized_mul":
        return _binary_ok(node, 0, 2)
    if name == "cortex_m::softmax":
        dim = int(fx_args(node)[1])
        return dim in (-1, _val(node).dim() - 1)
    if name == "cmx::quantized_masked_softmax":
        return is_int8(fx_args(node)[0])
    if name in (
        "cortex_m::quantized_conv2d",
        "cortex_m::quantized_depthwise_conv2d",
        "cortex_m::quantized_avg_pool2d",
        "cortex_m::quantized_max_pool2d",
    ):
        return bool(_val(fx_args(node)[0]).dim() == 4)
    return True


def _depthwise(node: torch.fx.Node, emit: Emit, scratch: int) -> Layer:
    (x, weight, bias, stride, padding, dilation, mult_ch, in_off, out_off, mult, shift, act_min, act_max, _) = fx_args(
        node
    )
    w = _val(weight)
    out_c = int(_val(node).shape[1])
    kind = depthwise_kind(node, emit.isa)
    return Layer(
        kind,
        {
            **conv_layers.cmsis_operands(node, emit, scratch, (x, weight, bias, mult, shift), kind == "depthwise_s4"),
            "ch_mult": mult_ch,
            **window_fields(in_off, out_off, stride, padding, dilation, (act_min, act_max)),
            **dims_fields("input", dims(_val(x))),
            **dims_fields("filter", (1, int(w.shape[1]), int(w.shape[2]), out_c)),
            **dims_fields("bias", (1, 1, 1, out_c)),
            **dims_fields("output", dims(_val(node))),
        },
        node=node.name,
    )


def _linear(node: torch.fx.Node, emit: Emit, scratch: int) -> Layer:
    x, weight, bias, kernel_sum, in_off, w_off, out_off, mults, shifts, act_max, act_min = fx_args(node)
    xv, out = _val(x), _val(node)
    in_feat, out_feat = int(xv.shape[-1]), int(out.shape[-1])
    batches = 1
    for s in xv.shape[:-1]:
        batches *= int(s)
    int4 = int4_kind(node)  # 4-bit weights: cmx_fully_connected_s4 on a DSP core, else arm_fully_connected_s4
    own = own_kernels.fc_applies(in_feat, int(w_off), emit.isa) if not int4 else emit.isa == "DSP"
    kind = ("fully_connected_s4" if own else "linear_s4") if int4 else "fully_connected" if own else "linear"
    filt = np.frombuffer(emit.constant_bytes(weight), dtype=np.int8).reshape(out_feat, in_feat)
    if own:  # cmx-gen's kernel: its weights laid out as it reads them
        packed = fc_s4_weights(filt) if int4 else fc_weights(filt, own_kernels.FC_GROUP[emit.isa])
        weight_at = emit.data(packed)
    else:
        weight_at = conv_layers.weight_operand(emit, weight, int4)
    return Layer(
        kind,
        {
            "input": emit.operand(x),
            "output": emit.operand(node),
            "weight": weight_at,
            "bias": _s4_bias(emit, filt, bias, kernel_sum, int(in_off)) if int4 else emit.constant(bias),
            "kernel_sum": NONE if int4 else emit.constant(kernel_sum),
            "multiplier": int(mults[0]),
            "shift": int(shifts[0]),
            "input_offset": in_off,
            "filter_offset": w_off,
            "output_offset": out_off,
            "act_min": act_min,
            "act_max": act_max,
            **dims_fields("input", (batches, 1, 1, in_feat)),
            **dims_fields("filter", (in_feat, 1, 1, out_feat)),
            **dims_fields("bias", (1, 1, 1, out_feat)),
            **dims_fields("output", (batches, 1, 1, out_feat)),
        },
        node=node.name,
    )


def _s4_bias(emit: Emit, filt: np.ndarray[Any, Any], bias: Any, kernel_sum: Any, input_offset: int) -> int:
    """arm_fully_connected_s4 reads the bias and never a kernel sum. On the DSP cores the cortex_m pass
    gives the bias; on a Helium core it folds the bias into kernel_sum (input offset x each row's sum +
    bias) and gives none, so the bias is taken back out of it (filt: the weights [rows][cols])."""
    if kernel_sum is None:
        return emit.constant(bias)
    sums = np.frombuffer(emit.constant_bytes(kernel_sum), dtype="<i4").reshape(-1)
    return emit.data(own_kernels.bias_from_sums(sums, filt, input_offset).astype("<i4").tobytes())


def _broadcast(a: torch.fx.Node, b: torch.fx.Node, out: torch.fx.Node) -> tuple[bool, int]:
    """(swap the inputs, elements per kernel call), as the add/mul wrappers decide."""
    av, bv, ov = _val(a), _val(b), _val(out)
    if _channel_broadcast(av, bv):
        return av.numel() < bv.numel(), int(av.shape[1])
    return False, int(ov.numel())


def _add(node: torch.fx.Node, emit: Emit, scratch: int) -> Layer:
    a, zp1, m1, s1, b, zp2, m2, s2, out_zp, out_m, out_s, act_min, act_max = fx_args(node)
    swap, block = _broadcast(a, b, node)
    first, second = ((b, zp2, m2, s2), (a, zp1, m1, s1)) if swap else ((a, zp1, m1, s1), (b, zp2, m2, s2))
    return Layer(
        "add",
        {
            "input1": emit.operand(first[0]),
            "input2": emit.operand(second[0]),
            "output": emit.operand(node),
            "input1_offset": -first[1],
            "input1_multiplier": first[2],
            "input1_shift": first[3],
            "input2_offset": -second[1],
            "input2_multiplier": second[2],
            "input2_shift": second[3],
            "left_shift": 20,
            "output_offset": out_zp,
            "output_multiplier": out_m,
            "output_shift": out_s,
            "act_min": act_min,
            "act_max": act_max,
            "block": block,
            "count": int(_val(node).numel()),
        },
        node=node.name,
    )


def _mul(node: torch.fx.Node, emit: Emit, scratch: int) -> Layer:
    a, zp1, b, zp2, out_zp, out_m, out_s = fx_args(node)
    swap, block = _broadcast(a, b, node)
    (first, fz), (second, sz) = ((b, zp2), (a, zp1)) if swap else ((a, zp1), (b, zp2))
    return Layer(
        "mul",
        {
            "input1": emit.operand(first),
            "input2": emit.operand(second),
            "output": emit.operand(node),
            "input1_offset": -fz,
            "input2_offset": -sz,
            "output_offset": out_zp,
            "output_multiplier": out_m,
            "output_shift": out_s,
            "act_min": -128,
            "act_max": 127,
            "block": block,
            "count": int(_val(node).numel()),
        },
        node=node.name,
    )


def _pool_fields(
    x: Any, node: torch.fx.Node, kernel: Any, stride: Any, padding: Any, act_min: int, act_max: int
) -> dict[str, int]:
    n, h, w, c = dims(_val(x))
    out = _val(node)
    return {
        "stride_w": stride[1],
        "stride_h": stride[0],
        "pad_w": padding[1],
        "pad_h": padding[0],
        "act_min": act_min,
        "act_max": act_max,
        **dims_fields("input", (n, h, w, c)),
        **dims_fields("filter", (1, int(kernel[0]), int(kernel[1]), 1)),
        **dims_fields("output", (n, int(out.shape[2]), int(out.shape[3]), c)),
    }


def _avg_pool(node: torch.fx.Node, emit: Emit, scratch: int) -> Layer:
    x, kernel, stride, padding = fx_args(node)[:4]
    return Layer(
        "avg_pool",
        {
            "input": emit.operand(x),
            "output": emit.operand(node),
            "scratch": scratch,
            "scratch_bytes": scratch_bytes(node, emit.isa),
            **_pool_fields(x, node, kernel, stride, padding, -128, 127),
        },
        node=node.name,
    )


def _max_pool(node: torch.fx.Node, emit: Emit, scratch: int) -> Layer:
    x, kernel, stride, padding, _dilation, _ceil, _in_zp, _out_zp, act_min, act_max = fx_args(node)
    return Layer(
        "max_pool",
        {
            "input": emit.operand(x),
            "output": emit.operand(node),
            **_pool_fields(x, node, kernel, stride, padding, act_min, act_max),
        },
        node=node.name,
    )


def _softmax(node: torch.fx.Node, emit: Emit, scratch: int) -> Layer:
    """cortex_m::softmax, or cmx::quantized_masked_softmax (its rows' allowed [lo, hi) keys as int32
    pairs in the plan: `ranges`, `mask_rows` of them) on arm_softmax_s8 over the last dimension."""
    if op_name(node) == "cmx::quantized_masked_softmax":
        x, ranges, mult, shift, diff_min = fx_args(node)
        masked = {"ranges": emit.data(np.asarray(ranges, "<i4").tobytes()), "mask_rows": len(ranges) // 2}
    else:
        x, _dim, _in_zp, _out_zp, mult, shift, diff_min = fx_args(node)
        masked = {"ranges": NONE, "mask_rows": 0}
    val = _val(x)
    row = int(val.shape[-1])
    return Layer(
        "softmax",
        {
            "input": emit.operand(x),
            "output": emit.operand(node),
            "rows": int(val.numel()) // row,
            "row_size": row,
            "multiplier": mult,
            "shift": shift,
            "diff_min": diff_min,
            **masked,
        },
        node=node.name,
    )


def _copy(node: torch.fx.Node, emit: Emit, scratch: int) -> Layer:
    return Layer(
        "copy",
        {
            "input": emit.operand(fx_args(node)[0]),
            "output": emit.operand(node),
            "nbytes": int(_val(node).numel()) * _val(node).element_size(),
        },
        node=node.name,
    )


def _view(node: torch.fx.Node, emit: Emit, scratch: int) -> Layer:
    """A reshape: a copy of its bytes, or of a channels-last input a transpose into logical order."""
    shape = view_transpose_shape(node)
    return _copy(node, emit, scratch) if shape is None else transpose_layer(node, emit, shape)


def _layout(node: torch.fx.Node, emit: Emit, scratch: int) -> Layer:
    """A _clone_dim_order: a transpose, or a copy where both orders lay the bytes out alike."""
    shape = transpose_shape(node)
    return _copy(node, emit, scratch) if shape is None else transpose_layer(node, emit, shape)


Builder = Callable[[torch.fx.Node, Emit, int], Layer]


BUILDERS: dict[str, Builder] = {
    **own_layers.BUILDERS,
    **s16_layers.BUILDERS,
    "cortex_m::quantized_conv2d": conv_layers.conv,
    "cortex_m::quantized_depthwise_conv2d": _depthwise,
    "cortex_m::quantized_linear": _linear,
    "cortex_m::quantized_add": _add,
    "cortex_m::quantized_mul": _mul,
    "cortex_m::quantized_avg_pool2d": _avg_pool,
    "cortex_m::quantized_max_pool2d": _max_pool,
    "cortex_m::softmax": _softmax,
    "cmx::quantized_masked_softmax": _softmax,
    "aten::view_copy": _view,
    "aten::squeeze_copy": _view,
    "aten::unsqueeze_copy": _view,
    "dim_order_ops::_clone_dim_order": _layout,
}
