"""Bit-exact host models of the kernels behind cmx-gen's own int8 layers (issue 34): CMSIS-NN's
arm_lstm_unidirectional_s8 and arm_batch_matmul_s8, and cmx-gen's cmx_gru_s8, cmx_layer_norm_s8 and
cmx_mean_s8 (kernels/nn/). Each `cmx::quantized_*` op's Python implementation (recurrent_graph.py,
own_ops.py) is one of these, so the reference a PASS is checked against is the kernel's arithmetic.
Written from the kernel sources at the CMSIS-NN commit ExecuTorch pins; the scalar, DSP and MVE paths
share it (the firmware tests run them on M55 and M4; tests/lower/test_gru_kernel.py compiles
cmx_gru_s8 for the build machine against gru_s8).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cmx_gen.lower.host_models.kernel_models import requantize


# --- arm_lstm_unidirectional_s8 (Source/LSTMFunctions/, NNSupportFunctions/arm_nn_lstm_*) ----------
def _sigmoid_table() -> NDArray[np.int64]:
    """sigmoid_table_uint16 (arm_nntables.c): sigmoid(i / 24) in 0.16 fixed point, each entry moved by
    half the interpolation's error at the middle of its segment; the last entry is the top of the
    range. tests/lower/test_recurrent.py compares it with the SDK's table when CMSIS_NN_PATH is set."""
    x = np.arange(257, dtype=np.float64) / 24.0
    at = 65536.0 / (1.0 + np.exp(-x))
    middle = 65536.0 / (1.0 + np.exp(-(x[:-1] + 0.5 / 24.0)))
    table: NDArray[np.int64] = np.floor(at[:-1] - ((at[1:] + at[:-1]) / 2.0 - middle) / 2.0 + 0.5).astype(np.int64)
    table[-1] = 65535
    return table


SIGMOID_TABLE = _sigmoid_table()


def activation_s16(x: NDArray[Any], left_shift: int, kind: str) -> NDArray[np.int64]:
    """arm_nn_activation_s16: sigmoid or tanh of int16 values in Q3.12 (after `left_shift`) to Q0.15,
    by the interpolated table, in the C code's uint32 arithmetic."""
    sigmoid = kind == "sigmoid"
    abs_shift = 9 if sigmoid else 8
    saturated = (0x7FFF << 10) if sigmoid else (0xFFFF << 8)
    mult = 3 if left_shift < 0 else 3 << left_shift
    abs_left = -left_shift if left_shift < 0 else 0
    rounding = 1 << (abs_left - 1) if abs_left > 0 else 0
    data = (np.asarray(x, dtype=np.int64) * mult + rounding) >> abs_left
    magnitude = np.abs(data)
    high = magnitude >> abs_shift
    index = np.minimum(high, 254)
    low_value, high_value = SIGMOID_TABLE[index], SIGMOID_TABLE[index + 1]
    frac = magnitude & (0x1FF if sigmoid else 0xFF)
    result = np.where(high >= 255, saturated, (low_value << abs_shift) + frac * (high_value - low_value))
    if sigmoid:
        result = np.where(data >= 0, result + (1 << 9), (1 << 25) - result + (1 << 9) - 1) >> 10
    else:
        result = np.where(data >= 0, result - (1 << 23) + (1 << 7), -result + (1 << 23) + (1 << 7) - 1)
        result = (result & 0xFFFFFFFF) >> 8
    int16: NDArray[np.int64] = ((result & 0xFFFF) ^ 0x8000) - 0x8000  # (int16_t)result
    return int16


GateRun = Callable[[NDArray[Any], NDArray[Any] | None, Any], NDArray[np.int64]]


def lstm_gate(requant: Callable[[NDArray[Any], int, int], NDArray[np.int64]]) -> GateRun:
    """arm_nn_lstm_calculate_gate_s8_s16 (`requant` arm_nn_requantize) or _s16 (arm_nn_requantize_s64):
    each part (values times int8 weights, plus its effective bias) requantized into a zeroed int16 row, the
    hidden part added with saturation, then the gate's activation."""

    def gate_run(x: NDArray[Any], h: NDArray[Any] | None, gate: Any) -> NDArray[np.int64]:
        acc = gate.input_effective_bias.astype(np.int64) + gate.input_weights.astype(np.int64) @ x
        out = np.clip(requant(acc, gate.input_multiplier, gate.input_shift), -32768, 32767)
        if h is not None:
            acc = gate.hidden_effective_bias.astype(np.int64) + gate.hidden_weights.astype(np.int64) @ h
            out = np.clip(out + requant(acc, gate.hidden_multiplier, gate.hidden_shift), -32768, 32767)
        return activation_s16(out, 0, gate.activation)

    return gate_run


