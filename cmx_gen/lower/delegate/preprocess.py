"""ExecuTorch's `preprocess` for cmx-gen's CMSIS-NN backend: one partitioned subgraph in, one plan
(plan.py) out. Everything the cortex_m kernel wrappers compute and check on every call is computed
here once; the runtime (kernels/backend/) only loops over the layers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from cmx_gen.common.goals import DEFAULT_MEMORY_GOAL as DEFAULT_GOAL
from cmx_gen.common.targets import cores
from cmx_gen.lower.delegate import copy_layers, patch_plan
from cmx_gen.lower.delegate import layers as layer_builders
from cmx_gen.lower.delegate.emit import Emit
from cmx_gen.lower.delegate.kernel_choice import WEIGHTED_OPS, choose
from cmx_gen.lower.delegate.plan import NONE, Layer, Plan
from cmx_gen.lower.delegate.schedule import SubgraphSchedule, schedule, tensor_bytes
from cmx_gen.lower.fx_nodes import constant_tensor, fx_args, op_name
from cmx_gen.lower.weight_bits import fits_int4

BACKEND_ID = "CmxCmsisNNBackend"  # the class name: ExecuTorch finds a backend's preprocess by it


def is_delegate_call(node: torch.fx.Node) -> bool:
    return node.op == "call_function" and getattr(node.target, "__name__", "") == "executorch_call_delegate"


def memory_bytes(tensor: torch.Tensor) -> bytes:
    """A tensor's bytes in the order its dim order lays them out (as ExecuTorch serializes it)."""
    order = list(tensor.dim_order()) if tensor.dim() else []
    return tensor.detach().permute(order).contiguous().numpy().tobytes() if order else tensor.numpy().tobytes()


def _debug(node: torch.fx.Node, compute: Any) -> int:
    """The debug id a node's records report as (as delegated_layers reads it)."""
    handle = node.meta.get("debug_handle")
    return int(handle) if isinstance(handle, int) else list(compute).index(node)


class _Data:
    """The plan's data: each blob 16-byte aligned, each graph constant laid out once however many
    layers read it."""

    def __init__(self, program: Any) -> None:
        self.program = program
        self.data = bytearray()
        self.constants: dict[torch.fx.Node, int] = {}

    def constant_bytes(self, node: torch.fx.Node) -> bytes:
        tensor = constant_tensor(self.program, node)
        if tensor is None:
            raise ValueError(f"{node.name} is not a constant of the subgraph")
        return memory_bytes(tensor)

    def add(self, blob: bytes) -> int:
        self.data.extend(b"\0" * (-len(self.data) % 16))
        offset = len(self.data)
        self.data.extend(blob)
        return offset

    def constant(self, node: Any) -> int:
        if node is None:
            return NONE
        if node not in self.constants:
            self.constants[node] = self.add(self.constant_bytes(node))
        return self.constants[node]


def build_plan(
    program: Any, core: str, goal: str = DEFAULT_GOAL, patch: tuple[int, tuple[int, int]] | None = None
) -> Plan:
    """The plan of one subgraph (an ExportedProgram whose operators all pass layers.supports) for a
    memory goal (costs.py); `patch` forces a patched stage (schedule.schedule)."""
    return scheduled_plan(program, core, goal, patch)[1]


def scheduled_plan(
    program: Any,
    core: str,
    goal: str = DEFAULT_GOAL,
    patch: tuple[int, tuple[int, int]] | None = None,
    staged: bool = False,
    int4: bool = False,
) -> tuple[SubgraphSchedule, Plan]:
    """build_plan's plan and the schedule it was built on (the report says what was built); `staged`
    as schedule's; `int4`: the layers whose weights lie in [-8, 7] store them two a byte (mark_int4)."""
    isa = str(cores()[core]["isa"])
    if int4:
        mark_int4(program)
    plan_of = schedule(program, isa, goal, patch, staged)
    return plan_of, _plan_from(program, plan_of, core, isa)


def mark_int4(program: Any) -> None:
    """Mark the convolution, depthwise and linear layers whose weights lie in [-8, 7] (the int4 layers of
    `weights = "int4"`; an int8 layer's never do): kernel_choice gives them the s4 kinds where one
    applies, layers.py packs their weights."""
    for node in program.graph_module.graph.nodes:
        if node.op == "call_function" and op_name(node) in WEIGHTED_OPS:
            weight = constant_tensor(program, fx_args(node)[1])
            if weight is not None and weight.dtype == torch.int8 and fits_int4(weight.numpy()):
                choose(node, int4=True)


def _plan_from(program: Any, plan_of: SubgraphSchedule, core: str, isa: str) -> Plan:
    """The plan that runs a subgraph as `plan_of` schedules it."""
    args, work = plan_of.args(), plan_of.work
    data = _Data(program)

    def operand(node: torch.fx.Node) -> int:
        return -1 - args[node] if node in args else work.offsets[node.name]

    emit = Emit(operand, data.constant, data.constant_bytes, data.add, isa)
    return Plan(
        core=core,
        layers=_layers(plan_of, emit, operand),
        data=bytes(data.data),
        n_inputs=len(plan_of.inputs),
        n_outputs=len(plan_of.outputs),
        work_bytes=work.nbytes,
        io_offsets=plan_of.io_offsets,
        io_bytes=tuple(tensor_bytes(node) for node in (*plan_of.inputs, *plan_of.outputs)),
    )


def _layers(plan_of: SubgraphSchedule, emit: Emit, operand: Callable[[torch.fx.Node], int]) -> tuple[Layer, ...]:
    """The records of the scheduled nodes in order: a patched stage's records where its first layer
    was, several records for a copy op that needs them, one record over whole tensors otherwise."""
    work = plan_of.work

    def whole(node: torch.fx.Node) -> Layer:
        """The node's record over its whole tensors (a patched stage's records start from it)."""
        scratch = work.offsets.get(f"{node.name}:scratch", NONE)
        layer = layer_builders.BUILDERS[op_name(node)](node, emit, scratch)
        return Layer(layer.op, layer.fields, _debug(node, plan_of.compute), node.name)

    built: list[Layer] = []
    stage = plan_of.stage
    for node in plan_of.compute:
        if stage and node in stage.layers:
            if node is stage.layers[0]:
                built.extend(patch_plan.records(stage, whole, work.offsets, operand))
            continue
        several = copy_layers.several(node)
        if several:
            built.extend(Layer(r.op, r.fields, _debug(node, plan_of.compute), node.name) for r in several(node, emit))
            continue
        built.append(whole(node))
    return tuple(built)
