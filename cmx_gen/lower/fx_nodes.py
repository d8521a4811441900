"""What a node of an exported graph says about itself: its operator, the module and the user's line
it came from. Every lowering step that names a place in the user's model asks here."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import torch
from torch.fx.node import Argument


def fx_args(node: torch.fx.Node) -> tuple[Any, ...]:
    """A node's arguments as values: an exported graph's are nodes, numbers, lists of them, or None,
    which the operator's schema decides and the type system cannot see."""
    return tuple(node.args)


def op_name(node: torch.fx.Node) -> str:
    """`cortex_m::quantized_avg_pool2d` for an operator call, "" for anything else."""
    schema = getattr(node.target, "_schema", None) if node.op == "call_function" else None
    return schema.name if schema is not None else ""


REFERENCE_NAME = "cmx_reference_name"


def name_for_reference(graph_module: torch.fx.GraphModule) -> None:
    """Writes each node's name into its meta: the host reference records values by these names, and
    to_backend and to_executorch retrace the graph, which names the nodes anew (the first expand_copy
    left after delegation is `aten_expand_copy_default`, whichever it was before)."""
    for node in graph_module.graph.nodes:
        node.meta[REFERENCE_NAME] = node.name


def reference_name(node: torch.fx.Node) -> str:
    """The node's name as the host reference knows it (name_for_reference), whatever graph it is in now."""
    return str(node.meta.get(REFERENCE_NAME, node.name))


def module_path(node: torch.fx.Node) -> str:
    """The module a node came from: its nn_module_stack path (`features.3`), else the model class
    for functional calls in forward (`Residual`)."""
    stack = list((node.meta.get("nn_module_stack") or {}).values())
    path, cls = stack[-1] if stack else ("", "")
    if "torch.export" in str(cls):  # the quantize/dequantize torch.export adds around the model
        return "model input/output"
    return str(path) if path else (str(cls).rsplit(".", 1)[-1] or "forward")


_FRAME = re.compile(r'File "([^"]+)", line (\d+), in \w+\n\s*(.*)')


def user_frame(node: torch.fx.Node) -> tuple[str, str, str] | None:
    """(path, line, code) of the user's line that made the node: the first frame of its stack trace."""
    match = _FRAME.search(node.meta.get("stack_trace") or "")
    return (match.group(1), match.group(2), match.group(3).strip()) if match else None


def source_line(node: torch.fx.Node) -> str:
    """`model.py:17 x = F.avg_pool2d(x, 4)`: the user's line that made the node."""
    frame = user_frame(node)
    return f"{Path(frame[0]).name}:{frame[1]} {frame[2]}" if frame else ""


def origins(node: torch.fx.Node) -> list[str]:
    """The names of the nodes `node` was made from, through every pass and export on the way, the
    first graph's last (its `from_node` provenance; [] for a node made without one)."""
    names: list[str] = []
    source = (node.meta.get("from_node") or [None])[-1]
    while source is not None:
        names.append(source.name)
        source = (source.from_node or [None])[-1]
    return names


def constant_tensor(program: Any, node: torch.fx.Node) -> torch.Tensor | None:
    """The value of a parameter, buffer or lifted constant placeholder of `program`; None for anything else."""
    from torch._export.utils import get_buffer, get_lifted_tensor_constant, get_param

    for getter in (get_param, get_buffer, get_lifted_tensor_constant):
        value = getter(program, node)
        if value is not None:
            return value
    return None


PROVENANCE = ("stack_trace", "nn_module_stack")  # what a node made in another's place keeps of it


def call_like(
    graph: torch.fx.Graph,
    target: Any,
    args: tuple[Any, ...],
    like: torch.fx.Node,
    kwargs: dict[str, Argument] | None = None,
    val: Any = None,
) -> torch.fx.Node:
    """A call of `target` at the graph's insertion point, with `like`'s module and user's line, and its
    fake value: `val`, else `target` run on its arguments' fake values in `like`'s fake mode."""
    made = graph.call_function(target, args, kwargs or {})
    if val is None:
        values = [a.meta["val"] if isinstance(a, torch.fx.Node) else a for a in args]
        with like.meta["val"].fake_mode:
            val = target(*values, **(kwargs or {}))
    made.meta = {}
    with_provenance(made, like).meta["val"] = val
    return made


def with_provenance(made: torch.fx.Node, like: torch.fx.Node) -> torch.fx.Node:
    """`made` with `like`'s module and user's line (PROVENANCE), not its `from_node`: a node of its own."""
    made.meta.update({k: v for k, v in like.meta.items() if k in PROVENANCE})
    return made


def attribute(module: torch.nn.Module, target: str) -> Any:
    """What a get_attr node's dotted target names in `module` (`l1.weight`: a submodule's parameter)."""
    found: Any = module
    for part in target.split("."):
        found = getattr(found, part)
    return found
