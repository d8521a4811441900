"""Attention as PyTorch writes it, on int8 (issue 53): `F.scaled_dot_product_attention`, which
`nn.MultiheadAttention` and `nn.TransformerEncoderLayer` call, written out before quantization as
the ops cmx-gen's backend runs on int8:

    scores = cmx::bmm(q, k^T) * scale      (arm_batch_matmul_s8; the scale a table)
    weights = softmax(scores, -1)          (arm_softmax_s8)
    out = cmx::bmm(weights, v)

ExecuTorch decomposes the op itself into a float bmm, a `_safe_softmax` (its eq / logical_not / any /
where guard against rows of -inf) and another bmm, 21-25 portable float operators per attention.
A constant mask (`is_causal`, a boolean `attn_mask`, a float one of 0 and -inf, whatever ops on
constants made it) is folded ahead of time: each row of scores keeps the keys [lo, hi) it may attend
to, and the softmax is `cmx::masked_softmax` (arm_softmax_s8 over those keys alone, the rest 0; a row
with none is all 0, as `_safe_softmax` has it). A mask whose allowed keys are not one run per row, or
that depends on the input, keeps upstream's float path. Heads and batch are one batch dimension of
the bmm, as the op's own math decomposition does."""

from __future__ import annotations

import math
from typing import Any

import torch

from cmx_gen.lower.facts import Rewrite
from cmx_gen.lower.fx_nodes import attribute, call_like, fx_args, module_path, source_line
from cmx_gen.lower.ops import own_ops  # noqa: F401 (own_ops: cmx::bmm)
from cmx_gen.lower.rewrites import masked_softmax

aten = torch.ops.aten


def sdpa_as_bmm(graph: torch.fx.Graph, node: torch.fx.Node) -> Rewrite | None:
    """A dropout-free scaled_dot_product_attention, unmasked or with a constant mask, as bmm, scale,
    softmax (masked: cmx::masked_softmax), bmm."""
    if node.target != aten.scaled_dot_product_attention.default:
        return None
    args = list(fx_args(node)) + [None] * (6 - len(fx_args(node)))
    q, k, v, mask, dropout, causal = args[:6]
    if (dropout or 0.0) != 0.0 or node.kwargs.get("enable_gqa"):
        return None
    vals: list[Any] = [x.meta.get("val") if isinstance(x, torch.fx.Node) else None for x in (q, k, v)]
    qv, kv, vv = vals
    if not all(isinstance(val, torch.Tensor) and val.dim() >= 3 for val in vals) or qv.shape[:-2] != kv.shape[:-2]:
        return None
    ranges = None
    if mask is not None or causal:
        module = graph.owning_module
        value = _constant(module, mask) if module is not None else _NOT_CONSTANT
        ranges = allowed_keys(value, bool(causal), qv.shape, int(kv.shape[-2]))
        if ranges is None:
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
        scaled = made(aten.mul.Tensor, scores, scale)
        weights = made(aten.softmax.int, scaled, -1) if ranges is None else made(masked_softmax.FLOAT, scaled, ranges)
        out = made(torch.ops.cmx.bmm.default, weights, v3)
        result = made(aten.reshape.default, out, [int(s) for s in node.meta["val"].shape])
    node.replace_all_uses_with(result)
    graph.erase_node(node)
    return Rewrite(
        node=node.name,
        op="aten::scaled_dot_product_attention",
        module=module_path(node),
        source=source_line(node),
        what=f"as cmx::bmm, a scale of {scale:.6g}, softmax{' (the mask folded)' if ranges else ''} and cmx::bmm "
        f"over {batch} head(s): int8 on CMSIS-NN's arm_batch_matmul_s8 and arm_softmax_s8 in cmx-gen's backend",
    )


def allowed_keys(mask: Any, causal: bool, q_shape: torch.Size, keys: int) -> list[int] | None:
    """Each score row's allowed keys as [lo, hi) pairs, flattened: one pair per query when every head
    and batch is masked alike, else one per row of [batch..., queries]; None when a row's allowed keys
    are not one run, the mask is no constant, or it is a float mask of other values than 0 and -inf."""
    queries = int(q_shape[-2])
    if causal:  # torch's is_causal: ones(L, S).tril(), the top-left corner
        allowed = torch.ones(queries, keys, dtype=torch.bool).tril()
    elif isinstance(mask, torch.Tensor) and mask.dtype == torch.bool:
        allowed = mask
    elif isinstance(mask, torch.Tensor) and mask.is_floating_point():
        if not bool(((mask == 0) | (mask == float("-inf"))).all()):
            return None
        allowed = mask == 0
    else:
        return None
    try:
        rows = allowed.expand(*q_shape[:-2], queries, keys).reshape(-1, queries, keys)
    except RuntimeError:
        return None
    per_query = bool((rows == rows[0]).all())
    pairs: list[int] = []
    for row in rows[0] if per_query else rows.reshape(-1, keys):
        at = torch.nonzero(row).flatten().tolist()
        if at and at[-1] - at[0] + 1 != len(at):
            return None
        pairs += [at[0], at[-1] + 1] if at else [0, 0]
    return pairs


_NOT_CONSTANT = object()


def _constant(module: torch.nn.Module, node: Any, depth: int = 0) -> Any:
    """The value of `node` when it is made from constants alone (a buffer, `torch.ones(...).tril()` in
    forward), evaluated here; _NOT_CONSTANT when it depends on an input."""
    if not isinstance(node, torch.fx.Node):
        return node
    if node.op == "get_attr":
        return attribute(module, str(node.target))
    if node.op != "call_function" or depth > 32:
        return _NOT_CONSTANT
    values = [_constant(module, a, depth + 1) for a in node.all_input_nodes]
    if any(v is _NOT_CONSTANT for v in values):
        return _NOT_CONSTANT
    known = dict(zip(node.all_input_nodes, values))
    args = torch.fx.node.map_arg(node.args, known.__getitem__)
    kwargs = torch.fx.node.map_arg(node.kwargs, known.__getitem__)
    try:
        with torch.no_grad():
            return node.target(*args, **kwargs)  # type: ignore[operator]
    except Exception:  # an op that cannot run here: the mask is taken as not constant
        return _NOT_CONSTANT
