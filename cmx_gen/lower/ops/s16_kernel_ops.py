"""The int16 ops of cmx-gen's backend (8w16a) as torch custom ops: cmx::quantized_{conv2d,linear,add,mul,
pool2d,bmm,softmax,activation}_s16, cmx::quantized_lut_s16 and cmx::quantized_narrow_s16. Their Python implementations are CMSIS-NN's s16
kernels' arithmetic (host_models/s16_models.py), so the lowering's host reference is bit-exact; ops/s16_ops.py
puts them in the graph, delegate/s16_layers.py makes them plan layers."""

from __future__ import annotations

from typing import Any

import torch

from cmx_gen.lower.host_models import layer_models, s16_models


@torch.library.custom_op("cmx::quantized_conv2d_s16", mutates_args=())
def quantized_conv2d_s16(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None,
    stride: list[int],
    padding: list[int],
    dilation: list[int],
    groups: int,
    multipliers: list[int],
    shifts: list[int],
    act_min: int,
    act_max: int,
) -> torch.Tensor:
    """arm_convolve_wrapper_s16 / arm_depthwise_conv_wrapper_s16 on the host (s16_models.conv2d_s16):
    x int16 NCHW (channels-last in memory), weight int8 OIHW, bias int32 (widened to int64)."""
    return s16_models.conv2d_s16(
        x, weight, bias, stride, padding, dilation, groups, multipliers, shifts, act_min, act_max
    )


@quantized_conv2d_s16.register_fake
def _(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: Any,
    stride: list[int],
    padding: list[int],
    dilation: list[int],
    *rest: Any,
) -> torch.Tensor:
    sizes = [
        (int(x.shape[2 + i]) + 2 * padding[i] - dilation[i] * (int(weight.shape[2 + i]) - 1) - 1) // stride[i] + 1
        for i in range(2)
    ]
    out = x.new_empty((x.shape[0], weight.shape[0], *sizes), dtype=torch.int16)
    return out.contiguous(memory_format=torch.channels_last)


@torch.library.custom_op("cmx::quantized_linear_s16", mutates_args=())
def quantized_linear_s16(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, mult: int, shift: int, act_min: int, act_max: int
) -> torch.Tensor:
    """arm_fully_connected_s16 on the host (s16_models.fully_connected_s16): x int16 [..., in], weight
    int8 [out][in], bias int32 (widened to int64), one multiplier for the tensor."""
    return s16_models.fully_connected_s16(x, weight, bias, mult, shift, act_min, act_max)


@quantized_linear_s16.register_fake
def _(x: torch.Tensor, weight: torch.Tensor, *rest: Any) -> torch.Tensor:
    return x.new_empty((*x.shape[:-1], weight.shape[0]), dtype=torch.int16)


@torch.library.custom_op("cmx::quantized_add_s16", mutates_args=())
def quantized_add_s16(a: torch.Tensor, b: torch.Tensor, quant: list[int], act_min: int, act_max: int) -> torch.Tensor:
    """arm_elementwise_add_s16 on the host (s16_models.add_s16): two int16 tensors of one shape."""
    return s16_models.add_s16(a, b, quant, act_min, act_max)


@quantized_add_s16.register_fake
def _(a: torch.Tensor, *rest: Any) -> torch.Tensor:
    return torch.empty_like(a, dtype=torch.int16)


@torch.library.custom_op("cmx::quantized_mul_s16", mutates_args=())
def quantized_mul_s16(
    a: torch.Tensor, b: torch.Tensor, mult: int, shift: int, act_min: int, act_max: int
) -> torch.Tensor:
    """arm_elementwise_mul_s16 on the host (s16_models.mul_s16): two int16 tensors of one shape."""
    return s16_models.mul_s16(a, b, mult, shift, act_min, act_max)


@quantized_mul_s16.register_fake
def _(a: torch.Tensor, *rest: Any) -> torch.Tensor:
    return torch.empty_like(a, dtype=torch.int16)


@torch.library.custom_op("cmx::quantized_pool2d_s16", mutates_args=())
def quantized_pool2d_s16(
    x: torch.Tensor,
    kernel: list[int],
    stride: list[int],
    padding: list[int],
    average: bool,
    act_min: int,
    act_max: int,
) -> torch.Tensor:
    """arm_avgpool_s16 / arm_max_pool_s16 on the host (s16_models.pool2d_s16)."""
    return s16_models.pool2d_s16(x, kernel, stride, padding, average, act_min, act_max)


