"""The program's instructions, named for people and paired with their host values.

The runtime identifies each operator call only by its instruction index (the EventTracer's debug
handle). to_executorch writes that index into each node's `debug_handle`, so the executorch graph
maps an index back to its node, and the node to the PyTorch module path and the user's line. The
on-target profile names its rows with this; the on-target trace compares each instruction's
output bytes with the host's value of the same node (the kernel-exact interpreter's, reference.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from cmx_gen.lower.fx_nodes import module_path, op_name, source_line

TRACE_PREFIX = "trace_"  # reference.npz key of instruction i's expected output bytes: trace_<i>


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
            named.setdefault(handle, {"node": node.name, "module": module_path(node), "source": source_line(node), "op": name})
    return named


def describe(rows: list[dict[str, Any]], named: dict[int, dict[str, str]]) -> list[dict[str, Any]]:
    """report.json `instructions`: the program's rows (program.py) with node, module and source."""
    described = []
    for row in rows:
        names = named.get(row["index"], {})
        if names and names["op"] != row["op"].split(".")[0]:
            names = {}  # a folded node's stale handle, not this instruction's
        described.append({
            "index": row["index"],
            "op": row["op"],
            "node": names.get("node", ""),
            "module": names.get("module", ""),
            "source": names.get("source", ""),
            "output": row["output"],
        })
    return described


def memory_bytes(value: torch.Tensor, output: dict[str, Any]) -> np.ndarray | None:
    """The bytes the target holds for `value` in the output's dim order, or None if the host value
    is not that tensor (shape or dtype differ)."""
    if not isinstance(value, torch.Tensor) or list(value.shape) != output["shape"]:
        return None
    array = value.detach().permute(*output["dim_order"]).contiguous().cpu().numpy() if value.dim() else value.numpy()
    if array.dtype.name != output["dtype"] or array.nbytes != output["nbytes"]:
        return None
    return np.frombuffer(array.tobytes(), dtype=np.uint8).copy()


def trace_arrays(instructions: list[dict[str, Any]], values: dict[str, Any]) -> dict[str, np.ndarray]:
    """reference.npz `trace_<i>`: instruction i's expected output bytes for the sample input."""
    arrays: dict[str, np.ndarray] = {}
    for row in instructions:
        if row["output"] is None or row["node"] not in values:
            continue
        data = memory_bytes(values[row["node"]], row["output"])
        if data is not None:
            arrays[f"{TRACE_PREFIX}{row['index']}"] = data
    return arrays
