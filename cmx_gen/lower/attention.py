"""Attention as PyTorch writes it, on int8 (issue 53): `F.scaled_dot_product_attention`, which
`nn.MultiheadAttention` and `nn.TransformerEncoderLayer` call, written out before quantization as
the ops cmx-gen's backend runs on int8:

    scores = cmx::bmm(q, k^T) * scale      (arm_batch_matmul_s8; the scale a table)
    weights = softmax(scores, -1)          (arm_softmax_s8)
    out = cmx::bmm(weights, v)

ExecuTorch decomposes the op itself into a float bmm, a `_safe_softmax` (its eq / logical_not / any /
where guard against rows of -inf) and another bmm, 21-25 portable float operators per attention.
Without a mask no row is all -inf, so the guard never acts and the two agree; a mask (`attn_mask`,
`is_causal`) keeps upstream's float path for now. Heads and batch are one batch dimension of the
bmm, as the op's own math decomposition does."""

from __future__ import annotations

import math
from typing import Any

import torch

from cmx_gen.lower.facts import Rewrite
from cmx_gen.lower.fx_nodes import call_like, fx_args, module_path, source_line

aten = torch.ops.aten


def sdpa_as_bmm(graph: torch.fx.Graph, node: torch.fx.Node) -> Rewrite | None:
    """An unmasked, dropout-free scaled_dot_product_attention as bmm, scale, softmax, bmm."""
    if node.target != aten.scaled_dot_product_attention.default:
        return None
    args = list(fx_args(node)) + [None] * (6 - len(fx_args(node)))
    q, k, v, mask, dropout, causal = args[:6]
    if mask is not None or (dropout or 0.0) != 0.0 or causal or node.kwargs.get("enable_gqa"):
        return None
    vals: list[Any] = [x.meta.get("val") if isinstance(x, torch.fx.Node) else None for x in (q, k, v)]
    qv, kv, vv = vals
    if not all(isinstance(val, torch.Tensor) and val.dim() >= 3 for val in vals) or qv.shape[:-2] != kv.shape[:-2]:
        return None
    batch = int(qv.shape[:-2].numel())
    given: Any = node.kwargs.get("scale")
    scale = float(given) if given else 1.0 / math.sqrt(int(qv.shape[-1]))
    with graph.inserting_before(node):
        # each its own node of `node`'s line (not `from_node`: to_edge gives the nodes of one provenance
        # one debug handle, and each of these is its own layer in the profile and the trace)
        def made(target: Any, *args: Any) -> torch.fx.Node:
            return call_like(graph, target, args, node)

        q3 = made(aten.reshape.default, q, [batch, int(qv.shape[-2]), int(qv.shape[-1])])
        k3 = made(aten.reshape.default, k, [batch, int(kv.shape[-2]), int(kv.shape[-1])])
        v3 = made(aten.reshape.default, v, [batch, int(vv.shape[-2]), int(vv.shape[-1])])
        scores = made(torch.ops.cmx.bmm.default, q3, made(aten.transpose.int, k3, 1, 2))
        weights = made(aten.softmax.int, made(aten.mul.Tensor, scores, scale), -1)
        out = made(torch.ops.cmx.bmm.default, weights, v3)
        result = made(aten.reshape.default, out, [int(s) for s in node.meta["val"].shape])
    node.replace_all_uses_with(result)
    graph.erase_node(node)
    return Rewrite(
        node=node.name,
        op="aten::scaled_dot_product_attention",
        module=module_path(node),
        source=source_line(node),
        what=f"as cmx::bmm, a scale of {scale:.6g}, softmax and cmx::bmm over {batch} head(s): int8 on "
        "CMSIS-NN's arm_batch_matmul_s8 and arm_softmax_s8 in cmx-gen's backend",
    )
