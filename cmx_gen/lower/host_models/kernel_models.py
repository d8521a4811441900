"""Bit-exact host models of the CMSIS-NN kernels whose ExecuTorch Python reference is not.

ExecuTorch's Python implementations of the `cortex_m::` ops (what `lowered.module()` runs) mirror
most kernels in integer arithmetic, but a few go through float: `quantized_avg_pool2d` dequantizes,
averages in float and rounds half to even, where `arm_avgpool_s8` sums the raw int8 values and
rounds half away from zero with C's truncating division; `softmax` runs torch.softmax in float,
where `arm_softmax_s8` uses fixed-point exp and reciprocal; and on MVE cores the input
`quantize_per_tensor` rounds the exact product where the Python op rounds the float one. The firmware runs the C kernel, so the
reference a PASS is checked against uses these models for those ops (`MODELS`), and the report
says, op by op, how far ExecuTorch's Python reference is from them.

Each model takes the op's arguments exactly as the `cortex_m::` schema does (logical NCHW tensors
in channels-last memory) and returns what the C kernel writes. The wheel's `cmsis_nn` bindings only
size scratch buffers, so these are written from the kernel sources at the commit ExecuTorch pins
(CMSIS-NN dbf45dbf, Source/PoolingFunctions/arm_avgpool_s8.c, Source/SoftmaxFunctions/); the
scalar, DSP and MVE variants share the arithmetic modelled here (docs/conformance.md checks it on
M55, M4, M33 and M3).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray


def _pair(value: Any) -> tuple[int, int]:
    values = [int(v) for v in (value if isinstance(value, (list, tuple)) else [value])]
    return (values[0], values[-1])


def _pool_out(size: int, kernel: int, stride: int, pad: int, ceil_mode: bool) -> int:
    """Output size as op_quantized_avg_pool2d.cpp's pooling_output_size computes it."""
    numerator = size + 2 * pad - kernel
    out = numerator // stride + 1
    if ceil_mode and numerator % stride:
        out += 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _c_div(a: torch.Tensor, b: int) -> torch.Tensor:
    """C's integer division (truncates toward zero)."""
    return torch.div(a, b, rounding_mode="trunc")


def avg_pool2d_s8(
    input: torch.Tensor,
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    ceil_mode: bool,
    zero_point: int,
    multiplier: int,
    shift: int,
    scratch: torch.Tensor,
) -> torch.Tensor:
    """arm_avgpool_s8: the sum of the in-bounds raw int8 values (the zero point is not taken out),
    `sum > 0 ? (sum + count/2) / count : (sum - count/2) / count`, clamped to [-128, 127].
    ExecuTorch passes no requantization to the kernel (input and output share their qparams)."""
    del zero_point, multiplier, shift, scratch
    kh, kw = _pair(kernel_size)
    sh, sw = _pair(stride)
    ph, pw = _pair(padding)
    n, c, h, w = input.shape
    oh, ow = _pool_out(h, kh, sh, ph, ceil_mode), _pool_out(w, kw, sw, pw, ceil_mode)
    x = input.to(torch.int32)
    out = torch.empty((n, c, oh, ow), dtype=torch.int32)
    for oy in range(oh):
        y0 = oy * sh - ph
        ys = slice(max(0, y0), min(h, y0 + kh))
        for ox in range(ow):
            x0 = ox * sw - pw
            xs = slice(max(0, x0), min(w, x0 + kw))
            window = x[:, :, ys, xs]
            count = window.shape[2] * window.shape[3]
            total = window.sum(dim=(2, 3))
            half = count // 2
            out[:, :, oy, ox] = _c_div(torch.where(total > 0, total + half, total - half), count)
    return out.clamp(-128, 127).to(torch.int8).contiguous(memory_format=torch.channels_last)


# --- arm_softmax_s8 (Source/SoftmaxFunctions/arm_nn_softmax_common_s8.c) -------------------------
# Fixed-point gemmlowp-style exp and reciprocal. int64 numpy arrays hold int32 values; `wrap_int32`
# gives C's two's-complement wrap where the C code can overflow.

