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

from cmx_gen.lower.host_models.kernel_models import requantize
from cmx_gen.lower.host_models.layer_models import lstm_gate, lstm_steps
from cmx_gen.lower.ops.lstm import multiplier

INT16_MIN, INT16_MAX = -32767, 32767  # the activations' range (symmetric; upstream's int16 qspec)
Q15_SCALE = 1.0 / 32768.0  # arm_softmax_s16's and arm_nn_activation_s16's output: Q0.15, zero point 0
# arm_nn_requantize_s64 shifts right by 14 - shift: a shift above 14 is outside its contract
MAX_SHIFT_S16 = 14


NARROW_GUESS_SHIFT = 15  # cmx_narrow_s16_s8's guess: (value - first) * multiplier >> 15 fits int32 (multiplier < 2^15)


def narrowing(values: NDArray[Any]) -> tuple[list[int], int, int, int]:
    """An int16 -> int8 requantization given as its output for each int16 value from -32768 up (non-decreasing)
    as cmx_narrow_s16_s8 takes it: the thresholds (the first int16 value of each step up), the output for
    -32768, and the multiplier and shift of its guess (the thresholds' mean spacing inverted)."""
    lowest, highest = int(values[0]), int(values[-1])
    thresholds = (np.searchsorted(values, np.arange(lowest + 1, highest + 1), side="left") - 32768).tolist()
    multiplier = 0
    if len(thresholds) > 1:
        spacing = (thresholds[-1] - thresholds[0]) / (len(thresholds) - 1)
        multiplier = min(32767, round((1 << NARROW_GUESS_SHIFT) / spacing)) if spacing > 0 else 32767
    return thresholds, lowest, multiplier, NARROW_GUESS_SHIFT


def narrow_s16(x: NDArray[Any], thresholds: Sequence[int] | NDArray[Any], lowest: int) -> NDArray[np.int8]:
    """cmx_narrow_s16_s8: each int16 value's int8, lowest plus the thresholds at or below it."""
    steps = np.searchsorted(np.asarray(thresholds, dtype=np.int64), np.asarray(x, dtype=np.int64), side="right")
    return (lowest + steps).astype(np.int8)


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
    twice = 2 * max(scale1, scale2)
    return (
        multiplier(scale1 / twice),
        multiplier(scale2 / twice),
        multiplier(twice / ((1 << ADD_LEFT_SHIFT) * out_scale)),
    )


def add_s16(a: torch.Tensor, b: torch.Tensor, quant: Sequence[int], act_min: int, act_max: int) -> torch.Tensor:
    """arm_elementwise_add_s16 (offsets 0): quant = (mult1, shift1, mult2, shift2, out mult, out shift);
    each input shifted left by ADD_LEFT_SHIFT and requantized (arm_nn_requantize), the sum requantized."""
    m1, s1, m2, s2, mo, so = (int(v) for v in quant)
    x = requantize(a.to(torch.int64).numpy() << ADD_LEFT_SHIFT, m1, s1)
    y = requantize(b.to(torch.int64).numpy() << ADD_LEFT_SHIFT, m2, s2)
    out = np.clip(requantize(x + y, mo, so), act_min, act_max).astype(np.int16)
    result = torch.from_numpy(out)
    return result.contiguous(memory_format=torch.channels_last) if a.dim() == 4 and _channels_last(a) else result


def mul_s16(a: torch.Tensor, b: torch.Tensor, mult: int, shift: int, act_min: int, act_max: int) -> torch.Tensor:
    """arm_elementwise_mul_s16 (offsets 0): each product requantized (arm_nn_requantize), clamped."""
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


def bmm_s16(a: NDArray[np.int16], b_t: NDArray[np.int16], mult: int, shift: int) -> NDArray[np.int16]:
    """arm_batch_matmul_s16: a [batch][rows][inner] times b_t [batch][cols][inner] (b transposed), exact
    int64 sums (arm_nn_vec_mat_mult_t_s16_s16 on every path), arm_nn_requantize_s64, no offsets."""
    acc = np.einsum("bik,bjk->bij", np.asarray(a, dtype=np.int64), np.asarray(b_t, dtype=np.int64))
    return np.clip(requantize_s64(acc, mult, shift), INT16_MIN, INT16_MAX).astype(np.int16)


