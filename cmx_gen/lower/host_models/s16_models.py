"""CMSIS-NN's s16 kernels (16-bit activations, 8-bit weights, 64-bit bias) on the host, bit for bit:
arm_convolve_wrapper_s16, arm_depthwise_conv_wrapper_s16 and arm_fully_connected_s16 accumulate
exactly (in int64; their int32 partial sums cannot overflow for the sizes the plan check admits) and
requantize with arm_nn_requantize_s64 and the multiplier reduced to 16 bits (REDUCE_MULTIPLIER)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

INT16_MIN, INT16_MAX = -32767, 32767  # the activations' range (symmetric; upstream's int16 qspec)
# arm_nn_requantize_s64 shifts right by 14 - shift: a shift above 14 is outside its contract
MAX_SHIFT_S16 = 14


def reduce_multiplier(mult: int) -> int:
    """REDUCE_MULTIPLIER (arm_nnsupportfunctions.h): a Q31 multiplier rounded to Q15."""
    return (mult + (1 << 15)) >> 16 if mult < 0x7FFF0000 else 0x7FFF


def requantize_s64(acc: NDArray[Any], mult: int, shift: int) -> NDArray[np.int64]:
    """arm_nn_requantize_s64(acc, REDUCE_MULTIPLIER(mult), shift): the 64-bit product shifted right by
    14 - shift, cut to int32 (the C assignment), then rounded by one more shift."""
    product = np.asarray(acc, dtype=np.int64) * np.int64(reduce_multiplier(mult))
    cut = (product >> np.int64(MAX_SHIFT_S16 - shift)).astype(np.int64)
    cut = ((cut + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)  # int64 -> int32, as the C cast wraps
    return (cut + 1) >> 1


def conv2d_s16(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    groups: int,
    multipliers: Sequence[int],
    shifts: Sequence[int],
    act_min: int,
    act_max: int,
) -> torch.Tensor:
    """arm_convolve_wrapper_s16 (groups 1) or arm_depthwise_conv_wrapper_s16 (groups = channels) on an
    int16 NCHW input and int8 OIHW weights: the accumulation in float64 (exact: every partial sum is far
    below 2^53), the bias added in int64, each channel requantized."""
    acc = (
        torch.nn.functional.conv2d(
            x.to(torch.float64),
            weight.to(torch.float64),
            None,
            stride=tuple(stride),
            padding=tuple(padding),
            dilation=tuple(dilation),
            groups=groups,
        )
        .round()
        .to(torch.int64)
        .numpy()
    )
    if bias is not None:
        acc = acc + bias.to(torch.int64).numpy().reshape(1, -1, 1, 1)
    out = np.stack([requantize_s64(acc[:, c], int(multipliers[c]), int(shifts[c])) for c in range(acc.shape[1])], 1)
    result = torch.from_numpy(np.clip(out, act_min, act_max).astype(np.int16))
    return result.contiguous(memory_format=torch.channels_last) if x.dim() == 4 else result


def fully_connected_s16(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, mult: int, shift: int, act_min: int, act_max: int
) -> torch.Tensor:
    """arm_fully_connected_s16: rows of x (int16, last dimension in) times weight [out][in] (int8),
    plus the int64 bias, per-tensor requantized."""
    flat = x.reshape(-1, x.shape[-1]).to(torch.int64).numpy()
    acc = flat @ weight.to(torch.int64).numpy().T
    if bias is not None:
        acc = acc + bias.to(torch.int64).numpy().reshape(1, -1)
    out = np.clip(requantize_s64(acc, mult, shift), act_min, act_max).astype(np.int16)
    return torch.from_numpy(out).reshape(*x.shape[:-1], weight.shape[0])