_Q31_MIN, _Q31_MAX = -(1 << 31), (1 << 31) - 1
_ACCUM_BITS = 12


def wrap_int32(x: NDArray[Any]) -> NDArray[Any]:
    """C's two's-complement int32 wrap of int64 values (still int64)."""
    return ((x + (1 << 31)) % (1 << 32)) - (1 << 31)


def _mul_sat(a: NDArray[Any] | int, b: NDArray[Any] | int) -> NDArray[Any]:
    """arm_nn_doubling_high_mult: round half away from zero, then C's truncating / 2^31."""
    a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    nudge = np.where((a < 0) ^ (b < 0), 1 - (1 << 30), 1 << 30)
    product = a * b + nudge
    result = np.where(product < 0, -((-product) >> 31), product >> 31)
    return np.where((a == b) & (a == _Q31_MIN), _Q31_MAX, result)


def _div_pow2(x: NDArray[Any], exponent: int) -> NDArray[Any]:
    """arm_nn_divide_by_power_of_two: arithmetic shift, rounding midpoints away from zero."""
    mask = (1 << exponent) - 1
    result = x >> exponent
    threshold = (mask >> 1) + (result < 0)
    return result + ((x & mask) > threshold)


def _mul_pow2(x: NDArray[Any], exponent: int) -> NDArray[Any]:
    threshold = (1 << (31 - exponent)) - 1
    result = wrap_int32(x << exponent)
    result = np.where(x > threshold, _Q31_MAX, result)
    return np.where(x < -threshold, _Q31_MIN, result)


def requantize(value: NDArray[Any], mult: int, shift: int) -> NDArray[np.int64]:
    """arm_nn_requantize (int32 wrap on the left shift, as the C multiply does)."""
    shifted = wrap_int32(np.asarray(value, dtype=np.int64) << max(shift, 0))
    high = (shifted * int(mult) + (1 << 30)) >> 31
    result: NDArray[np.int64] = _div_pow2(high, max(-shift, 0)) if shift < 0 else high
    return result


def _exp_on_negative_values(val: NDArray[Any]) -> NDArray[Any]:
    shift = 24
    val_mod_minus_quarter = (val & ((1 << shift) - 1)) - (1 << shift)
    remainder = val_mod_minus_quarter - val
    x = wrap_int32((val_mod_minus_quarter << 5) + (1 << 28))
    x2 = _mul_sat(x, x)
    inner = wrap_int32(_mul_sat(wrap_int32(_div_pow2(_mul_sat(x2, x2), 2) + _mul_sat(x2, x)), 715827883) + x2)
    result = wrap_int32(1895147668 + _mul_sat(1895147668, wrap_int32(x + _div_pow2(inner, 1))))
    for constant in (1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242):
        result = np.where((remainder & (1 << shift)) != 0, _mul_sat(result, constant), result)
        shift += 1
    return np.where(val == 0, _Q31_MAX, result)


