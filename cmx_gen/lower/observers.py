"""Observers of cmx-gen's own for the quantizer's specs."""

from __future__ import annotations

import torch
from torchao.quantization.pt2e.observer import MinMaxObserver


class PowerOfTwoMinMaxObserver(MinMaxObserver):
    """MinMaxObserver whose scale is rounded up to a power of two: the input of an int16 sigmoid or tanh,
    which CMSIS-NN's arm_nn_activation_s16 reads as Q3.12 after a left shift (activation_bits.py)."""

    def calculate_qparams(self) -> tuple[torch.Tensor, torch.Tensor]:
        scale, zero_point = super().calculate_qparams()
        return torch.exp2(torch.ceil(torch.log2(scale))), zero_point