@quantized_pool2d_s16.register_fake
def _(x: torch.Tensor, kernel: list[int], stride: list[int], padding: list[int], *rest: Any) -> torch.Tensor:
    sizes = [(int(x.shape[2 + i]) + 2 * padding[i] - kernel[i]) // stride[i] + 1 for i in range(2)]
    out = x.new_empty((x.shape[0], x.shape[1], *sizes), dtype=torch.int16)
    return out.contiguous(memory_format=torch.channels_last)


@torch.library.custom_op("cmx::quantized_lut_s16", mutates_args=())
def quantized_lut_s16(x: torch.Tensor, table: list[int]) -> torch.Tensor:
    """cmx_lut_s8_s16 on the host: each int8 value's int16 from the 256-entry table (index value + 128)."""
    return torch.tensor(table, dtype=torch.int16)[x.to(torch.int64) + 128]


@quantized_lut_s16.register_fake
def _(x: torch.Tensor, table: list[int]) -> torch.Tensor:
    return torch.empty_like(x, dtype=torch.int16)


@torch.library.custom_op("cmx::quantized_narrow_s16", mutates_args=())
def quantized_narrow_s16(
    x: torch.Tensor, thresholds: list[int], lowest: int, multiplier: int, shift: int
) -> torch.Tensor:
    """cmx_narrow_s16_s8 on the host (s16_models.narrow_s16): each int16 value's int8, lowest plus the thresholds
    at or below it (multiplier and shift only guess where the kernel starts looking)."""
    return torch.from_numpy(s16_models.narrow_s16(x.numpy(), thresholds, lowest))


@quantized_narrow_s16.register_fake
def _(x: torch.Tensor, thresholds: list[int], lowest: int, multiplier: int, shift: int) -> torch.Tensor:
    return torch.empty_like(x, dtype=torch.int8)


@torch.library.custom_op("cmx::quantized_bmm_s16", mutates_args=())
def quantized_bmm_s16(a: torch.Tensor, b: torch.Tensor, b_transposed: bool, mult: int, shift: int) -> torch.Tensor:
    """arm_batch_matmul_s16 on the host (s16_models.bmm_s16): a [batch][rows][inner] int16 times b, int16
    [batch][inner][cols], or [batch][cols][inner] when b_transposed."""
    rhs = b.numpy() if b_transposed else b.numpy().transpose(0, 2, 1)
    return torch.from_numpy(s16_models.bmm_s16(a.numpy(), rhs, mult, shift))


@quantized_bmm_s16.register_fake
def _(a: torch.Tensor, b: torch.Tensor, b_transposed: bool, *rest: Any) -> torch.Tensor:
    return a.new_empty((a.shape[0], a.shape[1], b.shape[1] if b_transposed else b.shape[2]), dtype=torch.int16)


@torch.library.custom_op("cmx::quantized_softmax_s16", mutates_args=())
def quantized_softmax_s16(x: torch.Tensor, mult: int, shift: int) -> torch.Tensor:
    """arm_softmax_s16 on the host (s16_models.softmax_s16) over the last dimension: int16 in, Q0.15 out."""
    return torch.from_numpy(s16_models.softmax_s16(x.numpy(), mult, shift))


@quantized_softmax_s16.register_fake
def _(x: torch.Tensor, *rest: Any) -> torch.Tensor:
    return torch.empty_like(x, dtype=torch.int16)


@torch.library.custom_op("cmx::quantized_activation_s16", mutates_args=())
def quantized_activation_s16(x: torch.Tensor, left_shift: int, tanh: bool) -> torch.Tensor:
    """arm_nn_activation_s16 on the host (layer_models.activation_s16): sigmoid or tanh of int16 values read
    as Q3.12 after `left_shift`, to Q0.15."""
    out = layer_models.activation_s16(x.numpy(), left_shift, "tanh" if tanh else "sigmoid")
    return torch.from_numpy(out.astype("int16"))


@quantized_activation_s16.register_fake
def _(x: torch.Tensor, *rest: Any) -> torch.Tensor:
    return torch.empty_like(x, dtype=torch.int16)