def _one_over_one_plus_x(val: NDArray[Any]) -> NDArray[Any]:
    total = val + _Q31_MAX
    half = np.where(total >= 0, (total + 1) // 2, -((-(total - 1)) // 2))  # C: (sum +- 1) / 2, truncating
    x = wrap_int32(1515870810 + _mul_sat(half, -1010580540))
    for _ in range(3):
        x = wrap_int32(x + _mul_pow2(_mul_sat(x, wrap_int32((1 << 29) - _mul_sat(half, x))), 2))
    return _mul_pow2(x, 1)


def softmax_s8(
    input: torch.Tensor,
    dim: int,
    input_zero_point: int,
    output_zero_point: int,
    input_multiplier: int,
    input_shift: int,
    diff_min: int,
) -> torch.Tensor:
    """arm_softmax_s8 over the last dimension (the only one the cortex_m op accepts); the output
    quantization is fixed (scale 1/256, zero point -128). The zero point cancels in `x - max`."""
    del dim, input_zero_point, output_zero_point
    rows = input.detach().to(torch.int64).reshape(-1, input.shape[-1]).numpy()
    out = np.empty_like(rows)
    mask = 1 << int(input_shift)
    for r, row in enumerate(rows):
        diff = row - row.max()
        valid = diff >= diff_min
        exps = _exp_on_negative_values(_mul_sat(wrap_int32(diff * mask), int(input_multiplier)))
        total = int(_div_pow2(exps, _ACCUM_BITS)[valid].sum())
        headroom = 32 - total.bit_length() if total > 0 else 32
        scale = _one_over_one_plus_x(
            np.asarray(wrap_int32(np.asarray(np.int64((total << headroom) if total > 0 else 0) - (1 << 31))))
        )
        res = _div_pow2(_mul_sat(scale, exps), _ACCUM_BITS - headroom + 23) - 128
        out[r] = np.where(valid, np.clip(res, -128, 127), -128)
    return (
        torch.from_numpy(out.astype(np.int8))
        .reshape(input.shape)
        .contiguous(
            memory_format=torch.channels_last
            if input.dim() == 4 and input.is_contiguous(memory_format=torch.channels_last)
            else torch.contiguous_format
        )
    )


def masked_softmax_s8(
    input: torch.Tensor, ranges: Sequence[int], multiplier: int, shift: int, diff_min: int
) -> torch.Tensor:
    """The backend's masked softmax (a constant attention mask): arm_softmax_s8 over each row's
    allowed columns [lo, hi) alone, row r taking pair r % (len(ranges) / 2), and -128 (probability
    0) in every other column."""
    size = int(input.shape[-1])
    rows = input.reshape(-1, size)
    out = torch.full(rows.shape, -128, dtype=torch.int8)
    pairs = list(zip(ranges[::2], ranges[1::2]))
    for r in range(rows.shape[0]):
        lo, hi = pairs[r % len(pairs)]
        if hi > lo:
            out[r, lo:hi] = softmax_s8(rows[r : r + 1, lo:hi], -1, 0, -128, multiplier, shift, diff_min)[0]
    return out.reshape(input.shape)


# --- arm_convolve_wrapper_s8 (quantized_conv2d) ----------------------------------------------------
def conv2d_s8(
    input: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    input_offset: int,
    output_offset: int,
    requantize_multipliers: torch.Tensor,
    requantize_shifts: torch.Tensor,
    activation_min: int,
    activation_max: int,
    scratch: torch.Tensor,
) -> torch.Tensor:
    """ExecuTorch's own arithmetic (int32 accumulate, per-channel arm_nn_requantize), with the
    accumulation done in float64, which is exact for int8 products: torch has no integer kernel
    for dilated convolutions, so the Python op cannot run them at all."""
    from executorch.backends.cortex_m.passes.passes_utils import requantize_cmsis

    x = input.to(torch.float64) + int(input_offset)
    w = weight.to(torch.float64).permute(0, 3, 1, 2).contiguous()  # OHWI -> OIHW
    b = bias.to(torch.float64) if bias is not None else None
    groups = input.shape[1] // weight.shape[3]
    acc = (
        torch.nn.functional.conv2d(
            x, w, b, stride=tuple(stride), padding=tuple(padding), dilation=tuple(dilation), groups=groups
        )
        .round()
        .to(torch.int64)
    )
    channels = [
        requantize_cmsis(acc[:, c], int(requantize_multipliers[c]), int(requantize_shifts[c]))
        for c in range(acc.shape[1])
    ]
    result = torch.stack(channels, dim=1) + int(output_offset)
    return result.clamp(activation_min, activation_max).to(torch.int8).contiguous(memory_format=torch.channels_last)


# --- arm_depthwise_conv_wrapper_s8 (quantized_depthwise_conv2d) ------------------------------------
def depthwise_conv2d_s8(
    input: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    depth_multiplier: int,
    *requantize: Any,
) -> torch.Tensor:
    """conv2d_s8's arithmetic for a depthwise convolution (the Python op cannot run a dilated one
    either): its IHWO weight [1, H, W, C_out] is an OHWI one of one input channel per group.
    `requantize`: the arguments after depth_multiplier, conv2d_s8's after dilation."""
    return conv2d_s8(input, weight.permute(3, 1, 2, 0), bias, stride, padding, dilation, *requantize)


# --- quantize_per_tensor (backends/cortex_m/ops/op_quantize_per_tensor.cpp) -------------------------
def quantize_per_tensor_s8(
    input: torch.Tensor,
    scale: float,
    zero_point: int,
    quant_min: int,
    quant_max: int,
    dtype: torch.dtype,
    *,
    isa: str = "",
) -> torch.Tensor:
    """`inv_scale = 1.0f / (float)scale`; the scalar loop rounds `inv_scale * x` to float, then to
    nearest even. On MVE cores whole blocks of 16 go through `vfmaq_f32(magic, x, inv_scale)`, a
    fused multiply-add: the product is not rounded to float first, so values near a tie between
    two steps round on the exact product (ExecuTorch's Python op rounds the float product, and
    differs by one step there). The tail (numel % 16) takes the scalar loop on every core. An int16
    output (16-bit activations) takes blocks of 8 on MVE, the same way."""
    if dtype not in (torch.int8, torch.int16):
        raise NotImplementedError("the int8 and int16 kernels only")
    block = 16 if dtype == torch.int8 else 8
    inv_scale = np.float32(1.0) / np.float32(scale)
    # The kernel walks memory order: a channels-last tensor's buffer is in NHWC order.
    nhwc = input.dim() == 4 and input.is_contiguous(memory_format=torch.channels_last) and not input.is_contiguous()
    flat = (input.detach().permute(0, 2, 3, 1) if nhwc else input.detach()).reshape(-1).numpy().astype(np.float32)
    scalar = np.rint((flat * inv_scale).astype(np.float32)).astype(np.int64)
    q = scalar
    if isa == "MVE":
        blocks = len(flat) - len(flat) % block
        exact = np.rint(flat[:blocks].astype(np.float64) * np.float64(inv_scale)).astype(np.int64)
        q = np.concatenate([exact, scalar[blocks:]])
    q = np.clip(q + int(zero_point), int(quant_min), int(quant_max)).astype(np.int8 if block == 16 else np.int16)
    out = torch.from_numpy(q)
    if nhwc:
        n, c, h, w = input.shape
        return out.reshape(n, h, w, c).permute(0, 3, 1, 2)
    return out.reshape(input.shape)


# Op name (schema name of the functional cortex_m op) -> host model of its C kernel.
MODELS: dict[str, Callable[..., torch.Tensor]] = {
    "cortex_m::quantized_avg_pool2d": avg_pool2d_s8,
    "cortex_m::softmax": softmax_s8,
    "cortex_m::quantize_per_tensor": quantize_per_tensor_s8,
}

# Models whose result depends on the core's CMSIS-NN ISA ("MVE", "DSP", "SCALAR"): they take `isa=`.
ISA_DEPENDENT = {"cortex_m::quantize_per_tensor"}

# Ops whose Python implementation is exact but cannot run every case (torch has no integer kernel
# for a dilated convolution): the model stands in only then.
FALLBACKS: dict[str, Callable[..., torch.Tensor]] = {
    "cortex_m::quantized_conv2d": conv2d_s8,
    "cortex_m::quantized_depthwise_conv2d": depthwise_conv2d_s8,
}


def compute(
    name: str, function: Callable[..., object], args: Sequence[object], kwargs: dict[str, object], isa: str
) -> object:
    """One cortex_m call on the host as the firmware computes it: the C kernel's model where the
    Python op rounds differently (MODELS), else the Python op, else the model where torch cannot run
    the case (FALLBACKS). The one dispatch the plan reference and the backend's host run share."""
    if name in MODELS:
        extra = {"isa": isa} if name in ISA_DEPENDENT else {}
        return MODELS[name](*args, **kwargs, **extra)
    try:
        return function(*args, **kwargs)
    except NotImplementedError:
        if name not in FALLBACKS:
            raise
        return FALLBACKS[name](*args, **kwargs)