_gate = lstm_gate(requantize)  # the s8 kernel's (the GRU's gates too)


def lstm_steps(
    x: NDArray[Any], quant: Any, order: tuple[bool, bool], gate: GateRun, out_range: tuple[int, int]
) -> NDArray[np.int64]:
    """arm_lstm_unidirectional_s8 / _s16 with zero initial state: x [batch, time, input] (batch_first)
    or [time, batch, input] to the hidden state of every step in the same layout, `gate` the kernel's
    gate computation, `out_range` its output's; order: (batch_first, reverse), `reverse` running the
    steps last to first (the backend runs the kernel on the steps reversed). `quant`: lstm.LstmQuant."""
    batch_first, reverse = order
    seq = np.asarray(x, dtype=np.int64)
    seq = seq if batch_first else seq.transpose(1, 0, 2)
    g = quant.gates
    out = np.zeros(seq.shape[:2] + (quant.hidden_size,), dtype=np.int64)
    for b in range(seq.shape[0]):
        cell = np.zeros(quant.hidden_size, dtype=np.int64)
        h: NDArray[Any] | None = None
        for t in reversed(range(seq.shape[1])) if reverse else range(seq.shape[1]):
            step = seq[b, t]
            forget = gate(step, h, g["forget"])
            cell = np.clip(
                requantize(forget * cell, quant.forget_to_cell_multiplier, quant.forget_to_cell_shift), -32768, 32767
            )
            update = gate(step, h, g["input"]) * gate(step, h, g["cell"])
            cell = np.clip(
                cell + requantize(update, quant.input_to_cell_multiplier, quant.input_to_cell_shift),
                -quant.cell_clip,
                quant.cell_clip,
            )
            output = gate(step, h, g["output"])
            squashed = activation_s16(cell, quant.cell_scale_power + 12, "tanh")
            h = np.clip(
                requantize(output * squashed, quant.output_multiplier, quant.output_shift) + quant.output_offset,
                *out_range,
            )
            out[b, t] = h
    return out if batch_first else out.transpose(1, 0, 2)


def lstm_s8(x: NDArray[np.int8], quant: Any, batch_first: bool, reverse: bool = False) -> NDArray[np.int8]:
    """arm_lstm_unidirectional_s8 (lstm_steps), int8 in and out."""
    return lstm_steps(x, quant, (batch_first, reverse), _gate, (-128, 127)).astype(np.int8)


# --- cmx_gru_s8 (kernels/nn/cmx_gru_s8.c, cmx-gen's own, from CMSIS-NN's LSTM building blocks) -------
def _product_s16(
    x: NDArray[Any], weights: NDArray[Any], bias: NDArray[Any], mult: int, shift: int
) -> NDArray[np.int64]:
    """arm_nn_vec_mat_mul_result_acc_s8_s16 into a zeroed int16 row."""
    acc = bias.astype(np.int64) + weights.astype(np.int64) @ x
    return np.clip(requantize(acc, mult, shift), -32768, 32767)


def gru_s8(x: NDArray[np.int8], quant: Any, batch_first: bool, reverse: bool = False) -> NDArray[np.int8]:
    """cmx_gru_s8 with zero initial state: x [batch, time, input] (batch_first) or [time, batch, input]
    to the hidden state of every step, int8, in the same layout; `reverse` runs the steps last to
    first. `quant`: gru.GruQuant."""
    seq = np.asarray(x, dtype=np.int64)
    seq = seq if batch_first else seq.transpose(1, 0, 2)
    g = quant.gates
    out = np.zeros(seq.shape[:2] + (quant.hidden_size,), dtype=np.int64)
    for b in range(seq.shape[0]):
        h = np.full(quant.hidden_size, quant.output_offset, dtype=np.int64)  # a zero hidden state
        for t in reversed(range(seq.shape[1])) if reverse else range(seq.shape[1]):
            step = seq[b, t]
            reset, update = _gate(step, h, g["reset"]), _gate(step, h, g["update"])
            n = g["candidate"]
            from_input = _product_s16(step, n.input_weights, n.input_effective_bias, n.input_multiplier, n.input_shift)
            from_hidden = _product_s16(
                h, n.hidden_weights, n.hidden_effective_bias, n.hidden_multiplier, n.hidden_shift
            )
            gated = requantize(reset * from_hidden, quant.reset_multiplier, quant.reset_shift)
            candidate = activation_s16(np.clip(from_input + gated, -32768, 32767), 0, "tanh")
            h_q15 = np.clip(
                requantize(h + quant.hidden_offset, quant.hidden_q15_multiplier, quant.hidden_q15_shift), -32768, 32767
            )
            mixed = (32768 - update) * candidate + update * h_q15
            h = np.clip(requantize(mixed, quant.output_multiplier, quant.output_shift) + quant.output_offset, -128, 127)
            out[b, t] = h
    out = out if batch_first else out.transpose(1, 0, 2)
    return out.astype(np.int8)


