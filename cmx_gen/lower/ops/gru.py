"""A GRU as one int8 call of cmx-gen's own `cmx_gru_s8` (kernels/nn/, issue 34): CMSIS-NN has no GRU,
so the kernel is built from CMSIS-NN's LSTM building blocks (the int8 x int8 -> int16 gate matrix
products, the int16 sigmoid/tanh tables), with the same quantization as the LSTM (lstm.py): int8
input and hidden state, int8 weights per gate and tensor, int16 Q3.12 pre-activations and Q0.15
activations. PyTorch's equations, per step:

    r = sigmoid(W_ir x + b_ir + W_hr h + b_hr)       z = sigmoid(W_iz x + b_iz + W_hz h + b_hz)
    n = tanh(W_in x + b_in + r * (W_hn h + b_hn))     h' = (1 - z) * n + z * h

r * (W_hn h + b_hn) is Q0.15 x Q3.12 requantized to Q3.12; h' is summed in int32 (Q0.30:
(32768 - z) n + z h, h brought to Q0.15 first) and requantized to the int8 hidden state. The initial
state is zero: the kernel starts from a row of the hidden zero point.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from cmx_gen.lower.ops.lstm import Q15_POWER, Gate, multiplier, quantize_gate

GATES = ("reset", "update", "candidate")  # cmx_gru_params' order
TORCH_ROW = {"reset": 0, "update": 1, "candidate": 2}  # PyTorch's weight rows: r, z, n


ACTIVATIONS = {"reset": "sigmoid", "update": "sigmoid", "candidate": "tanh"}  # each gate's squashing


@dataclass(frozen=True)
class GruQuant:
    """cmx_gru_params of one layer (kernels/nn/cmx_nn.h), but the sizes of the call."""

    input_size: int
    hidden_size: int
    hidden_offset: int  # -hidden zero point: h - zp before h is brought to Q0.15
    output_offset: int  # hidden zero point
    reset_multiplier: int  # r (Q0.15) x W_hn h (Q3.12) -> Q3.12
    reset_shift: int
    hidden_q15_multiplier: int  # int8 hidden state -> Q0.15
    hidden_q15_shift: int
    output_multiplier: int  # Q0.30 -> int8 hidden state
    output_shift: int
    gates: dict[str, Gate]


def quantize(
    weights: tuple[torch.Tensor, torch.Tensor, torch.Tensor | None, torch.Tensor | None],
    x_qparams: tuple[float, int],
    h_qparams: tuple[float, int],
) -> GruQuant:
    """The int8 arguments of one GRU layer from PyTorch's w_ih, w_hh, b_ih, b_hh and the input's and
    hidden state's (scale, zero point). The candidate's hidden bias stays on its hidden part (r
    multiplies it); the other gates' biases are folded together on their input part."""
    w_ih, w_hh, b_ih, b_hh = (None if w is None else w.detach().to(torch.float64).numpy() for w in weights)
    assert w_ih is not None and w_hh is not None
    hidden = w_hh.shape[1]
    zero = np.zeros(3 * hidden)
    b_i = zero if b_ih is None else b_ih
    b_h = zero if b_hh is None else b_hh
    h_scale, h_zp = h_qparams
    rows = {name: slice(TORCH_ROW[name] * hidden, (TORCH_ROW[name] + 1) * hidden) for name in GATES}
    gates = {
        name: quantize_gate(
            w_ih[r],
            w_hh[r],
            b_i[r] + (0.0 if name == "candidate" else b_h[r]),
            b_h[r] if name == "candidate" else np.zeros(hidden),
            x_qparams,
            h_qparams,
            ACTIVATIONS[name],
        )
        for name, r in rows.items()
    }
    r_mult, r_shift = multiplier(2.0**Q15_POWER)
    q_mult, q_shift = multiplier(h_scale / 2.0**Q15_POWER)
    o_mult, o_shift = multiplier(2.0 ** (2 * Q15_POWER) / h_scale)
    return GruQuant(
        input_size=w_ih.shape[1],
        hidden_size=hidden,
        hidden_offset=-h_zp,
        output_offset=h_zp,
        reset_multiplier=r_mult,
        reset_shift=r_shift,
        hidden_q15_multiplier=q_mult,
        hidden_q15_shift=q_shift,
        output_multiplier=o_mult,
        output_shift=o_shift,
        gates=gates,
    )
