"""Layers written with a shape rule, rewritten as the layers with numbers that CMSIS-NN runs (exact):

- a convolution with `padding="same"` or `"valid"` (aten.conv2d.padding; Conv1d's, once one_d.py
  lifted it) is the convolution with that padding as numbers, where PyTorch pads both sides alike
  (its dilation * (kernel - 1) is even: every odd kernel);
- a zero pad the same on both sides (nn.ZeroPad2d(1)) before a convolution is that convolution's
  padding;
- an adaptive max pool whose output size divides the input's (AdaptiveMaxPool2d(1), a global max
  pool) is the max pool with kernel and stride input / output; its indices, when nothing reads them;
  an adaptive average pool to a grid (adaptive_avg_pool2d(x, 2)) likewise the average pool.

Without them they stayed float: the cortex_m quantizer annotates neither aten.conv2d.padding nor
the adaptive pools (a global average pool aside), and the convolutions around them stayed float too.
"""

from __future__ import annotations

import operator
from typing import Any

import torch

from cmx_gen.lower.facts import Rewrite
from cmx_gen.lower.fx_nodes import module_path, source_line
from cmx_gen.model import input_layout

aten = torch.ops.aten


def _shape(node: Any) -> list[int] | None:
    val = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return [int(s) for s in val.shape] if isinstance(val, torch.Tensor) else None


def _rewrite(node: torch.fx.Node, op: str, what: str) -> Rewrite:
    return Rewrite(node=node.name, op=op, module=module_path(node), source=source_line(node), what=what)


def same_padding_as_numbers(graph: torch.fx.Graph, node: torch.fx.Node) -> Rewrite | None:
    """conv2d(..., padding="same"|"valid") as conv2d with that padding in numbers (numeric_padding)."""
    if node.target is not aten.conv2d.padding:
        return None
    args: list[Any] = list(node.args) + [None] * (7 - len(node.args))
    x, weight, bias, stride, padding, dilation, groups = args
    kernel = _shape(weight)
    if kernel is None or len(kernel) != 4 or padding not in ("same", "valid"):
        return None
    pads = numeric_padding(padding, kernel[2:], list(dilation or [1]))
    if pads is None:
        return None
    node.target = aten.conv2d.default
    node.args = (x, weight, bias, stride if stride is not None else [1, 1], pads, dilation or [1, 1], groups or 1)
    return _rewrite(node, "aten::conv2d", f'padding="{padding}" as padding {pads} (exact)')


def zero_pad_into_conv(graph: torch.fx.Graph, node: torch.fx.Node) -> Rewrite | None:
    """nn.ZeroPad2d(p) (or F.pad with zeros) then a convolution: the convolution's own padding,
    where the pad is the same on both sides of each dimension; the pad goes when nothing else reads
    it. (The pad op ran int8 on a contiguous image and the convolution after it stayed float.)"""
    if node.target is not aten.conv2d.default or not isinstance(node.args[0], torch.fx.Node):
        return None
    pad = node.args[0]
    widths = input_layout.symmetric_zero_pad(pad)
    if widths is None:
        return None  # one side only, or not zeros: not a padding CMSIS-NN takes
    args: list[Any] = list(node.args) + [None] * (7 - len(node.args))
    own = pair(args[4])
    pads = [own[0] + widths[0], own[1] + widths[1]]
    node.args = (pad.args[0], args[1], args[2], args[3] or [1, 1], pads, args[5] or [1, 1], args[6] or 1)
    if not pad.users:
        graph.erase_node(pad)
    return _rewrite(node, "aten::pad", f"zero padding {widths} into the convolution's own (exact)")


def numeric_padding(padding: str, kernel: list[int], dilation: list[int]) -> list[int] | None:
    """`padding="same"|"valid"` as each dimension's padding, or None where PyTorch pads the extra row
    or column on one side only ("same" with an even dilation * (kernel - 1)): no CMSIS-NN padding."""
    dilation = [int(d) for d in dilation] * (len(kernel) if len(dilation) == 1 else 1)
    if padding == "valid":
        return [0] * len(kernel)
    totals = [d * (k - 1) for d, k in zip(dilation, kernel)]
    return None if any(t % 2 for t in totals) else [t // 2 for t in totals]


def adaptive_avg_as_avg_pool(graph: torch.fx.Graph, node: torch.fx.Node) -> Rewrite | None:
    """An adaptive average pool to more than one value whose size divides the input's (a 2 x 2 grid
    of means) as an average pool of kernel and stride input / output; to a single value it stays
    (a global pool: upstream's own path)."""
    if node.target is not aten.adaptive_avg_pool2d.default:
        return None
    shape, out = _shape(node.args[0]), pair(node.args[1])
    if shape is None or len(shape) != 4 or out == [1, 1] or any(o <= 0 or i % o for i, o in zip(shape[2:], out)):
        return None
    kernel = [i // o for i, o in zip(shape[2:], out)]
    node.target = aten.avg_pool2d.default
    node.args = (node.args[0], kernel, kernel, [0, 0], False, True)
    return _rewrite(
        node, "aten::adaptive_avg_pool2d", f"output {out}: an average pool of kernel and stride {kernel} (exact)"
    )


def pair(value: Any, default: int = 0) -> list[int]:
    """A 2-D layer's int-or-pair argument as two numbers (AdaptivePool2d(2) is 2 x 2; None: default)."""
    items = list(value) if isinstance(value, (list, tuple)) else [value if value is not None else default] * 2
    return [int(v) for v in (items * 2 if len(items) == 1 else items)]


def adaptive_max_as_max_pool(graph: torch.fx.Graph, node: torch.fx.Node) -> Rewrite | None:
    if node.target is not aten.adaptive_max_pool2d.default:
        return None
    x, shape, out = node.args[0], _shape(node.args[0]), pair(node.args[1])
    if shape is None or len(shape) != 4:
        return None
    if any(o <= 0 or i % o for i, o in zip(shape[2:], out)):
        return None
    users = list(node.users)
    if not all(u.target is operator.getitem for u in users) or any(u.args[1] == 1 and u.users for u in users):
        return None  # its indices are read
    kernel = [i // o for i, o in zip(shape[2:], out)]
    with graph.inserting_before(node):
        pool = graph.call_function(aten.max_pool2d.default, (x, kernel, kernel, [0, 0], [1, 1], False))
    pool.meta.update({k: v for k, v in node.meta.items() if k in ("stack_trace", "nn_module_stack", "from_node")})
    for user in users:
        if user.args[1] == 0:
            pool.meta["val"] = user.meta.get("val")
            user.replace_all_uses_with(pool)
        graph.erase_node(user)
    graph.erase_node(node)
    return _rewrite(
        pool, "aten::adaptive_max_pool2d", f"output {out}: a max pool of kernel and stride {kernel} (exact)"
    )
