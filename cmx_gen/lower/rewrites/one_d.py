"""1-D layers as 2-D layers of height 1, so that they run on CMSIS-NN (exact_rewrites.py applies it).

A Conv1d over [N, C, L] is exactly a Conv2d over [N, C, 1, L] with kernel [1, k] (stride, padding,
dilation and groups on the width; padding="same" as numbers where both sides pad alike); MaxPool1d,
AvgPool1d, AdaptiveAvgPool1d, a dividing AdaptiveMaxPool1d and a nearest nn.Upsample likewise;
BatchNorm1d and elementwise ops work on dim 1 at any rank, so they follow the convolution into 4-D and
the quantizer folds and fuses them as it does for 2-D models. TFLite's converter lowers CONV_1D the
same way.

A run of such layers is lifted as a whole: one unsqueeze and one copy to channels-last where the
run starts, one copy back and one squeeze where a layer that is not 1-D reads it (a flatten before a
linear layer), and nothing between consecutive 1-D layers.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, NamedTuple

import torch
from torch.fx.node import Argument

from cmx_gen.lower.fx_nodes import module_path, source_line
from cmx_gen.lower.rewrites import shape_rules

aten = torch.ops.aten

# Ops that work on dim 1 of a tensor of any rank (elementwise, or per channel): they follow a lifted
# input into 4-D as they are.
_ANY_RANK = {
    aten.relu.default,
    aten.relu_.default,
    aten.hardtanh.default,
    aten.hardtanh_.default,
    aten.clamp.default,
    aten.clamp_.default,
    aten.sigmoid.default,
    aten.tanh.default,
    aten.hardswish.default,
    aten.hardswish_.default,
    aten.hardsigmoid.default,
    aten.leaky_relu.default,
    aten.leaky_relu_.default,
    aten.gelu.default,
    aten.silu.default,
    aten.silu_.default,
    aten.relu6.default,
    aten.batch_norm.default,
    aten.add.Tensor,
    aten.add_.Tensor,
    aten.mul.Tensor,
    aten.mul_.Tensor,
    aten.sub.Tensor,
    aten.dropout.default,
}


_CONV1D = (aten.conv1d.default, aten.conv1d.padding)


def _one(value: Any, default: int) -> int:
    if isinstance(value, (list, tuple)):
        return int(value[0]) if value else default
    return int(value) if value is not None else default


def _val(node: Any) -> Any:
    return node.meta.get("val") if isinstance(node, torch.fx.Node) else None


def _is_3d(node: Any) -> bool:
    val = _val(node)
    return isinstance(val, torch.Tensor) and val.dim() == 3


class Lift:
    """One graph's lift: which 3-D values have a 4-D twin, and the weights made 4-D."""

    def __init__(self, module: torch.fx.GraphModule) -> None:
        self.module = module
        self.graph = module.graph
        self.twin: dict[torch.fx.Node, torch.fx.Node] = {}  # 3-D value -> its [N, C, 1, L] channels-last twin
        self.lifted: list[torch.fx.Node] = []  # the 3-D layers computed in 4-D instead, in graph order
        self.weights: set[torch.fx.Node] = set()

    def to_4d(self, node: torch.fx.Node, before: torch.fx.Node) -> torch.fx.Node:
        """The 4-D channels-last twin of a 3-D value: made where the run starts (unsqueeze + copy)."""
        if node not in self.twin:
            with self.graph.inserting_before(before):
                wide = self.graph.call_function(aten.unsqueeze.default, (node, 2))
            wide.meta.update(_meta(before))
            val = _val(node)
            if int(val.shape[1]) == 1 and int(val.stride(1)) == 1:
                # one channel laid out channel-innermost (model/source.channels_last): the unsqueezed
                # view is channels-last already, and a copy would be a 1-channel channels-last
                # tensor, whose dim order the portable kernels refuse
                self.twin[node] = wide
                return wide
            with self.graph.inserting_before(before):
                last = self.graph.call_function(aten.clone.default, (wide,), {"memory_format": torch.channels_last})
            last.meta.update(_meta(before))
            self.twin[node] = last
        return self.twin[node]

    def weight_4d(self, node: torch.fx.Node) -> torch.fx.Node:
        """A conv1d weight [O, I/g, k] made [O, I/g, 1, k] where it is kept, under its own name (a
        constant, as the quantizer's per-channel weight observer and the cortex_m passes want)."""
        if node not in self.weights:
            owner_path, _, name = str(node.target).rpartition(".")
            owner = self.module.get_submodule(owner_path) if owner_path else self.module
            weight = getattr(owner, name)
            setattr(owner, name, torch.nn.Parameter(weight.detach().unsqueeze(2), requires_grad=False))
            self.weights.add(node)
        return node

    def replace(
        self,
        node: torch.fx.Node,
        target: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Argument] | None = None,
    ) -> None:
        """`node` (3-D) computed as `target(*args)` in 4-D instead; later 1-D layers read the 4-D result."""
        with self.graph.inserting_before(node):
            wide = self.graph.call_function(target, args, kwargs or {})
        wide.meta.update(_meta(node))
        self.twin[node] = wide
        self.lifted.append(node)

    def finish(self) -> None:
        """Give each reader that was not lifted (a flatten, the output) the 3-D value back, as a
        contiguous copy squeezed, then drop the 3-D layers."""
        lifted = set(self.lifted)
        for node in self.lifted:
            outside = [u for u in node.users if u not in lifted]
            if not outside:
                continue
            wide = self.twin[node]
            flat = wide
            if int(_val(node).shape[-1]) != 1:  # a length-1 result is the same bytes in either layout
                with self.graph.inserting_after(wide):
                    flat = self.graph.call_function(
                        aten.clone.default, (wide,), {"memory_format": torch.contiguous_format}
                    )
                flat.meta.update(_meta(node))
            with self.graph.inserting_after(flat):
                narrow = self.graph.call_function(aten.squeeze.dims, (flat, [2]))
            narrow.meta.update(_meta(node))
            for user in outside:
                user.replace_input_with(node, narrow)
        for node in reversed(self.lifted):
            self.graph.erase_node(node)


