"""Exact graph rewrites for what the target's kernels get wrong, applied to the float graph before
quantization, so that the model stays on CMSIS-NN instead of being refused (target_limits.yaml).

A rewrite is exact when the rewritten graph computes, in exact arithmetic, the same function: the
reference is computed from the rewritten program like any other, so PASS stays bit-exact. Each
applied rewrite is named in report.json (`rewrites`) and in the printed report.
"""

from __future__ import annotations

from typing import Any

import torch

from cmx_gen.lower import keep_fp32
from cmx_gen.lower.facts import Rewrite
from cmx_gen.lower.fx_nodes import attribute, module_path, source_line
from cmx_gen.lower.ops import own_ops, recurrent_graph
from cmx_gen.lower.rewrites import attention, one_d, shape_rules
from cmx_gen.lower.rewrites.shape_rules import pair

aten = torch.ops.aten

# Elementwise ops between a convolution and its crop that the quantizer fuses into the convolution:
# the crop goes after them (a crop commutes with an elementwise op), so the fusion still happens.
_FUSED_ACTIVATIONS = {
    aten.relu.default,
    aten.relu_.default,
    aten.hardtanh.default,
    aten.hardtanh_.default,
    aten.clamp.default,
    aten.clamp_.default,
}


def _transpose_conv_crop(graph: torch.fx.Graph, node: torch.fx.Node) -> Rewrite | None:
    """ConvTranspose2d with stride > 1 and padding p: CMSIS-NN's arm_transpose_conv_s8 places p
    differently from PyTorch. PyTorch's result is the unpadded transposed convolution with p rows and
    columns cropped from each side (output_padding q <= p only moves the bottom/right crop), so
    compute that with padding 0 and crop: out[o] = full[o + p] for o < out."""
    if node.target is not aten.conv_transpose2d.input:
        return None
    args = list(node.args) + [None] * (8 - len(node.args))
    stride, padding, output_padding = pair(args[3], 1), pair(args[4], 0), pair(args[5], 0)
    if not any(s > 1 for s in stride) or not any(padding) or any(q > p for q, p in zip(output_padding, padding)):
        return None
    value = node.meta.get("val")
    if not isinstance(value, torch.Tensor) or value.dim() != 4:
        return None
    out_h, out_w = int(value.shape[2]), int(value.shape[3])
    args[3], args[4], args[5] = stride, [0, 0], [0, 0]
    if args[6] is None:
        args[6] = 1
    if args[7] is None:
        args[7] = [1, 1]
    node.args = tuple(args)

    # Crop after the activation the quantizer fuses into the convolution, if that is its one user.
    last = node
    while len(last.users) == 1 and next(iter(last.users)).target in _FUSED_ACTIVATIONS:
        last = next(iter(last.users))
    channels_last = value.is_contiguous(memory_format=torch.channels_last) and not value.is_contiguous()
    users = list(last.users)
    with graph.inserting_after(last):
        # The portable slice kernel copies rows of the contiguous layout: crop a contiguous copy.
        flat = graph.call_function(aten.clone.default, (last,), {"memory_format": torch.contiguous_format})
        with graph.inserting_after(flat):
            rows = graph.call_function(aten.slice.Tensor, (flat, 2, padding[0], padding[0] + out_h))
        with graph.inserting_after(rows):
            cropped = graph.call_function(aten.slice.Tensor, (rows, 3, padding[1], padding[1] + out_w))
        result = cropped
        if channels_last and any(u.op != "output" for u in users):  # the consumers' layout, as before
            with graph.inserting_after(cropped):
                result = graph.call_function(aten.clone.default, (cropped,), {"memory_format": torch.channels_last})
    for user in users:
        user.replace_input_with(last, result)
    for new in (flat, rows, cropped, result):
        new.meta.update(
            {k: v for k, v in last.meta.items() if k in ("nn_module_stack", "stack_trace", "source_fn_stack")}
        )
    return Rewrite(
        node=node.name,
        op="aten::conv_transpose2d",
        module=module_path(node),
        source=source_line(node),
        what=f"stride {stride} with padding {padding}: computed with padding 0 on CMSIS-NN, then cropped "
        f"{padding[0]} row(s) and {padding[1]} column(s) from each side (exact)",
    )


_CONVS = {aten.conv2d.default, aten.convolution.default, aten.conv2d.padding}


