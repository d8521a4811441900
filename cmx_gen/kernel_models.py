"""Bit-exact host models of the CMSIS-NN kernels whose ExecuTorch Python reference is not.

ExecuTorch's Python implementations of the `cortex_m::` ops (what `lowered.module()` runs) mirror
most kernels in integer arithmetic, but a few go through float: `quantized_avg_pool2d` dequantizes,
averages in float and rounds half to even, where `arm_avgpool_s8` sums the raw int8 values and
rounds half away from zero with C's truncating division. The firmware runs the C kernel, so the
reference a PASS is checked against uses these models for those ops (`MODELS`), and the report
says, op by op, how far ExecuTorch's Python reference is from them.

Each model takes the op's arguments exactly as the `cortex_m::` schema does (logical NCHW tensors
in channels-last memory) and returns what the C kernel writes. The wheel's `cmsis_nn` bindings only
size scratch buffers, so these are written from the kernel sources at the commit ExecuTorch pins
(CMSIS-NN dbf45dbf, Source/PoolingFunctions/arm_avgpool_s8.c); the scalar, DSP and MVE variants
share the arithmetic modelled here.
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch


def _pair(value: Sequence[int] | int) -> tuple[int, int]:
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


# Op name (schema name of the functional cortex_m op) -> host model of its C kernel.
MODELS: dict[str, Callable[..., torch.Tensor]] = {
    "cortex_m::quantized_avg_pool2d": avg_pool2d_s8,
}