# --- arm_softmax_s16 (Source/SoftmaxFunctions/arm_softmax_s16.c: one C path on every core) ------------
SOFTMAX_S16_INPUT_RANGE = 10.0  # the exp table spans [-10, 0]: a difference of 10 is scaled to 65535


def _round_away(values: NDArray[Any]) -> NDArray[Any]:
    """std::round: halves away from zero."""
    rounded: NDArray[Any] = np.sign(values) * np.floor(np.abs(values) + 0.5)
    return rounded


def softmax_table(func: Any, low: float, high: float) -> NDArray[np.int64]:
    """TFLite's gen_lut<float, int16_t, int16_t> (kernels/internal/common.h) for outputs in [-1, 1]: 512
    steps of `func` over [low, high] in Q0.15, each entry moved by half the interpolation's error at the
    middle of its step, and the value at `high` as the 513th (the kernels interpolate between neighbours)."""
    step = (high - low) / 512
    at = low + np.arange(512) * step
    val, middle, following = (func(v).astype(np.float32) for v in (at, at + step / 2, at + step))
    scale = np.float32(32768.0)
    sample = _round_away(val * scale)
    interpolated = _round_away((following * scale + _round_away(val * scale)) / 2)
    bias = _round_away((interpolated - _round_away(middle * scale)) / 2)
    table = np.clip(sample - bias, -32768, 32767)
    last = np.clip(_round_away(func(np.array([high], np.float64)).astype(np.float32) * scale), -32768, 32767)
    made: NDArray[np.int64] = np.concatenate([table, last]).astype(np.int64)
    return made


EXP_TABLE = softmax_table(np.exp, -SOFTMAX_S16_INPUT_RANGE, 0.0)
ONE_BY_ONE_TABLE = softmax_table(lambda v: 1.0 / (1.0 + v), 0.0, 1.0)


def _wrap16(values: NDArray[Any]) -> NDArray[np.int64]:
    """A C assignment to int16_t."""
    wrapped: NDArray[np.int64] = ((np.asarray(values, dtype=np.int64) + 32768) & 0xFFFF) - 32768
    return wrapped


def _interpolate(table: NDArray[np.int64], x: NDArray[Any]) -> NDArray[np.int64]:
    """The kernel's table read: entry 256 + x / 128, the next one's difference times x's low 7 bits."""
    index, offset = 256 + (x >> 7), x & 0x7F
    slope = _wrap16(table[index + 1] - table[index])
    return _wrap16(table[index] + _wrap16((slope * offset + 64) >> 7))


def softmax_s16(
    x: NDArray[np.int16],
    mult: int,
    shift: int,
    exp_table: NDArray[np.int64] = EXP_TABLE,
    one_by_one_table: NDArray[np.int64] = ONE_BY_ONE_TABLE,
) -> NDArray[np.int16]:
    """arm_softmax_s16 over the last dimension: each difference from the row's maximum requantized into the
    exp table's range (arm_nn_requantize), the exps summed, 1/sum from the one-by-one table after
    normalising by the sum's leading zeros, each exp times it in Q0.15."""
    rows = np.asarray(x, dtype=np.int64)
    diff = rows - rows.max(axis=-1, keepdims=True)
    scaled = np.clip(requantize(diff, mult, shift) + 32767, -32768, 32767)
    exps = _interpolate(np.asarray(exp_table, dtype=np.int64), scaled)
    total = exps.sum(axis=-1, keepdims=True)  # at least the maximum's exp, 32767
    headroom = 32 - np.floor(np.log2(total)).astype(np.int64) - 1  # CLZ of a positive int32
    shifted = ((total << (headroom - 1)) + (1 << 13)) >> 14
    one_by_one = _interpolate(np.asarray(one_by_one_table, dtype=np.int64), _wrap16(shifted - 98304))
    out = (((exps * one_by_one) >> (30 - headroom)) + 1) >> 1
    return _wrap16(out).astype(np.int16)


def softmax_s16_multiplier(input_scale: float) -> tuple[int, int]:
    """TFLite's input rescale for the int16 softmax (beta 1): a difference of 10.0 to 65535."""
    return multiplier(input_scale / (SOFTMAX_S16_INPUT_RANGE / 65535.0))
