"""Gives each delegate call its working memory as a planned buffer: one `alloc` node appended to
the call's inputs, sized from the plan's header, just before memory planning (to_executorch's
earlier passes re-trace the call against the subgraph's own inputs, so it cannot be added sooner).
ExecuTorch's memory planner then places it with
the program's other tensors, so the fit check and the memory map stay exact and models that
share an arena share it too; the runtime finds it at args[n_inputs]."""

from __future__ import annotations

from typing import Any

import torch

from cmx_gen.lower.delegate.plan import read_header
from cmx_gen.lower.delegate.preprocess import is_delegate_call


def add(module: Any) -> dict[str, int]:
    """Appends the work buffers in place (to_executorch's graph, before planning); returns each
    lowered module's work bytes, by its attribute name."""
    from executorch.exir.passes import make_alloc_node
    from executorch.exir.tensor import TensorSpec
    from torch._subclasses.fake_tensor import FakeTensorMode

    sizes: dict[str, int] = {}
    for node in list(module.graph.nodes):
        if not is_delegate_call(node):
            continue
        lowered = node.args[0]
        blob = getattr(module, lowered.target).processed_bytes
        nbytes = int(read_header(blob)["work_bytes"])
        with FakeTensorMode() as mode, module.graph.inserting_before(node):
            val = mode.from_tensor(torch.empty(nbytes, dtype=torch.uint8))
            alloc = make_alloc_node(module, val, None)
        alloc.meta["spec"] = TensorSpec.from_tensor(val)  # set by SpecPropPass for nodes made before it
        node.args = (*node.args, alloc)
        sizes[lowered.target] = nbytes
    module.recompile()
    return sizes


def planning_pass() -> Any:
    """ExecuTorch's default memory planning, with the work buffers added first."""
    from executorch.exir.passes.memory_planning_pass import MemoryPlanningPass

    class WorkMemoryPlanning(MemoryPlanningPass):  # type: ignore[misc]
        def run(self, graph_module: Any, graph_signature: Any = None) -> Any:
            add(graph_module)
            return super().run(graph_module, graph_signature)

    return WorkMemoryPlanning()