def _meta(node: torch.fx.Node) -> dict[str, object]:
    return {k: v for k, v in node.meta.items() if k in ("nn_module_stack", "stack_trace", "source_fn_stack")}


class Lifted(NamedTuple):
    """A 1-D layer computed in 2-D: the node it was, the op as written, where, and how."""

    node: str
    op: str
    module: str
    source: str
    what: str


def _lift_conv(state: Lift, node: torch.fx.Node, args: list[Any]) -> None:
    """A 1-D convolution as a 2-D one of height 1 over [N, C, 1, L]."""
    x, weight = args[0], args[1]
    bias = args[2] if len(args) > 2 else None
    stride, padding, dilation = (
        (args[3] if len(args) > 3 else 1),
        (args[4] if len(args) > 4 else 0),
        (args[5] if len(args) > 5 else 1),
    )
    groups = int(args[6]) if len(args) > 6 else 1
    if isinstance(padding, str):  # "same"/"valid" as numbers where CMSIS-NN can pad so (shape_rules)
        numeric = shape_rules.numeric_padding(padding, [int(_val(weight).shape[-1])], [_one(dilation, 1)])
        pad: Any = padding if numeric is None else [0, numeric[0]]
    else:
        pad = [0, _one(padding, 0)]
    state.replace(
        node,
        aten.conv2d.padding if isinstance(pad, str) else aten.conv2d.default,
        (
            state.to_4d(x, node),
            state.weight_4d(weight),
            bias,
            [1, _one(stride, 1)],
            pad,
            [1, _one(dilation, 1)],
            groups,
        ),
    )


def _lift_pool(state: Lift, node: torch.fx.Node, args: list[Any]) -> tuple[str, str]:
    """A 1-D max or average pool as a 2-D one of height 1; returns the op as written and what it became."""
    kernel = _one(args[1], 1)
    stride = _one(args[2], kernel) if len(args) > 2 and args[2] not in (None, []) else kernel
    padding = _one(args[3], 0) if len(args) > 3 else 0
    x4 = state.to_4d(args[0], node)
    if node.target is aten.max_pool1d.default:
        dilation = _one(args[4], 1) if len(args) > 4 else 1
        ceil = bool(args[5]) if len(args) > 5 else False
        state.replace(node, aten.max_pool2d.default, (x4, [1, kernel], [1, stride], [0, padding], [1, dilation], ceil))
        return "aten::max_pool1d", "computed as a 2-D max pool of height 1 (exact)"
    ceil = bool(args[4]) if len(args) > 4 else False
    include_pad = bool(args[5]) if len(args) > 5 else True
    state.replace(node, aten.avg_pool2d.default, (x4, [1, kernel], [1, stride], [0, padding], ceil, include_pad))
    return "aten::avg_pool1d", "computed as a 2-D average pool of height 1 (exact)"


