"""Float islands instead of refusals, and what the report says of every part of a program that
computes in float.

When a step cannot take a node to int8 (an upstream cortex_m pass fails on it, or a CMSIS-NN kernel
would stop on it or compute it wrong), it raises `NeedsFloat` naming the node of the exported graph
the failing node was made from. lowering.lower then lowers again with that node left out of
quantization: it runs in float on portable kernels with quantize/dequantize at its edges, as
`--keep-fp32` would leave it, and everything else is lowered as usual. `--strict` refuses such a
program (program/report.check_strict), with the reason.

`float_parts` groups the program's float compute nodes into connected parts and says why each is
float: an island cmx-gen chose, a part the user kept with --keep-fp32, or an op with no int8 kernel.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch

from cmx_gen.common.errors import ExportError
from cmx_gen.common.op_classes import classify
from cmx_gen.lower import keep_fp32
from cmx_gen.lower.facts import FloatIsland, FloatPart, FloatWhy
from cmx_gen.lower.fx_nodes import module_path, op_name, origins, source_line

MAX_ISLANDS = 16  # lowerings again before cmx-gen gives up and refuses, naming the last failure


class NeedsFloat(ExportError):
    """A step could not take `island.part` to int8. The problem and hint are the refusal `--strict`
    (or a node that is already in float) gets."""

    def __init__(self, problem: str, hint: str, island: FloatIsland) -> None:
        super().__init__(problem, hint)
        self.island = island


def island_of(node: torch.fx.Node, exported: torch.fx.GraphModule, reason: str) -> FloatIsland | None:
    """The node of the exported graph (the one the quantizer annotates) that `node`, a node of a later
    graph, was made from, as an island; None when its provenance leads to none."""
    calls = {n.name: n for n in exported.graph.nodes if n.op == "call_function"}
    for name in origins(node):
        if name in calls:
            made_from = calls[name]
            return FloatIsland(part=name, op=op_name(made_from), source=source_line(made_from), reason=reason)
    return None


def island_at(line: str, exported: torch.fx.GraphModule, reason: str) -> FloatIsland | None:
    """The nodes the user's `line` (`model.py:15`) made, as an island, when the failing node cannot be
    found (a pass made it and failed on it at once); None when that line made no node."""
    made = [n for n in exported.graph.nodes if n.op == "call_function" and keep_fp32.selects(n, line)]
    return FloatIsland(part=line, source=source_line(made[0]), reason=reason) if made else None


def _is_float(node: torch.fx.Node) -> bool:
    values = [node.meta.get("val")] + [a.meta.get("val") for a in node.all_input_nodes]
    return any(isinstance(v, torch.Tensor) and v.is_floating_point() for v in values)


def _float_compute(node: torch.fx.Node) -> bool:
    name = op_name(node)
    return bool(name) and classify(name) == "fallback" and _is_float(node)


def _compute_inputs(node: torch.fx.Node) -> Iterable[torch.fx.Node]:
    """The compute nodes whose values reach `node`, through copies and views (data movement)."""
    seen: set[str] = set()
    stack = list(node.all_input_nodes)
    while stack:
        arg = stack.pop()
        if arg.name in seen:
            continue
        seen.add(arg.name)
        name = op_name(arg)
        if name and classify(name) == "data_movement":
            stack.extend(arg.all_input_nodes)
        elif name:
            yield arg


def float_parts(
    program: torch.fx.GraphModule,
    exported: torch.fx.GraphModule,
    kept: tuple[str, ...],
    islands: tuple[FloatIsland, ...],
) -> tuple[FloatPart, ...]:
    """The program's float compute nodes, in connected parts (program order), each with why it is float.
    `exported`: the graph the quantizer saw, whose nodes `kept` (--keep-fp32) and `islands` name."""
    floats = [n for n in program.graph.nodes if _float_compute(n)]
    index = {n.name: i for i, n in enumerate(floats)}
    parent = list(range(len(floats)))  # union-find over the float nodes, each part's root its first node

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for i, node in enumerate(floats):
        for source in _compute_inputs(node):
            if source.name in index:
                a, b = root(i), root(index[source.name])
                parent[max(a, b)] = min(a, b)
    groups: dict[int, list[torch.fx.Node]] = {}
    for i, node in enumerate(floats):
        groups.setdefault(root(i), []).append(node)
    exported_nodes = {n.name: n for n in exported.graph.nodes if n.op == "call_function"}
    parts = []
    for nodes in groups.values():
        why, reason = _why(nodes, exported_nodes, kept, islands)
        first = nodes[0]
        parts.append(
            FloatPart(
                nodes=[n.name for n in nodes],
                ops=list(dict.fromkeys(op_name(n) for n in nodes)),
                module=module_path(first),
                source=source_line(first),
                why=why,
                reason=reason,
            )
        )
    return tuple(parts)


def _why(
    nodes: list[torch.fx.Node],
    exported: dict[str, torch.fx.Node],
    kept: tuple[str, ...],
    islands: tuple[FloatIsland, ...],
) -> tuple[FloatWhy, str]:
    made_from = [exported[name] for node in nodes for name in origins(node) if name in exported]
    for island in islands:
        if any(keep_fp32.selects(origin, island.part) for origin in made_from):
            return "island", f"left in float by cmx-gen: {island.reason}"
    for pattern in kept:
        if any(keep_fp32.selects(origin, pattern) for origin in made_from):
            return "keep_fp32", f"--keep-fp32 {pattern}"
    ops = ", ".join(dict.fromkeys(op_name(n) for n in nodes))
    return "no_int8_kernel", f"the cortex_m backend has no int8 kernel for {ops}"


# cmx-gen's own float ops (recurrent_graph.py, own_ops.py), which only their int8 form can run
OWN_FLOAT_OPS = ("cmx::lstm", "cmx::gru", "cmx::bmm", "cmx::layer_norm", "cmx::masked_softmax")


def leftover(program: Any, exported: torch.fx.GraphModule) -> None:
    """A float op of cmx-gen's that found no int8 form (no quantize/dequantize around it) cannot be
    serialized: it raises NeedsFloat for its user's line, so the next try leaves PyTorch's own op there."""
    for node in program.graph_module.graph.nodes:
        if op_name(node) in OWN_FLOAT_OPS:
            line = source_line(node).split(" ")[0]
            reason = f"{op_name(node)} found no int8 form here (its inputs or output are not int8)"
            island = island_at(line, exported, reason) if line else None
            if island is None:
                raise ExportError(
                    f"{op_name(node)} at node {node.name} has no int8 form", "leave it in float with --keep-fp32"
                )
            raise NeedsFloat(f"{op_name(node)} at {line} has no int8 form", "", island)
