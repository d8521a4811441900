"""Element-wise float operators between int8 layers as one 256-entry table each run (issue 34):
a run of operators from a dequantize to a quantize whose other arguments are scalars (the attention's
scale, exp, a subtraction; data/lut_ops.yaml) is applied to the 256 values its input can take and
quantized as the quantize after it does, and `cmx::quantized_lut` on the int8 tensors takes its
place. The firmware (cmx_lut_s8) and the host reference read the same table, so PASS is exact by
construction. An activation upstream left on int8 data, its quantization folded into its meta, is a
table too, and so is an int8 minimum or maximum against a constant."""

from __future__ import annotations

from typing import Any

import torch

from cmx_gen.common.op_classes import elementwise_ops, folded_ops
from cmx_gen.lower.delegate.emit import is_int8
from cmx_gen.lower.fx_nodes import constant_tensor, fx_args, op_name
from cmx_gen.lower.ops.own_ops import drop_unused, qparams_of
from cmx_gen.lower.rewrites.concat import CAT_OPS


@torch.library.custom_op("cmx::quantized_lut", mutates_args=())
def quantized_lut(x: torch.Tensor, table: list[int]) -> torch.Tensor:
    """cmx_lut_s8 on the host: each int8 value looked up in the 256-entry table (index value + 128)."""
    return torch.tensor(table, dtype=torch.int8)[x.to(torch.int64) + 128]


@quantized_lut.register_fake
def _(x: torch.Tensor, table: list[int]) -> torch.Tensor:
    return torch.empty_like(x, dtype=torch.int8)


def _scalar(program: Any, arg: Any) -> Any:
    """A scalar argument as it is, a one-element constant as a tensor; None for anything else."""
    if not isinstance(arg, torch.fx.Node):
        return arg
    value = constant_tensor(program, arg) if arg.op == "placeholder" else None
    return value.reshape(()) if value is not None and value.numel() == 1 else None


def _apply(node: torch.fx.Node, program: Any, values: torch.Tensor) -> torch.Tensor | None:
    """An element-wise op on `values` (its other arguments scalars or one-element constants); None if it
    is not one."""
    if op_name(node).split(".")[0] not in elementwise_ops():
        return None
    args = list(fx_args(node))
    others = [_scalar(program, a) for a in args[1:]]
    if any(o is None and a is not None for o, a in zip(others, args[1:])):
        return None
    with torch.no_grad():
        out = node.target(values, *others, **dict(node.kwargs))  # type: ignore[operator]
    return out if isinstance(out, torch.Tensor) and out.shape == values.shape else None


def _table(
    chain: list[torch.fx.Node], program: Any, x_q: tuple[float, int], y_q: tuple[float, int]
) -> list[int] | None:
    """The chain of element-wise ops applied to the 256 values its int8 input can take, then quantized
    as the quantize after it does; None if one of them is not element-wise."""
    values: torch.Tensor | None = (torch.arange(-128, 128, dtype=torch.float32) - x_q[1]) * x_q[0]
    for node in chain:
        values = _apply(node, program, values) if values is not None else None
    if values is None:
        return None
    q = torch.clamp(torch.round(values.to(torch.float64) / y_q[0]) + y_q[1], -128, 127)
    return [int(v) for v in q.to(torch.int64)]


def requantize_table(x_q: tuple[float, int], y_q: tuple[float, int]) -> list[int]:
    """The table of a requantization: each int8 value at x_q's parameters quantized at y_q's."""
    table = _table([], None, x_q, y_q)
    assert table is not None
    return table


def to_int8(program: Any) -> None:
    """Each run of element-wise float ops from a dequantize to a quantize (one user each) as one
    cmx::quantized_lut; a dequantize straight into a quantize of other parameters before a concat (a
    requantization, concat.share_quantization) too."""
    graph = program.graph_module.graph
    for q in list(graph.nodes):
        y_q = qparams_of(q, "quantize_per_tensor")
        if y_q is None:
            continue
        chain: list[torch.fx.Node] = []
        node = fx_args(q)[0]
        while (
            isinstance(node, torch.fx.Node)
            and op_name(node).split(".")[0] in elementwise_ops()
            and len(node.users) == 1
        ):
            chain.insert(0, node)
            node = fx_args(node)[0]
        x_q = qparams_of(node, "dequantize_per_tensor", program)
        if x_q is None or tuple(q.meta["val"].shape) != tuple(node.meta["val"].shape):
            continue
        if not chain and (x_q == y_q or len(node.users) != 1 or not all(op_name(u) in CAT_OPS for u in q.users)):
            continue  # a concat input's requantization (concat.share_quantization) is a table of no ops
        table = _table(chain, program, x_q, y_q)
        if table is None:
            continue
        with graph.inserting_before(q):
            made = graph.call_function(torch.ops.cmx.quantized_lut.default, (fx_args(node)[0], table))
        made.meta = {**(chain[-1] if chain else node).meta, "val": q.meta["val"]}
        q.replace_all_uses_with(made)
        graph.erase_node(q)
        for op in reversed(chain):
            graph.erase_node(op)
        drop_unused(graph, [node])
    _folded_to_int8(program)
    _bounds_to_int8(program)
    graph.lint()
    program.graph_module.recompile()


BOUNDS = {"aten::minimum": min, "aten::maximum": max}


def _bounds_to_int8(program: Any) -> None:
    """An int8 minimum or maximum against a one-element int8 constant (upstream's DecomposeHardswishPass
    writes `minimum(conv, q(3))`) as a table: the portable kernel refuses a channels-last tensor beside
    the constant's default dim order (tensors_have_same_dim_order: execute error 0x12 on the target)."""
    graph = program.graph_module.graph
    for node in list(graph.nodes):
        bound = BOUNDS.get(op_name(node).split(".")[0])
        args = fx_args(node)
        if bound is None or len(args) != 2 or not is_int8(node) or not is_int8(args[0]):
            continue
        constant = constant_tensor(program, args[1]) if isinstance(args[1], torch.fx.Node) else None
        if constant is None or constant.numel() != 1 or constant.dtype != torch.int8:
            continue
        limit = int(constant.reshape(-1)[0])
        with graph.inserting_before(node):
            made = graph.call_function(
                torch.ops.cmx.quantized_lut.default, (args[0], [bound(v, limit) for v in range(-128, 128)])
            )
        made.meta = dict(node.meta)
        node.replace_all_uses_with(made)
        graph.erase_node(node)


def _folded_to_int8(program: Any) -> None:
    """An activation left on int8 data with its quantization folded into its meta (lut_ops.yaml
    `folded`) as a table from its input's parameters to its output's."""
    graph = program.graph_module.graph
    for node in list(graph.nodes):
        if op_name(node).split(".")[0] not in folded_ops() or not is_int8(node) or not is_int8(fx_args(node)[0]):
            continue
        x_q, y_q = _folded(node, "input_qparams"), _folded(node, "output_qparams")
        table = _table([node], program, x_q, y_q) if x_q and y_q else None
        if table is None:
            continue
        with graph.inserting_before(node):
            made = graph.call_function(torch.ops.cmx.quantized_lut.default, (fx_args(node)[0], table))
        made.meta = dict(node.meta)
        node.replace_all_uses_with(made)
        graph.erase_node(node)


def _folded(node: torch.fx.Node, key: str) -> tuple[float, int] | None:
    """(scale, zero point) upstream's folding left in the node's meta, if per tensor."""
    found = (node.meta.get(key) or {}).get(0)
    if found is None or getattr(found, "per_channel", False) or not isinstance(found.scale, float):
        return None
    return float(found.scale), int(found.zp)
