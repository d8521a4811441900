"""An LSTM as one int8 call of CMSIS-NN's `arm_lstm_unidirectional_s8` (issue 34).

PyTorch exports `nn.LSTM` as one `aten.lstm` node, which to_edge unrolls into a few dozen float ops
per time step. cmx-gen rewrites it first into `cmx::lstm` (one float op per layer, the same float
computation: rewrite step), measures its ranges on the calibration set (`ranges`), and after the
cortex_m passes puts `cmx::quantized_lstm` in its place (int8 in, int8 out, quantize/dequantize at
its edges: `to_int8`). The delegate runs that node with `arm_lstm_unidirectional_s8`; its Python
implementation is the kernel's bit-exact model (layer_models.lstm_s8), so the check stays bit-exact.

How the quantization differs from PyTorch's float LSTM (TFLite's integer LSTM, which CMSIS-NN
implements): int8 input and hidden state (per-tensor, from the calibration ranges), int8 weights per
gate and per tensor (symmetric), int32 biases; each gate's pre-activation is int16 in Q3.12 (so it
saturates at +-8) and goes through a 256-entry interpolated sigmoid/tanh table to Q0.15; the cell
state is int16 with a power-of-two scale chosen to hold the largest calibrated cell value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

GATES = ("forget", "input", "cell", "output")  # CMSIS-NN's order in cmsis_nn_lstm_params
TORCH_ROW = {"input": 0, "forget": 1, "cell": 2, "output": 3}  # PyTorch's weight rows: i, f, g, o
GATE_POWER = -12  # a gate's pre-activation: int16 Q3.12
Q15_POWER = -15  # a gate's activation: int16 Q0.15
CELL_CLIP = 32767  # no clip (PyTorch's LSTM has none)


@dataclass(frozen=True)
class Gate:
    """One gate's arguments as cmsis_nn_lstm_gate holds them (bias folded into the effective biases)."""

    input_multiplier: int
    input_shift: int
    input_weights: NDArray[np.int8]  # [hidden, input]
    input_effective_bias: NDArray[np.signedinteger[Any]]  # bias + input_offset * row sums (int32; s16: int64)
    hidden_multiplier: int
    hidden_shift: int
    hidden_weights: NDArray[np.int8]  # [hidden, hidden]
    hidden_effective_bias: NDArray[np.signedinteger[Any]]  # -output_offset * row sums
    activation: str  # "sigmoid" or "tanh"


@dataclass(frozen=True)
class LstmQuant:
    """cmsis_nn_lstm_params of one layer, but the sizes of the call (time steps, batches)."""

    input_size: int
    hidden_size: int
    input_offset: int
    forget_to_cell_multiplier: int
    forget_to_cell_shift: int
    input_to_cell_multiplier: int
    input_to_cell_shift: int
    cell_clip: int
    cell_scale_power: int
    output_multiplier: int
    output_shift: int
    output_offset: int
    gates: dict[str, Gate]


def multiplier(scale: float) -> tuple[int, int]:
    """(multiplier, shift) of a real scale, as TFLite's QuantizeMultiplier and cortex_m's AOT passes."""
    if scale == 0.0:
        return 0, 0
    mantissa, shift = math.frexp(scale)
    fixed = int(round(mantissa * (1 << 31)))
    if fixed == 1 << 31:
        fixed //= 2
        shift += 1
    return fixed, shift


def symmetric(w: NDArray[Any]) -> tuple[NDArray[np.int8], float]:
    scale = float(np.abs(w).max()) / 127.0 or 1.0
    return np.clip(np.round(w / scale), -127, 127).astype(np.int8), scale


def quantize_gate(
    w_x: NDArray[Any],
    w_h: NDArray[Any],
    input_bias: NDArray[Any],
    hidden_bias: NDArray[Any],
    x_qparams: tuple[float, int],
    h_qparams: tuple[float, int],
    activation: str,
    bias_type: type = np.int32,
) -> Gate:
    """One gate of an LSTM or GRU: int8 weights (symmetric, per tensor), Q3.12 multipliers, and the
    zero points folded into the effective biases; `input_bias` is added at the input part's scale,
    `hidden_bias` at the hidden part's (the GRU candidate's, which r multiplies; else zeros); the effective
    biases as `bias_type` (int64 for the s16 kernels)."""
    (x_scale, x_zp), (h_scale, h_zp) = x_qparams, h_qparams
    wx, sx = symmetric(w_x)
    wh, sh = symmetric(w_h)
    in_mult, in_shift = multiplier(x_scale * sx / 2.0**GATE_POWER)
    h_mult, h_shift = multiplier(h_scale * sh / 2.0**GATE_POWER)
    input_sum = np.round(input_bias / (x_scale * sx)).astype(np.int64) - x_zp * wx.astype(np.int64).sum(axis=1)
    hidden_sum = np.round(hidden_bias / (h_scale * sh)).astype(np.int64) - h_zp * wh.astype(np.int64).sum(axis=1)
    return Gate(
        input_multiplier=in_mult,
        input_shift=in_shift,
        input_weights=wx,
        input_effective_bias=input_sum.astype(bias_type),
        hidden_multiplier=h_mult,
        hidden_shift=h_shift,
        hidden_weights=wh,
        hidden_effective_bias=hidden_sum.astype(bias_type),
        activation=activation,
    )


