"""An attention's softmax under a constant mask (attention.py folds the mask into each score row's
allowed keys [lo, hi)), as cmx-gen's own op: `cmx::masked_softmax` in the float graph (softmax over
the allowed keys, 0 elsewhere), `cmx::quantized_masked_softmax` once int8, which the backend runs as
arm_softmax_s8 over each row's allowed keys alone (a `softmax` plan record with `ranges`). Its
quantization is arm_softmax_s8's, as upstream has it for its softmax: output scale 1/256, zero
point -128, and upstream's own input parameters."""

from __future__ import annotations

from typing import Any

import torch

from cmx_gen.lower.host_models.kernel_models import masked_softmax_s8


@torch.library.custom_op("cmx::masked_softmax", mutates_args=())
def float_masked_softmax(x: torch.Tensor, ranges: list[int]) -> torch.Tensor:
    """softmax over the last dimension of each row's allowed columns [lo, hi) (a constant attention
    mask, attention.py), 0 elsewhere; row r of x's rows takes the pair r % (len(ranges) / 2)."""
    flat = x.reshape(-1, x.shape[-1])
    allowed = torch.zeros(len(ranges) // 2, flat.shape[1], dtype=torch.bool)
    for r, (lo, hi) in enumerate(zip(ranges[::2], ranges[1::2])):
        allowed[r, lo:hi] = True
    allowed = allowed.repeat(flat.shape[0] // allowed.shape[0], 1)
    weights = torch.softmax(flat.masked_fill(~allowed, float("-inf")), -1)
    return torch.where(allowed, weights, 0.0).reshape(x.shape)


@float_masked_softmax.register_fake
def _(x: torch.Tensor, ranges: list[int]) -> torch.Tensor:
    return torch.empty_like(x)


FLOAT = torch.ops.cmx.masked_softmax.default


@torch.library.custom_op("cmx::quantized_masked_softmax", mutates_args=())
def quantized_masked_softmax(
    x: torch.Tensor, ranges: list[int], multiplier: int, shift: int, diff_min: int
) -> torch.Tensor:
    """arm_softmax_s8 over each row's allowed columns, -128 (probability 0) elsewhere, on the host
    (kernel_models.masked_softmax_s8)."""
    return masked_softmax_s8(x, ranges, multiplier, shift, diff_min)


@quantized_masked_softmax.register_fake
def _(x: torch.Tensor, *rest: Any) -> torch.Tensor:
    return torch.empty_like(x, dtype=torch.int8)


def int8_call(
    graph: torch.fx.Graph, xq: torch.fx.Node, ranges: list[int], x_q: tuple[float, int], y_q: tuple[float, int]
) -> torch.fx.Node | None:
    """`cmx::quantized_masked_softmax` of the int8 `xq` (inserted where the graph inserts), with
    upstream's softmax parameters for its input scale; None for an output not in arm_softmax_s8's
    fixed quantization."""
    from executorch.backends.cortex_m.passes.aten_to_cortex_m_pass import _compute_softmax_params
    from executorch.backends.cortex_m.quantizer.quantization_configs import (
        CMSIS_SOFTMAX_SCALE,
        CMSIS_SOFTMAX_ZERO_POINT,
    )

    if y_q != (CMSIS_SOFTMAX_SCALE, CMSIS_SOFTMAX_ZERO_POINT):
        return None
    multiplier, shift, diff_min = _compute_softmax_params(x_q[0])
    return graph.call_function(
        torch.ops.cmx.quantized_masked_softmax.default, (xq, ranges, multiplier, shift, diff_min)
    )