def _batch_norm_as_depthwise(graph: torch.fx.Graph, node: torch.fx.Node) -> Rewrite | None:
    """An inference BatchNorm2d that follows no convolution (the quantizer folds one that does, and
    fails on this one: "KeyError: batch_norm") is a per-channel affine map: a 1x1 depthwise
    convolution with weight gamma / sqrt(var + eps) and bias beta - mean * that."""
    if node.target != aten.batch_norm.default or len(node.args) < 8 or node.args[5]:
        return None
    x, weight, bias, mean, var = node.args[:5]
    module = graph.owning_module
    value = node.meta.get("val")
    if module is None or not isinstance(value, torch.Tensor) or value.dim() != 4:
        return None
    if isinstance(x, torch.fx.Node) and x.target in _CONVS:
        return None
    tensors = [_attr(module, n) for n in (weight, bias, mean, var)]
    if tensors[2] is None or tensors[3] is None:
        return None
    channels = int(value.shape[1])
    gamma = tensors[0] if tensors[0] is not None else torch.ones(channels)
    beta = tensors[1] if tensors[1] is not None else torch.zeros(channels)
    factor = gamma / torch.sqrt(tensors[3] + float(str(node.args[7])))
    constants = {
        "w": factor.reshape(channels, 1, 1, 1).detach().clone(),
        "b": (beta - tensors[2] * factor).detach().clone(),
    }
    fake = value.fake_mode  # type: ignore[attr-defined]
    attrs = []
    for kind, tensor in constants.items():
        name = f"{node.name}_as_depthwise_{kind}"
        # a parameter, as a conv's own weight is: the quantizer folds a BatchNorm after this conv into
        # it by registering the parameter again (a plain attribute: "attribute already exists")
        module.register_parameter(name, torch.nn.Parameter(tensor, requires_grad=False))
        with graph.inserting_before(node):
            attr = graph.get_attr(name)
        attr.meta["val"] = fake.from_tensor(tensor)
        attrs.append(attr)
    with graph.inserting_before(node):
        conv = graph.call_function(aten.conv2d.default, (x, attrs[0], attrs[1], [1, 1], [0, 0], [1, 1], channels))
    conv.meta.update(
        {k: v for k, v in node.meta.items() if k in ("stack_trace", "nn_module_stack", "from_node", "val")}
    )
    node.replace_all_uses_with(conv)
    graph.erase_node(node)
    return Rewrite(
        node=node.name,
        op="aten::batch_norm",
        module=module_path(node),
        source=source_line(node),
        what=f"after no convolution: a 1x1 depthwise convolution of {channels} channel(s) (the same affine map)",
    )


def _attr(module: torch.nn.Module, node: Any) -> torch.Tensor | None:
    """The tensor a get_attr node reads (`l1.weight`: a parameter of a submodule)."""
    if not isinstance(node, torch.fx.Node) or node.op != "get_attr":
        return None
    found = attribute(module, str(node.target))
    return found if isinstance(found, torch.Tensor) else None


REWRITES = (
    shape_rules.same_padding_as_numbers,
    shape_rules.zero_pad_into_conv,
    shape_rules.adaptive_max_as_max_pool,
    shape_rules.adaptive_avg_as_avg_pool,
    _batch_norm_as_depthwise,
    _transpose_conv_crop,
    recurrent_graph.as_own_op,
    own_ops.as_own_op,
    attention.sdpa_as_bmm,
)
OWN_OPS = (recurrent_graph.as_own_op, own_ops.as_own_op, attention.sdpa_as_bmm)  # not for --keep-fp32 parts


def apply(module: torch.fx.GraphModule, keep: tuple[str, ...] = (), own: bool = True) -> list[Rewrite]:
    """Rewrite `module` (the exported float model) in place; the rewrites applied, in graph order.
    `keep`: the --keep-fp32 parts (and float islands), whose recurrent layers stay PyTorch's own float ops;
    `own` False (--no-delegate: only cmx-gen's backend runs cmx-gen's ops): none become cmx-gen's."""
    applied = [
        Rewrite(node=node, op=op, module=where, source=line, what=what)
        for node, op, where, line, what in one_d.lift(module)
    ]
    for node in list(module.graph.nodes):
        if node.op != "call_function" or getattr(node, "_erased", False):  # (a rewrite may drop the nodes after it)
            continue
        kept = any(keep_fp32.selects(node, pattern) for pattern in keep)
        for rewrite in REWRITES:
            if (kept or not own) and rewrite in OWN_OPS:
                continue
            done = rewrite(module.graph, node)
            if done:
                applied.append(done)
                break
    if applied:
        module.graph.lint()
        module.recompile()
    return applied