def quantize(
    weights: tuple[torch.Tensor, torch.Tensor, torch.Tensor | None, torch.Tensor | None],
    x_qparams: tuple[float, int],
    h_qparams: tuple[float, int],
    cell_power: int,
    bias_type: type = np.int32,
) -> LstmQuant:
    """The int8 arguments of one LSTM layer from its float weights (PyTorch's w_ih, w_hh, b_ih, b_hh),
    the input's and the hidden state's (scale, zero point) and the cell state's power of two; the
    effective biases as `bias_type`."""
    w_ih, w_hh, b_ih, b_hh = (None if w is None else w.detach().to(torch.float64).numpy() for w in weights)
    assert w_ih is not None and w_hh is not None
    hidden = w_hh.shape[1]
    bias = (b_ih if b_ih is not None else 0.0) + (b_hh if b_hh is not None else 0.0) + np.zeros(4 * hidden)
    x_zp, (h_scale, h_zp) = x_qparams[1], h_qparams
    rows = {name: slice(TORCH_ROW[name] * hidden, (TORCH_ROW[name] + 1) * hidden) for name in GATES}
    gates = {
        name: quantize_gate(
            w_ih[r],
            w_hh[r],
            bias[r],
            np.zeros(hidden),
            x_qparams,
            h_qparams,
            "tanh" if name == "cell" else "sigmoid",
            bias_type,
        )
        for name, r in rows.items()
    }
    f_mult, f_shift = multiplier(2.0**Q15_POWER)
    i_mult, i_shift = multiplier(2.0 ** (2 * Q15_POWER - cell_power))
    o_mult, o_shift = multiplier(2.0 ** (2 * Q15_POWER) / h_scale)
    return LstmQuant(
        input_size=w_ih.shape[1],
        hidden_size=hidden,
        input_offset=-x_zp,
        forget_to_cell_multiplier=f_mult,
        forget_to_cell_shift=f_shift,
        input_to_cell_multiplier=i_mult,
        input_to_cell_shift=i_shift,
        cell_clip=CELL_CLIP,
        cell_scale_power=cell_power,
        output_multiplier=o_mult,
        output_shift=o_shift,
        output_offset=h_zp,
        gates=gates,
    )


def quantize_s16(
    weights: tuple[torch.Tensor, torch.Tensor, torch.Tensor | None, torch.Tensor | None],
    x_scale: float,
    h_scale: float,
    cell_power: int,
) -> LstmQuant:
    """arm_lstm_unidirectional_s16's arguments (8w16a): as `quantize`'s, the input and the hidden state
    int16 and symmetric (zero points 0), the effective biases int64 (TFLite's 16x8 LSTM)."""
    return quantize(weights, (x_scale, 0), (h_scale, 0), cell_power, bias_type=np.int64)


def s16_sum_bound(quant: LstmQuant) -> int:
    """The largest |bias + sum| a gate's int32 partial sum can reach in arm_nn_vec_mat_mul_result_acc_s16
    (its Helium path starts the sum from the int64 bias cut to int32, its DSP path sums in int32): the
    kernel is exact only while this stays below 2**31."""
    bound = 0
    for gate in quant.gates.values():
        for weights, bias in (
            (gate.input_weights, gate.input_effective_bias),
            (gate.hidden_weights, gate.hidden_effective_bias),
        ):
            rows = np.abs(weights.astype(np.int64)).sum(axis=1) * 32768 + np.abs(bias.astype(np.int64))
            bound = max(bound, int(rows.max()))
    return bound


def cell_power(max_abs_cell: float) -> int:
    """The smallest power-of-two scale whose int16 range holds the largest calibrated cell value
    (never finer than 2^-15, the gates' own scale)."""
    needed = max(max_abs_cell, 1e-6) / 32767.0
    return max(Q15_POWER, math.ceil(math.log2(needed)))


def qparams(low: float, high: float) -> tuple[float, int]:
    """Asymmetric int8 (scale, zero point) of a calibrated range, as the activation observers make them."""
    low, high = min(low, 0.0), max(high, 0.0)
    scale = (high - low) / 255.0 or 1.0
    return scale, int(np.clip(-128 - round(low / scale), -128, 127))
