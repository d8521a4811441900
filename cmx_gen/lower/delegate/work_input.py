"""Gives each delegate call its working memory as a planned buffer: one `alloc` node appended to
the call's inputs, sized from the plan's header, just before memory planning (to_executorch's
earlier passes re-trace the call against the subgraph's own inputs, so it cannot be added sooner).
ExecuTorch's memory planner then places it with
the program's other tensors, so the fit check and the memory map stay exact and models that
share an arena share it too; the runtime finds it at args[n_inputs]."""

from __future__ import annotations

from typing import Any

import torch

from cmx_gen.lower.delegate.plan import read_header, read_io_offsets
from cmx_gen.lower.delegate.preprocess import is_delegate_call
from cmx_gen.lower.fx_nodes import fx_args


def add(module: Any, graph_inputs: bool = True) -> dict[str, int]:
    """Appends the work buffers in place (to_executorch's graph, before planning); returns each
    lowered module's work bytes, by its attribute name. `graph_inputs`: the program's inputs are
    planned (not the caller's buffers), so one dead before the call may lie in its working memory."""
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
        placed = _io_into_work(module, node, alloc, *read_io_offsets(blob))
        if graph_inputs:
            _graph_inputs_into_work(node, alloc, placed, nbytes)
    module.recompile()
    return sizes


def _io_into_work(
    module: Any, call: torch.fx.Node, alloc: torch.fx.Node, inputs: list[int], outputs: list[int]
) -> list[torch.fx.Node]:
    """Places each input and output the plan put in its working memory there (ExecuTorch's
    storage_base: the planner keeps the working memory's bytes from the input's first write to the
    output's last read). An input read again after the call, or an output read by more than the
    program's output, stays apart: the plan is right either way, it only reserved the room."""
    from executorch.exir.tensor import TensorSpec

    output = next(n for n in module.graph.nodes if n.op == "output")
    placed = []
    results = {int(fx_args(n)[1]): n for n in call.users if n.op == "call_function" and len(n.args) > 1}
    pairs = [
        (arg, offset, set(arg.users) == {call} and arg not in output.all_input_nodes)
        for arg, offset in zip(call.args[1:], inputs)
        if isinstance(arg, torch.fx.Node)
    ]
    pairs += [
        (results[i], offset, set(results[i].users) == {output}) for i, offset in enumerate(outputs) if i in results
    ]
    for node, offset, dies in pairs:
        spec = node.meta.get("spec")
        if offset < 0 or not dies or not isinstance(spec, TensorSpec) or spec.const or spec.storage_base is not None:
            continue
        spec.storage_base = alloc.meta["spec"]
        spec.storage_base_offset = offset
        placed.append(node)
    return placed


def _graph_inputs_into_work(
    call: torch.fx.Node, alloc: torch.fx.Node, placed: list[torch.fx.Node], nbytes: int
) -> None:
    """A program input read only by the op that makes a call input placed in the working memory (a
    float image and its quantize) goes into the working memory too, in a gap beside the call's
    inputs there: until the call starts nothing else in that memory is live, and the input is dead
    by then. Left apart, the float image of a MobileNetV2-224 added 602,112 B to the peak."""
    from executorch.exir.tensor import TensorSpec

    output = next(n for n in call.graph.nodes if n.op == "output")
    taken = sorted(
        (n.meta["spec"].storage_base_offset, n.meta["spec"].storage_base_offset + n.meta["spec"].allocated_memory)
        for n in placed
        if n in call.args
    )
    for made in (n for n in placed if n in call.args and n.op == "call_function"):
        for source in made.all_input_nodes:
            spec = source.meta.get("spec")
            if (
                source.op != "placeholder"
                or set(source.users) != {made}
                or source in output.all_input_nodes
                or not isinstance(spec, TensorSpec)
                or spec.const
                or spec.storage_base is not None
            ):
                continue
            at = _gap(taken, spec.allocated_memory, spec.alignment, nbytes)
            if at is None:
                continue
            spec.storage_base = alloc.meta["spec"]
            spec.storage_base_offset = at
            taken = sorted([*taken, (at, at + spec.allocated_memory)])


def _gap(taken: list[tuple[int, int]], size: int, alignment: int, limit: int) -> int | None:
    """The first offset (a multiple of `alignment`) where `size` bytes miss every taken span and end
    by `limit`; None if there is none."""
    at = 0
    for start, end in [*taken, (limit, limit)]:
        if at + size <= start:
            return at
        at = max(at, -(-end // alignment) * alignment)
    return None


def planning_pass(alloc_graph_input: bool = True) -> Any:
    """ExecuTorch's default memory planning, with the work buffers added first; `alloc_graph_input`
    False leaves the program's inputs out of the plan (the caller's buffers)."""
    from executorch.exir.passes.memory_planning_pass import MemoryPlanningPass

    class WorkMemoryPlanning(MemoryPlanningPass):
        def run(self, graph_module: Any, graph_signature: Any = None) -> Any:
            add(graph_module, alloc_graph_input)
            return super().run(graph_module, graph_signature)

    return WorkMemoryPlanning(alloc_graph_input=alloc_graph_input)
