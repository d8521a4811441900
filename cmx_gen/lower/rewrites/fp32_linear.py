"""Float `linear` that the cortex_m passes leave behind (a part kept in float with --keep-fp32, or
one the quantizer skipped) has no portable kernel in ExecuTorch 1.5 (there is no op_linear.cpp),
and the app would fail to render. The edge config must preserve `linear` so that quantized ones
become `cortex_m::quantized_linear`; the float ones are rewritten here to ops portable has:
permute_copy + addmm (mm + add without bias), with view_copy around them for N-D inputs."""

from __future__ import annotations

from typing import Any

import torch

from cmx_gen.lower.fx_nodes import call_like


def decompose(program: Any) -> int:
    """Rewrite every float edge `aten.linear` in the ExportedProgram in place; returns how many."""
    from executorch.exir.dialects._ops import ops as exir_ops

    edge = exir_ops.edge.aten
    graph = program.graph_module.graph
    count = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target != edge.linear.default:
            continue
        x, weight = node.args[0], node.args[1]
        bias = node.args[2] if len(node.args) > 2 else None
        x_val = x.meta["val"]
        if not x_val.is_floating_point():
            continue

        def add(target: Any, *args: Any, node: torch.fx.Node = node) -> torch.fx.Node:
            return call_like(graph, target, args, node)

        with graph.inserting_before(node):
            w_t = add(edge.permute_copy.default, weight, [1, 0])
            rows = x
            if x_val.dim() != 2:
                rows = add(edge.view_copy.default, x, [-1, x_val.shape[-1]])
            out = add(edge.addmm.default, bias, rows, w_t) if bias is not None else add(edge.mm.default, rows, w_t)
            if x_val.dim() != 2:
                out = add(edge.view_copy.default, out, list(node.meta["val"].shape))
        node.replace_all_uses_with(out)
        graph.erase_node(node)
        count += 1
    if count:
        graph.lint()
        program.graph_module.recompile()
    return count
