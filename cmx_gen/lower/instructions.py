"""Which graph node each instruction of the program runs.

The runtime identifies each operator call only by its instruction index (the EventTracer's debug
handle). to_executorch writes that index into each node's `debug_handle`, so the executorch graph
maps an index back to its node, and the node to the PyTorch module path and the user's line. The
on-target profile names its rows with this; program/instructions.py pairs them with the plan.
"""

from __future__ import annotations

import torch

from cmx_gen.lower.fx_nodes import module_path, op_name, reference_name, source_line


def node_names(graph_module: torch.fx.GraphModule) -> dict[int, dict[str, str]]:
    """{instruction index: {node, module, source, op}} from the graph to_executorch emitted.

    Nodes that became no instruction (views folded into the memory plan) keep their original
    debug handle, which can collide with an index: the op name must match the instruction's too.
    """
    named: dict[int, dict[str, str]] = {}
    for node in graph_module.graph.nodes:
        handle = node.meta.get("debug_handle")
        name = op_name(node)
        if isinstance(handle, int) and name:
            named.setdefault(
                handle,
                {"node": reference_name(node), "module": module_path(node), "source": source_line(node), "op": name},
            )
    return named
