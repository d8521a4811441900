"""Gives each delegate call its working memory as a planned buffer: one `alloc` node appended to
the call's inputs, sized from the plan's header, just before memory planning (to_executorch's
earlier passes re-trace the call against the subgraph's own inputs, so it cannot be added sooner).
ExecuTorch's memory planner then places it with
the program's other tensors, so the fit check and the memory map stay exact and models that
share an arena share it too; the runtime finds it at args[n_inputs]."""

from __future__ import annotations

from typing import Any

import torch

from cmx_gen.lower.delegate.plan import read_header, read_input_offsets
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
        _inputs_into_work(module, node, alloc, read_input_offsets(blob))
    module.recompile()
    return sizes


def _inputs_into_work(module: Any, call: torch.fx.Node, alloc: torch.fx.Node, offsets: list[int]) -> None:
    """Places each input the plan put in its working memory there (ExecuTorch's storage_base: the
    planner keeps the working memory's bytes for the input from the input's first write on). An
    input read again after the call stays apart; the plan is right either way, it only reserved
    the room."""
    from executorch.exir.tensor import TensorSpec

    output = next(n for n in module.graph.nodes if n.op == "output")
    for arg, offset in zip(call.args[1:], offsets):
        spec = arg.meta.get("spec") if isinstance(arg, torch.fx.Node) else None
        if (offset < 0 or not isinstance(spec, TensorSpec) or spec.const or spec.storage_base is not None
                or set(arg.users) != {call} or arg in output.all_input_nodes):
            continue
        spec.storage_base = alloc.meta["spec"]
        spec.storage_base_offset = offset


def planning_pass() -> Any:
    """ExecuTorch's default memory planning, with the work buffers added first."""
    from executorch.exir.passes.memory_planning_pass import MemoryPlanningPass

    class WorkMemoryPlanning(MemoryPlanningPass):  # type: ignore[misc]
        def run(self, graph_module: Any, graph_signature: Any = None) -> Any:
            add(graph_module)
            return super().run(graph_module, graph_signature)

    return WorkMemoryPlanning()