# --- cmx-gen's own element-wise layers (kernels/nn/cmx_layer_norm_s8.c, cmx_mean_s8.c) -------------
def _isqrt(values: NDArray[Any]) -> NDArray[np.int64]:
    """floor(sqrt(v)) of non-negative int64 values, exactly (the kernel's bit-by-bit square root)."""
    return np.array([math.isqrt(int(v)) for v in values.reshape(-1)], dtype=np.int64).reshape(values.shape)


def _div_round(num: NDArray[Any], den: NDArray[Any]) -> NDArray[np.int64]:
    """num / den rounded half away from zero, den > 0 (C: (|num| + den / 2) / den with num's sign)."""
    magnitude = (np.abs(num) + den // 2) // den
    result: NDArray[np.int64] = np.where(num < 0, -magnitude, magnitude)
    return result


def layer_norm_s8(
    x: NDArray[np.int8], input_offset: int, output_offset: int, eps_term: int, gains: NDArray[Any], biases: NDArray[Any]
) -> NDArray[np.int8]:
    """cmx_layer_norm_s8 over the last dimension, in integers: d = x + input_offset, S1 = sum d,
    S2 = sum d^2, R = isqrt((C S2 - S1^2 + eps_term) << 16) (256 C std / s_in), then each output is
    round((256 (C d - S1) gain / R + bias) / 2^16) + output_offset."""
    rows = np.asarray(x, dtype=np.int64).reshape(-1, x.shape[-1])
    channels = rows.shape[1]
    d = rows + input_offset
    s1 = d.sum(axis=1, keepdims=True)
    s2 = (d * d).sum(axis=1, keepdims=True)
    r = _isqrt((channels * s2 - s1 * s1 + eps_term) << 16)
    centred = channels * d - s1
    scaled = np.where(r > 0, _div_round(256 * centred * gains.astype(np.int64), np.maximum(r, 1)), 0)
    y = ((scaled + biases.astype(np.int64) + (1 << 15)) >> 16) + output_offset
    return np.clip(y, -128, 127).astype(np.int8).reshape(x.shape)


def mean_s8(
    x: NDArray[np.int8],
    outer: int,
    count: int,
    inner: int,
    mult: int,
    shift: int,
    input_offset: int,
    output_offset: int,
) -> NDArray[np.int8]:
    """cmx_mean_s8: x read as [outer][count][inner], int32 sums over count (input offset added), then
    arm_nn_requantize and the output offset."""
    sums = (np.asarray(x, dtype=np.int64).reshape(outer, count, inner) + input_offset).sum(axis=1)
    y = requantize(sums, mult, shift) + output_offset
    return np.clip(y, -128, 127).astype(np.int8)


def bmm_s8(
    a: NDArray[np.int8], a_offset: int, b_t: NDArray[np.int8], b_offset: int, output_offset: int, mult: int, shift: int
) -> NDArray[np.int8]:
    """arm_batch_matmul_s8: a [batch][rows][inner] times b_t [batch][cols][inner] (b transposed), int32
    sums of (a + a_offset)(b + b_offset), arm_nn_requantize, output offset, in exact integers."""
    lhs = np.asarray(a, dtype=np.int64) + a_offset
    rhs = np.asarray(b_t, dtype=np.int64) + b_offset
    acc = np.einsum("bik,bjk->bij", lhs, rhs)
    return np.clip(requantize(acc, mult, shift) + output_offset, -128, 127).astype(np.int8)
