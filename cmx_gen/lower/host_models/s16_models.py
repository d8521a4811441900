"""CMSIS-NN's s16 kernels (16-bit activations, 8-bit weights, 64-bit bias) on the host, bit for bit:
arm_convolve_wrapper_s16, arm_depthwise_conv_wrapper_s16 and arm_fully_connected_s16 accumulate
exactly (in int64; their int32 partial sums cannot overflow for the sizes the plan check admits) and
requantize with arm_nn_requantize_s64 and the multiplier reduced to 16 bits (REDUCE_MULTIPLIER); so do
arm_lstm_unidirectional_s16's gates (its recurrence is the s8 kernel's, layer_models.lstm_steps)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from cmx_gen.lower.host_models.layer_models import lstm_gate, lstm_steps

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


ADD_LEFT_SHIFT = 15  # TFLite's int16 add: each input shifted up 15 bits before its requantization


def add_multipliers(scale1: float, scale2: float, out_scale: float) -> tuple[tuple[int, int], ...]:
    """TFLite's int16 add: each input rescaled to twice the larger input scale (after the left shift),
    the sum to the output's. Returns (input 1, input 2, output) as (multiplier, shift)."""
    from cmx_gen.lower.ops.lstm import multiplier

    twice = 2 * max(scale1, scale2)
    return (
        multiplier(scale1 / twice),
        multiplier(scale2 / twice),
        multiplier(twice / ((1 << ADD_LEFT_SHIFT) * out_scale)),
    )


def add_s16(a: torch.Tensor, b: torch.Tensor, quant: Sequence[int], act_min: int, act_max: int) -> torch.Tensor:
    """arm_elementwise_add_s16 (offsets 0): quant = (mult1, shift1, mult2, shift2, out mult, out shift);
    each input shifted left by ADD_LEFT_SHIFT and requantized (arm_nn_requantize), the sum requantized."""
    from cmx_gen.lower.host_models.kernel_models import requantize

    m1, s1, m2, s2, mo, so = (int(v) for v in quant)
    x = requantize(a.to(torch.int64).numpy() << ADD_LEFT_SHIFT, m1, s1)
    y = requantize(b.to(torch.int64).numpy() << ADD_LEFT_SHIFT, m2, s2)
    out = np.clip(requantize(x + y, mo, so), act_min, act_max).astype(np.int16)
    result = torch.from_numpy(out)
    return result.contiguous(memory_format=torch.channels_last) if a.dim() == 4 and _channels_last(a) else result


def mul_s16(a: torch.Tensor, b: torch.Tensor, mult: int, shift: int, act_min: int, act_max: int) -> torch.Tensor:
    """arm_elementwise_mul_s16 (offsets 0): each product requantized (arm_nn_requantize), clamped."""
    from cmx_gen.lower.host_models.kernel_models import requantize

    product = a.to(torch.int64).numpy() * b.to(torch.int64).numpy()
    out = np.clip(requantize(product, mult, shift), act_min, act_max).astype(np.int16)
    result = torch.from_numpy(out)
    return result.contiguous(memory_format=torch.channels_last) if a.dim() == 4 and _channels_last(a) else result


def _channels_last(x: torch.Tensor) -> bool:
    return x.is_contiguous(memory_format=torch.channels_last) and not x.is_contiguous()


def pool2d_s16(
    x: torch.Tensor,
    kernel: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    average: bool,
    act_min: int,
    act_max: int,
) -> torch.Tensor:
    """arm_avgpool_s16 / arm_max_pool_s16 on an int16 NCHW image (same scale in and out): over the taps
    inside the input, the maximum, or the sum rounded half away from zero over their count (C's
    truncating division), clamped."""
    (kh, kw), (sh, sw), (ph, pw) = kernel, stride, padding
    n, c, h, w = x.shape
    oh, ow = (h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1
    values = x.to(torch.int64)
    out = torch.empty((n, c, oh, ow), dtype=torch.int64)
    for oy in range(oh):
        ys = slice(max(0, oy * sh - ph), min(h, oy * sh - ph + kh))
        for ox in range(ow):
            xs = slice(max(0, ox * sw - pw), min(w, ox * sw - pw + kw))
            window = values[:, :, ys, xs]
            if average:
                count = window.shape[2] * window.shape[3]
                total = window.sum(dim=(2, 3))
                half = count // 2
                out[:, :, oy, ox] = torch.div(
                    torch.where(total > 0, total + half, total - half), count, rounding_mode="trunc"
                )
            else:
                out[:, :, oy, ox] = window.amax(dim=(2, 3))
    return out.clamp(act_min, act_max).to(torch.int16).contiguous(memory_format=torch.channels_last)


def lstm_s16(x: NDArray[np.int16], quant: Any, batch_first: bool, reverse: bool = False) -> NDArray[np.int16]:
    """arm_lstm_unidirectional_s16 with zero initial state (layer_models.lstm_steps, the gates' parts
    requantized by arm_nn_requantize_s64 (arm_nn_lstm_calculate_gate_s16, int64 biases, no offsets);
    the cell update and the output's product are the s8 kernel's): int16 in and out, in CMSIS-NN's
    output range [-32768, 32767]."""
    return lstm_steps(x, quant, (batch_first, reverse), lstm_gate(requantize_s64), (-32768, 32767)).astype(np.int16)