def lift(module: torch.fx.GraphModule) -> list[Lifted]:
    """Lift every 1-D convolution and pool (and the per-channel and elementwise layers after them)
    to 4-D in place; one record per convolution or pool, in graph order."""
    state = Lift(module)
    done: list[Lifted] = []
    dropped: list[torch.fx.Node] = []  # adaptive max pools whose values became max pools

    def record(node: torch.fx.Node, op: str, what: str) -> None:
        done.append(Lifted(node.name, op, module_path(node), source_line(node), what))

    # weights only Conv1d layers read, asked before the first lift adds a conv2d reader (a Conv1d module
    # called twice reads its weight twice: both calls are lifted)
    owned = {n for n in module.graph.nodes if _own_parameter(n)}
    for node in list(module.graph.nodes):
        if node.op != "call_function" or not _is_3d(node):
            continue
        args = list(node.args)
        if node.target in _CONV1D and _is_3d(args[0]) and args[1] in owned:
            _lift_conv(state, node, args)
            record(node, "aten::conv1d", "computed as a 2-D convolution of height 1 over [N, C, 1, L] (exact)")
        elif node.target in (aten.max_pool1d.default, aten.avg_pool1d.default) and _is_3d(args[0]):
            record(node, *_lift_pool(state, node, args))
        elif _dividing_adaptive_max(node):
            # the values of an adaptive max pool whose size divides the length: a max pool (its
            # indices, read by nothing, go with it)
            pool = args[0]
            kernel = int(_val(pool.args[0]).shape[-1]) // _one(pool.args[1], 1)
            x4 = state.to_4d(pool.args[0], node)
            state.replace(node, aten.max_pool2d.default, (x4, [1, kernel], [1, kernel], [0, 0], [1, 1], False))
            dropped.append(pool)
            record(pool, "aten::adaptive_max_pool1d", f"a 2-D max pool of height 1, kernel and stride {kernel} (exact)")
        elif node.target is aten.upsample_nearest1d.vec and _is_3d(args[0]):
            size, scales = (args + [None, None])[1:3]
            state.replace(
                node,
                aten.upsample_nearest2d.vec,
                (
                    state.to_4d(args[0], node),
                    [1, _one(size, 1)] if size else None,
                    [1.0, float(_one(scales, 1))] if scales else None,
                ),
            )
            record(node, "aten::upsample_nearest1d", "computed as a 2-D nearest upsampling of height 1 (exact)")
        elif node.target is aten.adaptive_avg_pool1d.default and _is_3d(args[0]):
            size = _one(args[1], 1)
            state.replace(node, aten.adaptive_avg_pool2d.default, (state.to_4d(args[0], node), [1, size]))
            record(node, "aten::adaptive_avg_pool1d", "computed as a 2-D adaptive average pool of height 1 (exact)")
        elif node.target in _ANY_RANK and any(a in state.twin for a in args if isinstance(a, torch.fx.Node)):
            state.replace(node, node.target, tuple(_lift_operand(state, a, node) for a in args), dict(node.kwargs))
    state.finish()
    for pool in dropped:  # what is left of it: its unread indices
        for user in list(pool.users):
            if not user.users:
                module.graph.erase_node(user)
        if not pool.users:
            module.graph.erase_node(pool)
    return done


def _dividing_adaptive_max(node: torch.fx.Node) -> bool:
    """The values (item 0) of a 1-D adaptive max pool whose output size divides the length and whose
    indices nothing reads."""
    pool = node.args[0] if node.target is operator.getitem and node.args else None
    if not isinstance(pool, torch.fx.Node) or pool.target is not aten.adaptive_max_pool1d.default or node.args[1] != 0:
        return False
    length, size = int(_val(pool.args[0]).shape[-1]), _one(pool.args[1], 1)
    indices_read = any(u.args[1] == 1 and u.users for u in pool.users)
    return size > 0 and length % size == 0 and not indices_read


def _own_parameter(weight: Any) -> bool:
    """A weight the lift can make 4-D where it is kept: a parameter only Conv1d layers read (any
    other weight, a computed one, leaves that Conv1d as it is: in float, and the report says so)."""
    return (
        isinstance(weight, torch.fx.Node) and weight.op == "get_attr" and all(u.target in _CONV1D for u in weight.users)
    )


def _lift_operand(state: Lift, arg: Any, node: torch.fx.Node) -> Any:
    """An argument of a layer that follows a lifted one: its twin, a 3-D tensor made 4-D, a
    per-channel vector (BatchNorm's) or a scalar as it is."""
    if not isinstance(arg, torch.fx.Node):
        return arg
    if arg in state.twin:
        return state.twin[arg]
    if _is_3d(arg):
        return state.to_4d(arg, node)
    return arg
