"""Plan layers for cmx-gen's own int8 ops (issue 34): the recurrent layers (cmx::quantized_lstm on
arm_lstm_unidirectional_s8, cmx::quantized_gru on cmx_gru_s8), cmx::quantized_bmm on
arm_batch_matmul_s8, and cmx_layer_norm_s8, cmx_mean_s8 and cmx_lut_s8. Each builder computes its
integers with the function the op's host implementation calls (lstm.quantize, gru.quantize,
own_ops.layer_norm_args), so the plan and the reference cannot differ."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from cmx_gen.lower.delegate.conv_layers import int32s
from cmx_gen.lower.delegate.emit import Emit, dims_fields
from cmx_gen.lower.delegate.kernel_choice import node_val as _val
from cmx_gen.lower.delegate.plan import NONE, Layer
from cmx_gen.lower.delegate.plan_fields import GRU_SCALARS, LSTM_SCALARS
from cmx_gen.lower.fx_nodes import fx_args, op_name
from cmx_gen.lower.ops import gru, lstm, own_ops


def _float_constant(node: Any, emit: Emit) -> torch.Tensor | None:
    """A float32 weight of the subgraph as a tensor (its bytes, read in the shape of its value)."""
    if node is None:
        return None
    raw = np.frombuffer(emit.constant_bytes(node), dtype=np.float32)
    return torch.from_numpy(raw.copy()).reshape(tuple(_val(node).shape))


def lstm_layer(node: torch.fx.Node, emit: Emit, scratch: int) -> Layer:
    """cmx::quantized_lstm (lstm, arm_lstm_unidirectional_s8) and cmx::quantized_lstm_s16 (lstm_s16,
    arm_lstm_unidirectional_s16, int64 effective biases): the integers come from the float weights by
    lstm.quantize / quantize_s16, the functions the nodes' host implementations call, so the plan and
    the reference cannot differ."""
    args = fx_args(node)
    batch_first, reverse = args[5:7]
    weights = tuple(_float_constant(w, emit) for w in args[1:5])
    if op_name(node) == "cmx::quantized_lstm_s16":
        x_scale, h_scale, cell_power = args[7:10]
        quant = lstm.quantize_s16(weights, float(x_scale), float(h_scale), int(cell_power))  # type: ignore[arg-type]
    else:
        x_scale, x_zp, h_scale, h_zp, cell_power = args[7:12]
        quant = lstm.quantize(weights, (float(x_scale), int(x_zp)), (float(h_scale), int(h_zp)), int(cell_power))  # type: ignore[arg-type]
    fields = _sequence(node, emit, scratch, (batch_first, reverse), quant, LSTM_SCALARS)
    for name, gate in quant.gates.items():
        fields.update(_gate_fields(name, gate, emit))
        fields[f"{name}_activation"] = LSTM_ACTIVATIONS[gate.activation]
    return Layer("lstm" if op_name(node) == "cmx::quantized_lstm" else "lstm_s16", fields, node=node.name)


LSTM_ACTIVATIONS = {"sigmoid": 0, "tanh": 1}  # arm_nn_activation_type


def _layer_norm(node: torch.fx.Node, emit: Emit, scratch: int) -> Layer:
    """cmx::quantized_layer_norm on cmx_layer_norm_s8, its integers from own_ops.layer_norm_args."""
    x, weight, bias, eps, x_scale, x_zp, y_scale, y_zp = fx_args(node)
    shape = _val(x).shape
    channels = int(shape[-1])
    gamma, beta = _float_constant(weight, emit), _float_constant(bias, emit)
    in_off, out_off, eps_term, gains, biases = own_ops.layer_norm_args(
        channels,
        gamma,
        beta,
        float(eps),
        (float(x_scale), int(x_zp)),
        (float(y_scale), int(y_zp)),
    )
    return Layer(
        "layer_norm",
        {
            "input": emit.operand(x),
            "output": emit.operand(node),
            "rows": int(_val(x).numel()) // channels,
            "channels": channels,
            "input_offset": in_off,
            "output_offset": out_off,
            "eps_lo": (eps_term & 0xFFFFFFFF) - ((eps_term & 0x80000000) << 1),  # the low word, as a signed int32
            "eps_hi": eps_term >> 32,
            "gains": emit.data(gains.astype("<i4").tobytes()),
            "biases": emit.data(biases.astype("<i4").tobytes()),
        },
        node=node.name,
    )


def _mean(node: torch.fx.Node, emit: Emit, scratch: int) -> Layer:
    x, outer, count, inner, mult, shift, in_off, out_off, _shape = fx_args(node)
    names = ("outer", "count", "inner", "multiplier", "shift", "input_offset", "output_offset")
    values = (outer, count, inner, mult, shift, in_off, out_off)
    fields = {"input": emit.operand(x), "output": emit.operand(node), **{n: int(str(v)) for n, v in zip(names, values)}}
    return Layer("mean", fields, node=node.name)


def bmm_layer(node: torch.fx.Node, emit: Emit, scratch: int) -> Layer:
    """cmx::quantized_bmm on arm_batch_matmul_s8 (the arguments of upstream's cortex_m wrapper), or
    cmx::quantized_bmm_s16 on arm_batch_matmul_s16 (kind bmm_s16: int16 operands, offsets 0)."""
    wide = op_name(node) == "cmx::quantized_bmm_s16"
    if wide:
        a, b, transposed, mult, shift = fx_args(node)
        a_off = b_off = out_off = 0
    else:
        a, a_off, b, b_off, transposed, out_off, mult, shift = fx_args(node)
    batches, rows, inner = (int(d) for d in _val(a).shape)
    cols = int(_val(node).shape[2])
    fields = {
        "input1": emit.operand(a),
        "input2": emit.operand(b),
        "output": emit.operand(node),
        "scratch": scratch,
        "batches": batches,
        "rows": rows,
        "inner": inner,
        "cols": cols,
        "transposed": int(bool(transposed)),
        **{
            n: int(str(v))
            for n, v in zip(
                ("input1_offset", "input2_offset", "output_offset", "multiplier", "shift"),
                (a_off, b_off, out_off, mult, shift),
            )
        },
    }
    return Layer("bmm_s16" if wide else "bmm", fields, node=node.name)


def _linear_per_channel(node: torch.fx.Node, emit: Emit, scratch: int) -> Layer:
    """cmx::quantized_linear_pc on arm_fully_connected_per_channel_s8: the Helium path reads each row's
    kernel sum (input offset times the row's weights, plus the bias) and never the bias; the others the bias."""
    x, weight, bias, in_off, out_off, mults, shifts, act_min, act_max = fx_args(node)
    in_feat, out_feat = int(_val(x).shape[-1]), int(_val(node).shape[-1])
    batches = int(_val(x).numel()) // in_feat
    filt = np.frombuffer(emit.constant_bytes(weight), dtype=np.int8).reshape(out_feat, in_feat)
    biases = np.zeros(out_feat, np.int64) if bias is None else np.frombuffer(emit.constant_bytes(bias), "<i4")
    kernel_sum = int(in_off) * filt.astype(np.int64).sum(axis=1) + biases
    helium = emit.isa == "MVE"
    fields = {
        "input": emit.operand(x),
        "output": emit.operand(node),
        "weight": emit.constant(weight),
        "bias": NONE if helium or bias is None else emit.constant(bias),
        "kernel_sum": emit.data(kernel_sum.astype("<i4").tobytes()) if helium else NONE,
        "multipliers": emit.data(int32s(mults, emit).tobytes()),
        "shifts": emit.data(int32s(shifts, emit).tobytes()),
        "input_offset": int(in_off),
        "filter_offset": 0,
        "output_offset": int(out_off),
        "act_min": int(act_min),
        "act_max": int(act_max),
        **dims_fields("input", (batches, 1, 1, in_feat)),
        **dims_fields("filter", (in_feat, 1, 1, out_feat)),
        **dims_fields("bias", (1, 1, 1, out_feat)),
        **dims_fields("output", (batches, 1, 1, out_feat)),
    }
    return Layer("linear_per_channel", fields, node=node.name)


def _lut(node: torch.fx.Node, emit: Emit, scratch: int) -> Layer:
    """cmx::quantized_lut (its table a list) or upstream's cortex_m::quantized_activation (a GELU, SiLU, ...:
    its table a constant int8 tensor of 256): out = table[in + 128] either way, on cmx_lut_s8."""
    table = fx_args(node)[1]
    entries = emit.constant_bytes(table) if isinstance(table, torch.fx.Node) else np.asarray(table, np.int8).tobytes()
    return _table_layer(node, emit, entries)


def _table_layer(node: torch.fx.Node, emit: Emit, entries: bytes) -> Layer:
    """The lut record of an element-wise table op: its first argument looked up in the 256 `entries`."""
    x = fx_args(node)[0]
    fields = {"input": emit.operand(x), "output": emit.operand(node), "count": int(_val(x).numel())}
    return Layer("lut", fields | {"table": emit.data(entries)}, node=node.name)


def _clamp(node: torch.fx.Node, emit: Emit, scratch: int) -> Layer:
    """Upstream's cortex_m::minimum / maximum of an int8 tensor and one int8 constant (a hardswish's
    clamp at 3, DecomposeHardswishPass) as a table on cmx_lut_s8: out = min(in, c) or max(in, c)."""
    other = fx_args(node)[1]
    bound = int(np.frombuffer(emit.constant_bytes(other), dtype=np.int8)[0])
    pick = min if op_name(node) == "cortex_m::minimum" else max
    return _table_layer(node, emit, np.array([pick(v, bound) for v in range(-128, 128)], dtype=np.int8).tobytes())


# upstream's int8 minimum and maximum, taken where the other operand is one constant (clamp_bound)
CLAMPS = ("cortex_m::minimum", "cortex_m::maximum")
# every op the backend runs as a table (cmx_lut_s8: each element read before it is written, in order)
TABLES = ("cmx::quantized_lut", "cortex_m::quantized_activation", *CLAMPS)


def clamp_bound(node: torch.fx.Node) -> bool:
    """A minimum or maximum of an int8 tensor and one int8 value: a table (_clamp)."""
    x, other = fx_args(node)[:2]
    value = _val(other) if isinstance(other, torch.fx.Node) else None
    return value is not None and value.numel() == 1 and value.dtype == torch.int8 and _val(x).shape == _val(node).shape


def _gate_fields(name: str, gate: lstm.Gate, emit: Emit) -> dict[str, int]:
    """A recurrent gate's words: its multipliers and shifts, its weights and effective biases as plan data."""
    return {
        f"{name}_input_multiplier": gate.input_multiplier,
        f"{name}_input_shift": gate.input_shift,
        f"{name}_input_weights": emit.data(gate.input_weights.tobytes()),
        f"{name}_input_bias": emit.data(_little(gate.input_effective_bias)),
        f"{name}_hidden_multiplier": gate.hidden_multiplier,
        f"{name}_hidden_shift": gate.hidden_shift,
        f"{name}_hidden_weights": emit.data(gate.hidden_weights.tobytes()),
        f"{name}_hidden_bias": emit.data(_little(gate.hidden_effective_bias)),
    }


def _little(values: NDArray[np.signedinteger[Any]]) -> bytes:
    """An effective bias's bytes, little-endian at its own width (int32; int64 for the s16 LSTM)."""
    return values.astype(values.dtype.newbyteorder("<")).tobytes()


def _sequence(
    node: torch.fx.Node, emit: Emit, scratch: int, order: tuple[Any, Any], quant: Any, scalars: tuple[str, ...]
) -> dict[str, int]:
    """The words every recurrent layer starts with: operands, the sizes of the call and its `order`
    (batch first, reverse), and the layer's `scalars` (plan_fields.LSTM_SCALARS, GRU_SCALARS) as its
    quantization holds them."""
    batch_first, reverse = order
    shape = tuple(int(d) for d in _val(fx_args(node)[0]).shape)
    batch, steps = (shape[0], shape[1]) if batch_first else (shape[1], shape[0])
    return {
        "input": emit.operand(fx_args(node)[0]),
        "output": emit.operand(node),
        "scratch": scratch,
        "time_major": 0 if batch_first else 1,
        "batch_size": batch,
        "time_steps": steps,
        "input_size": quant.input_size,
        "hidden_size": quant.hidden_size,
        "reverse": int(bool(reverse)),
        **{name: int(getattr(quant, name)) for name in scalars},
    }


def _gru(node: torch.fx.Node, emit: Emit, scratch: int) -> Layer:
    """cmx::quantized_gru on cmx_gru_s8, its arguments from gru.quantize as the host implementation's."""
    x, w_ih, w_hh, b_ih, b_hh, batch_first, reverse, x_scale, x_zp, h_scale, h_zp = fx_args(node)
    weights = tuple(_float_constant(w, emit) for w in (w_ih, w_hh, b_ih, b_hh))
    quant = gru.quantize(weights, (float(x_scale), int(x_zp)), (float(h_scale), int(h_zp)))  # type: ignore[arg-type]
    fields = _sequence(node, emit, scratch, (batch_first, reverse), quant, GRU_SCALARS)
    for name, gate in quant.gates.items():
        fields.update(_gate_fields(name, gate, emit))
    return Layer("gru", fields, node=node.name)


BUILDERS: dict[str, Callable[[torch.fx.Node, Emit, int], Layer]] = {
    "cmx::quantized_lstm": lstm_layer,
    "cmx::quantized_linear_pc": _linear_per_channel,
    "cmx::quantized_gru": _gru,
    "cmx::quantized_layer_norm": _layer_norm,
    "cmx::quantized_mean": _mean,
    **{name: _clamp if name in CLAMPS else _lut for name in TABLES},
    "cmx::quantized_bmm": bmm_layer,
}
