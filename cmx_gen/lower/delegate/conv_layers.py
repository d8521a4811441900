"""Plan layers for cortex_m::quantized_conv2d: CMSIS-NN's arguments as the cortex_m wrapper computes
them (layers.py's rule), or cmx-gen's kernels' with their weights and constants laid out as they
read them (cmx_conv_row_s8 on the DSP cores, cmx_conv_helium_s8 on Helium; own_kernels.py)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import numpy as np
import torch

from cmx_gen.lower.delegate import kernel_numbers, own_kernels
from cmx_gen.lower.delegate.cmsis_sizes import dims
from cmx_gen.lower.delegate.emit import Emit, dims_fields, shape4, window_fields
from cmx_gen.lower.delegate.kernel_choice import conv_kind, row_plan, scratch_bytes
from cmx_gen.lower.delegate.kernel_choice import node_val as _val
from cmx_gen.lower.delegate.plan import Layer
from cmx_gen.lower.facts import S4_KINDS
from cmx_gen.lower.fx_nodes import fx_args
from cmx_gen.lower.weight_bits import pack_int4


def conv(node: torch.fx.Node, emit: Emit, scratch: int) -> Layer:
    """cortex_m::quantized_conv2d on the kernel kernel_choice.conv_kind names: CMSIS-NN's wrapper (or
    arm_convolve_s8) with the wrapper's arguments, or one of cmx-gen's with its layouts."""
    x, weight, bias, stride, padding, dilation, in_off, out_off, mult, shift, act_min, act_max, _ = fx_args(node)
    w = _val(weight)
    kind = conv_kind(node, emit.isa)
    if kind == "conv_row":
        return _conv_row(node, emit, scratch)
    if kind == "conv_helium":
        return _conv_helium(node, emit, scratch)
    return Layer(
        kind,
        {
            **cmsis_operands(node, emit, scratch, (x, weight, bias, mult, shift), kind in S4_KINDS),
            **window_fields(in_off, out_off, stride, padding, dilation, (act_min, act_max)),
            **dims_fields("input", dims(_val(x))),
            **dims_fields("filter", shape4(w)),  # OHWI already
            **dims_fields("bias", (1, 1, 1, int(_val(node).shape[1]))),
            **dims_fields("output", dims(_val(node))),
        },
        node=node.name,
    )


def weight_operand(emit: Emit, weight: Any, int4: bool) -> int:
    """A layer's weights in the plan: the graph constant as it is, or (int4) its values packed two a byte."""
    if not int4:
        return emit.constant(weight)
    return emit.data(pack_int4(np.frombuffer(emit.constant_bytes(weight), dtype=np.int8)))


def cmsis_operands(
    node: torch.fx.Node, emit: Emit, scratch: int, args: tuple[Any, ...], int4: bool = False
) -> dict[str, int]:
    """The operands of a convolution or depthwise record that passes CMSIS-NN's arguments: its
    tensors, constants (args: input, weight, bias, multipliers, shifts; int4: weights two a byte) and
    scratch."""
    x, weight, bias, mult, shift = args
    return {
        "input": emit.operand(x),
        "output": emit.operand(node),
        "weight": weight_operand(emit, weight, int4),
        "bias": emit.constant(bias),
        "multipliers": emit.constant(mult),
        "shifts": emit.constant(shift),
        "scratch": scratch,
        "scratch_bytes": scratch_bytes(node, emit.isa),
    }


def int32s(value: Any, emit: Emit) -> np.ndarray[Any, Any]:
    """An int32 argument's values: a graph constant's bytes, or the list the node holds."""
    if isinstance(value, torch.fx.Node):
        return np.frombuffer(emit.constant_bytes(value), dtype="<i4")
    return np.asarray([int(v) for v in value], dtype="<i4")


def _conv_helium(node: torch.fx.Node, emit: Emit, scratch: int) -> Layer:
    """cmx_conv_helium_s8: a convolution's arguments, its filter [out][kh * kw * in] in
    cmx_fully_connected_s8's Helium layout, its kernel sums, multipliers and shifts as it reads them."""
    x, weight, bias, stride, padding, dilation, in_off, out_off, mult, shift, act_min, act_max, _ = fx_args(node)
    w = _val(weight)
    out_c = int(_val(node).shape[1])
    filt = np.frombuffer(emit.constant_bytes(weight), dtype=np.int8).reshape(out_c, -1)
    bias_values = np.frombuffer(emit.constant_bytes(bias), dtype="<i4") if bias is not None else None
    sums = own_kernels.kernel_sums(filt, bias_values, int(in_off))
    constants = kernel_numbers.helium_constants(sums, int32s(mult, emit), int32s(shift, emit))
    return Layer(
        "conv_helium",
        {
            "input": emit.operand(x),
            "output": emit.operand(node),
            "weight": emit.data(kernel_numbers.fc_weights(filt, own_kernels.FC_GROUP[emit.isa])),
            "constants": emit.data(constants),
            "scratch": scratch,
            "scratch_bytes": scratch_bytes(node, emit.isa),
            **window_fields(in_off, out_off, stride, padding, dilation, (act_min, act_max)),
            **dims_fields("input", dims(_val(x))),
            **dims_fields("filter", shape4(w)),
            **dims_fields("bias", (1, 1, 1, out_c)),
            **dims_fields("output", dims(_val(node))),
        },
        node=node.name,
    )


def _conv_row(node: torch.fx.Node, emit: Emit, scratch: int) -> Layer:
    """cmx_conv_row_s8: the same arguments, its weights and constants (bias, multipliers, shifts) laid
    out as it reads them."""
    x, weight, bias, _stride, _padding, _dilation, in_off, out_off, mult, shift, act_min, act_max, _ = fx_args(node)
    geometry, chunk = row_plan(node)
    filter_ohwi = np.frombuffer(emit.constant_bytes(weight), dtype=np.int8).reshape(geometry.out_ch, -1)
    weights = kernel_numbers.row_weights(filter_ohwi, geometry)
    bias_values = int32s(bias, emit) if bias is not None else None
    constants = kernel_numbers.row_constants(
        geometry, int(out_off), bias_values, int32s(mult, emit), int32s(shift, emit)
    )
    return Layer(
        "conv_row",
        {
            "input": emit.operand(x),
            "output": emit.operand(node),
            "weight": emit.data(weights),
            "constants": emit.data(constants),
            "scratch": scratch,
            "scratch_bytes": geometry.scratch_bytes(chunk),
            **asdict(geometry),
            "row_bytes": geometry.row_bytes,
            "chunk": chunk,
            "input_offset": in_off,
            "output_offset": out_off,
            "act_min": act_min,
            "act_max": act_max,
        },
        node=node.name,
    )
