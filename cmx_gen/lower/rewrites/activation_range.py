"""An activation's quantization narrowed to the values it can produce, so upstream's
ActivationFusionPass fuses it into the convolution (or linear, add) before it.

CortexMQuantizer gives every input of a `torch.cat` the concat's parameters. When one branch ends in a
ReLU and another goes negative (a U-Net skip beside an attention output), the quantize after the ReLU
has a zero point above -128: `quantize(0) > quant_min`. Upstream's fusion then refuses ("qmin is out of
range") and its conversion leaves the convolution a float `aten::convolution` on int8 data, which the
target refuses (execute error 0x12).

The activation cannot produce a value below `quantize(min)` (above `quantize(max)`) anyway, so the
quantize after it and the dequantizes of that quantize are given those as `quant_min`/`quant_max`:
no value changes, and the fused kernel clamps to exactly that range."""

from __future__ import annotations

from typing import Any

import torch

# each activation's (min, max) where its arguments leave them out (a ReLU has none)
BOUNDS: dict[Any, tuple[float | None, float | None]] = {
    torch.ops.aten.relu.default: (0.0, None),
    torch.ops.aten.relu_.default: (0.0, None),
    torch.ops.aten.hardtanh.default: (-1.0, 1.0),
    torch.ops.aten.hardtanh_.default: (-1.0, 1.0),
    torch.ops.aten.clamp.default: (None, None),
    # upstream's fusion folds it into the producer's output quantization (scale x 6, zero point + 1/(2 scale))
    torch.ops.aten.hardsigmoid.default: (0.0, 1.0),
    torch.ops.aten.hardsigmoid_.default: (0.0, 1.0),
}


def _quantized(value: Any, q_args: tuple[Any, ...], default: int) -> int:
    """`value` as the quantize after the activation computes it (its own rounding, not a copy of it)."""
    if not isinstance(value, (int, float)):
        return default
    quantize: Any = torch.ops.quantized_decomposed.quantize_per_tensor.default
    q = quantize(torch.tensor([float(value)]), *q_args)
    return int(q.item())


def narrow(graph: torch.fx.GraphModule) -> None:
    """In the quantized float graph (convert_pt2e's): each activation's quantize, and its dequantizes,
    take the range the activation can produce."""
    q_op = torch.ops.quantized_decomposed.quantize_per_tensor.default
    dq_op = torch.ops.quantized_decomposed.dequantize_per_tensor.default
    for node in list(graph.graph.nodes):
        if node.target not in BOUNDS:
            continue
        defaults, args = BOUNDS[node.target], node.args
        low = args[1] if len(args) > 1 else defaults[0]
        high = args[2] if len(args) > 2 else defaults[1]
        for q in [user for user in node.users if user.target == q_op]:
            scale, zero_point, q_min, q_max, dtype = q.args[1:6]
            new_min = max(q_min, _quantized(low, q.args[1:6], q_min))
            new_max = min(q_max, _quantized(high, q.args[1:6], q_max))
            if (new_min, new_max) == (q_min, q_max) or new_min >= new_max:
                continue
            q.args = (q.args[0], scale, zero_point, new_min, new_max, dtype)
            for dq in [
                user for user in q.users if user.target == dq_op and tuple(user.args[1:3]) == (scale, zero_point)
            ]:
                dq.args = (*dq.args[:3], new_min, new_max, *dq.args[5:])
    graph.recompile()
