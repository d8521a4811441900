"""The memory schedule of one delegated subgraph: which tensors live in its working memory, where,
and what that costs against layer-by-layer execution.

The working memory holds every tensor the subgraph makes and reads itself, each layer's kernel
scratch, the subgraph's inputs that die at the delegate call, and its outputs that are the
program's own outputs with nothing run after the call (the partitioner marks both, backend.py): the
program then places them inside the working memory (work_input.py), so the first layers can write
over an input and the last ones write an output over what is dead.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import torch

from cmx_gen.common.goals import DEFAULT_MEMORY_GOAL
from cmx_gen.lower import facts
from cmx_gen.lower.delegate import costs, kernel_choice, overlap, patch_plan, patches
from cmx_gen.lower.delegate.patches import Stage
from cmx_gen.lower.delegate.work_memory import Buffer, WorkPlan, place
from cmx_gen.lower.fx_nodes import module_path

DYING_ARGS = "cmx_dying_args"  # node meta: positions in node.args of inputs from outside that die at the call
STAGES_PLACED = 4  # patched stages placed in full (overlap included) after a layer-by-layer ranking
FINAL_OUTPUT = "cmx_final_output"  # node meta: a program output nothing runs after (it may live in the working memory)


def is_alloc(node: torch.fx.Node) -> bool:
    return node.op == "call_function" and getattr(node.target, "__name__", "") == "alloc"


def tensor_bytes(node: torch.fx.Node) -> int:
    """The bytes of the tensor `node` makes."""
    val = node.meta["val"]
    return int(val.numel()) * int(val.element_size())


def _dies_at_call(node: torch.fx.Node) -> bool:
    """The partitioner marked every read of this subgraph input as its last in the program."""
    return bool(node.users) and all(
        any(user.args[k] is node for k in user.meta.get(DYING_ARGS, ()) if k < len(user.args)) for user in node.users
    )


def _first_largest(values: Any) -> tuple[int, str]:
    """The largest value and where (the layer's module path, else its node), the first on a tie."""
    best, where = 0, ""
    for value, node in values:
        if value > best:
            best, where = value, module_path(node) or node.name
    return best, where


@dataclass(frozen=True)
class SubgraphSchedule:
    """One delegated subgraph's memory schedule as the plan is built from it (its nodes, buffers and
    working memory); `summary` is the report's record of it (facts.Schedule)."""

    compute: tuple[torch.fx.Node, ...]  # the layers, in order
    inputs: tuple[torch.fx.Node, ...]
    outputs: tuple[torch.fx.Node, ...]
    buffers: tuple[Buffer, ...]
    work: WorkPlan
    io_offsets: tuple[int, ...]  # each input's, then output's, offset in the working memory; -1 where apart
    extra_instructions: int | None = 0  # estimated (costs.py), against the fastest kernels; None: not known
    stage: Stage | None = None  # the first layers, run patch by patch (patches.py)

    def args(self) -> dict[torch.fx.Node, int]:
        """Delegate argument index of each input and output (args[len(inputs)] is the working memory)."""
        args = {n: i for i, n in enumerate(self.inputs)}
        for j, node in enumerate(self.outputs):
            args.setdefault(node, len(self.inputs) + 1 + j)
        return args

    def floor(self) -> tuple[int, str]:
        """Layer-by-layer execution's least memory: the largest inputs + output of one layer."""

        def need(node: torch.fx.Node) -> int:
            reads = {
                a
                for a in node.all_input_nodes
                if "val" in a.meta
                and a.op != "get_attr"
                and not is_alloc(a)
                and (a.op != "placeholder" or a in self.inputs)
            }
            return sum(tensor_bytes(a) for a in reads) + tensor_bytes(node)

        return _first_largest((need(node), node) for node in self.compute)

    def peak(self) -> tuple[int, str]:
        """The most working memory in use at one layer (bytes under live buffers), and that layer."""
        return _first_largest((self._in_use(i), node) for i, node in enumerate(self.compute))

    def _in_use(self, i: int) -> int:
        spans = sorted(
            (self.work.offsets[b.key], self.work.offsets[b.key] + b.nbytes)
            for b in self.buffers
            if b.first <= i <= b.last and b.nbytes
        )
        used, end = 0, 0
        for lo, hi in spans:
            used += max(0, hi - max(lo, end))
            end = max(end, hi)
        return used

    def summary(self, delegate: int, goal: str) -> facts.Schedule:
        """What the report says of this schedule, as delegate call `delegate` made for `goal`."""
        floor, floor_at = self.floor()
        peak, peak_at = self.peak()
        return facts.Schedule(
            delegate=delegate,
            goal=goal,
            work_bytes=self.work.nbytes,
            layer_by_layer_bytes=self.work.layer_by_layer,
            floor_bytes=floor,
            floor_at=floor_at,
            peak_bytes=peak,
            peak_at=peak_at,
            written_over_input=len(self.work.shared),
            inputs_in_work=sum(1 for o in self.io_offsets[: len(self.inputs)] if o >= 0),
            outputs_in_work=sum(1 for o in self.io_offsets[len(self.inputs) :] if o >= 0),
            extra_instructions=self.extra_instructions,
            **(
                {
                    "patch_layers": len(self.stage.layers),
                    "patch_until": module_path(self.stage.output) or self.stage.output.name,
                    "patch_grid": f"{self.stage.grid[0]}x{self.stage.grid[1]}",
                    "patch_extra_macs": self.stage.extra_macs(),
                }
                if self.stage
                else {}
            ),
        )


def _place(
    compute: tuple[torch.fx.Node, ...],
    inputs: tuple[torch.fx.Node, ...],
    outputs: tuple[torch.fx.Node, ...],
    isa: str,
    stage: Stage | None = None,
    overlap_too: bool = True,
) -> tuple[tuple[Buffer, ...], WorkPlan, tuple[int, ...]]:
    """The buffers of the subgraph as its kernels (chosen now, kernel_choice.py) need them, placed;
    a patched stage's layers (patches.py) hold one patch each, its image lives through the stage
    and its output from the first patch on."""
    index = {n: i for i, n in enumerate(compute)}
    in_work = {n for n in inputs if _dies_at_call(n) and n not in outputs}
    in_work |= {n for n in outputs if n.meta.get(FINAL_OUTPUT) and n in index and outputs.count(n) == 1}
    apart = (set(inputs) | set(outputs)) - in_work
    staged = set(stage.layers) if stage else set()

    def last_read(n: torch.fx.Node) -> int:
        last = max(index[u] for u in n.users if u in index)
        return max(last, len(staged) - 1) if stage and n is stage.image else last

    buffers = [Buffer(n.name, tensor_bytes(n), -1, last_read(n)) for n in inputs if n in in_work]
    if stage:
        buffers += patch_plan.buffers(stage, index)
    for node in compute:
        if stage and node is stage.output:
            users = [index[u] for u in node.users if u in index]
            buffers.append(Buffer(node.name, tensor_bytes(node), 0, max(users)))
        elif node not in apart and node not in staged:
            users = [index[u] for u in node.users if u in index] + ([len(compute)] if node in outputs else [])
            shares = tuple(x.name for x in overlap.shareable_inputs(node) if x not in apart)
            buffers.append(
                Buffer(
                    node.name,
                    tensor_bytes(node),
                    index[node],
                    max(users, default=index[node]),
                    shares,
                    overlap.lead(node, isa) if shares else 0,
                )
            )
        scratch = node.args[-1] if node.args else None
        if (
            (isinstance(scratch, torch.fx.Node) and is_alloc(scratch))
            or kernel_choice.own_scratch(node)
            or kernel_choice.s16_scratch(node, isa)
            or kernel_choice.depthwise_plane_bytes(node, isa)
        ):
            buffers.append(
                Buffer(f"{node.name}:scratch", kernel_choice.scratch_bytes(node, isa), index[node], index[node])
            )
    work = place(buffers, overlap_too)
    return tuple(buffers), work, tuple(work.offsets[n.name] if n in in_work else -1 for n in (*inputs, *outputs))


def _can_be_small(node: torch.fx.Node, isa: str) -> bool:
    """A layer a Helium core may run on cmx-gen's DSP kernel instead, or a DSP core's depthwise layer
    on cmx_depthwise_3x3_s8's four-channel walk instead of its planar path (kernel_choice.small_kernel)."""
    if isa == "DSP":
        with kernel_choice.kernels_as(node, small=False):
            return kernel_choice.depthwise_plane_bytes(node, isa) > 0
    if isa != "MVE":
        return False
    with kernel_choice.kernels_as(node, small=True):
        return (
            kernel_choice.conv_kind(node, isa) == "conv_row"
            or kernel_choice.depthwise_kind(node, isa) == "depthwise_3x3"
        )


def schedule(
    program: Any,
    isa: str,
    goal: str = DEFAULT_MEMORY_GOAL,
    patch: tuple[int, tuple[int, int]] | None = None,
    staged: bool = False,
) -> SubgraphSchedule:
    """The schedule of a subgraph (an ExportedProgram the partitioner cut) for a memory goal
    (costs.py): every goal writes layers over their inputs where the kernels allow (it costs
    nothing); `min` and `balanced` may also run layers of a Helium core on cmx-gen's DSP kernels,
    which need no scratch and write closer behind their reads, `balanced` only within
    costs.BALANCED_SLACK more instructions; `min` also runs the first layers patch by patch where
    that takes less (patches.py) and keeps cmx_conv_row_s8's weights int8 (flash). The choices are
    left on the nodes (kernel_choice.Choice: small, patched, narrow) for the plan's layers; `fast` also widens cmx_conv_row_s8's mid-sized layers' weights (flash for speed).
    `patch` (layers, grid) forces a patched stage (tests). `staged`: cmx_conv_row_s8 widens the
    int8 weights of the layers that would read int16 ones into its scratch at each call
    (Choice.staged; not with `min`, whose scratch it would grow)."""
    graph = program.graph_module.graph
    user_inputs = list(program.graph_signature.user_inputs)
    inputs = tuple(n for n in graph.nodes if n.op == "placeholder" and n.name in user_inputs)
    output_node = next(n for n in graph.nodes if n.op == "output")
    outputs = tuple(output_node.args[0])
    compute = tuple(n for n in graph.nodes if n.op == "call_function" and not is_alloc(n))
    candidates = [n for n in compute if goal != "fast" and _can_be_small(n, isa)]

    def choose(small: set[torch.fx.Node]) -> None:
        for node in candidates:
            kernel_choice.choose(node, small=node in small)

    # min: the stage first (the small kernels worth having depend on where the peak then is), the
    # kernels for it, then the stage again for those kernels
    choose(set())
    _mark(compute, set())  # no layer patched but the stage chosen below (a graph scheduled before keeps none)
    for node in compute:  # min: the least flash too (cmx_conv_row_s8's int16 weights are a second copy)
        # fast: the most speed for flash too
        kernel_choice.choose(node, narrow=goal == "min", more_wide=goal == "fast", staged=staged)
    stage = _forced_stage(compute, inputs, outputs, *patch) if patch else None
    if goal == "min" and not patch:
        stage = _patched_stage(compute, inputs, outputs, isa)

    def work_bytes(small: set[torch.fx.Node]) -> int:
        choose(small)
        return _place(compute, inputs, outputs, isa, stage)[1].nbytes

    chosen = costs.choose_small(candidates, work_bytes, isa, goal, compute)
    choose(chosen)
    if goal == "min" and not patch:
        stage = _patched_stage(compute, inputs, outputs, isa)
    buffers, work, offsets = _place(compute, inputs, outputs, isa, stage)
    extra = costs.extra_instructions(chosen, isa)
    if stage and extra is not None:  # the halos again, at the stage's rate (its copies not counted)
        again = stage.extra_macs() * costs.per_mac_of(stage.layers, isa)
        extra = extra + round(again) if math.isfinite(again) else None
    return SubgraphSchedule(compute, inputs, outputs, buffers, work, offsets, extra, stage)


def _mark(nodes: Iterable[torch.fx.Node], patched: set[torch.fx.Node]) -> None:
    for node in nodes:
        kernel_choice.choose(node, patched=node in patched)


def _forced_stage(
    compute: tuple[torch.fx.Node, ...],
    inputs: tuple[torch.fx.Node, ...],
    outputs: tuple[torch.fx.Node, ...],
    length: int,
    grid: tuple[int, int],
) -> Stage:
    images = dict(patches.prefixes(compute, inputs, outputs))
    stage = patches.plan_stage(compute, length, images[length], grid) if length in images else None
    if stage is None:
        raise ValueError(f"the first {length} layers cannot run over {grid[0]}x{grid[1]} patches")
    _mark(compute, set(stage.layers))
    return stage


def _patched_stage(
    compute: tuple[torch.fx.Node, ...], inputs: tuple[torch.fx.Node, ...], outputs: tuple[torch.fx.Node, ...], isa: str
) -> Stage | None:
    """The patched stage (split point and grid) that takes the least working memory, fewer MACs
    again on a tie; None where none takes less than running every layer whole. Candidates are
    ranked by layer-by-layer placement, the best few placed in full."""
    _mark(compute, set())
    whole = _place(compute, inputs, outputs, isa)[1].nbytes
    ranked: list[tuple[int, int, int, Stage]] = []
    for length, image in patches.prefixes(compute, inputs, outputs):
        for grid in patches.GRIDS:
            stage = patches.plan_stage(compute, length, image, grid)
            if stage is None:
                continue
            _mark(stage.layers, set(stage.layers))
            rough = _place(compute, inputs, outputs, isa, stage, overlap_too=False)[1].nbytes
            ranked.append((rough, stage.extra_macs(), len(ranked), stage))
            _mark(compute, set())
    best: tuple[int, int, Stage] | None = None
    for _, extra, _, stage in sorted(ranked, key=lambda r: r[:3])[:STAGES_PLACED]:
        _mark(stage.layers, set(stage.layers))
        nbytes = _place(compute, inputs, outputs, isa, stage)[1].nbytes
        _mark(compute, set())
        if nbytes < whole and (best is None or (nbytes, extra) < best[:2]):
            best = (nbytes, extra, stage)
    if best:
        _mark(best[2].layers, set(best[2].layers))
    return best[2] if best else None
