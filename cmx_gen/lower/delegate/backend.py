"""cmx-gen's CMSIS-NN backend as ExecuTorch sees it ahead of time: the partitioner that picks the
int8 subgraphs it runs, and the BackendDetails whose preprocess turns each into a plan. Its
runtime half is kernels/backend/cmx_backend.cpp, registered under the same name."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import torch
from executorch.exir.backend.backend_details import BackendDetails, PreprocessResult
from executorch.exir.backend.compile_spec_schema import CompileSpec
from executorch.exir.backend.partitioner import DelegationSpec, Partitioner, PartitionResult
from executorch.exir.backend.utils import tag_constant_data
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase

from cmx_gen.common.goals import DEFAULT_MEMORY_GOAL as DEFAULT_GOAL
from cmx_gen.lower.delegate import layers
from cmx_gen.lower.delegate.preprocess import BACKEND_ID, is_delegate_call, scheduled_plan
from cmx_gen.lower.delegate.schedule import DYING_ARGS, FINAL_OUTPUT, is_alloc
from cmx_gen.lower.facts import DelegatedLayer, Schedule


class CmxCmsisNNBackend(BackendDetails):
    @staticmethod
    def preprocess(edge_program: Any, compile_specs: list[CompileSpec]) -> PreprocessResult:
        """The subgraph's plan, and the schedule it was built on for the report (ExecuTorch keeps it in
        the lowered module's meta, unserialized: delegate_schedules reads it there)."""
        specs = {spec.key: spec.value.decode() for spec in compile_specs}
        goal = specs.get("memory", DEFAULT_GOAL)
        made, plan = scheduled_plan(
            edge_program, specs["core"], goal, staged="stage_weights" in specs, int4="int4_weights" in specs
        )
        handles = {layer.debug: (layer.debug,) for layer in plan.layers}
        return PreprocessResult(
            processed_bytes=plan.pack(), debug_handle_map=handles, _delegate_info_meta=made.summary(0, goal)
        )


assert CmxCmsisNNBackend.__name__ == BACKEND_ID


class _Supported(OperatorSupportBase):
    def __init__(self, constants: frozenset[str]) -> None:
        super().__init__()
        self.constants = constants  # the program's constant placeholders: no operand of a layer

    def is_node_supported(self, submodules: Any, node: torch.fx.Node) -> bool:
        if node.op != "call_function":
            return False
        if is_alloc(node):  # a CMSIS-NN scratch buffer: goes where its kernel goes
            return bool(node.users) and all(layers.supports(user, self.constants) for user in node.users)
        return layers.supports(node, self.constants)


def _constants(exported_program: Any) -> frozenset[str]:
    signature = exported_program.graph_signature
    return frozenset(
        {
            *signature.inputs_to_parameters,
            *signature.inputs_to_buffers,
            *getattr(signature, "inputs_to_lifted_tensor_constants", {}),
        }
    )


class CmxPartitioner(Partitioner):
    """Tags every maximal int8 subgraph the backend runs exactly; the rest stays on cortex_m and
    portable kernels."""

    def __init__(
        self,
        core: str,
        memory: str = DEFAULT_GOAL,
        caller_inputs: bool = False,
        stage_weights: bool = False,
        int4_weights: bool = False,
    ) -> None:
        """`caller_inputs`: the program's inputs stay in the caller's buffers (input_memory =
        "caller"), so no plan may put them in its working memory or write over them. `stage_weights`:
        cmx_conv_row_s8 widens int8 weights into its scratch at each call (LowerOptions). `int4_weights`:
        some layers' weights are int4 (weight_bits.py), stored two a byte (preprocess.mark_int4)."""
        super().__init__()
        self.caller_inputs = caller_inputs
        goal = [] if memory == DEFAULT_GOAL else [CompileSpec("memory", memory.encode())]  # the method loads each spec
        staged = [CompileSpec("stage_weights", b"1")] if stage_weights else []
        staged += [CompileSpec("int4_weights", b"1")] if int4_weights else []
        self.delegation_spec = DelegationSpec(BACKEND_ID, [CompileSpec("core", core.encode()), *goal, *staged])

    def partition(self, exported_program: Any) -> PartitionResult:
        partitioner = CapabilityBasedPartitioner(
            exported_program.graph_module, _Supported(_constants(exported_program)), allows_single_node_partition=True
        )
        tags: dict[str, DelegationSpec] = {}
        kept = set(exported_program.graph_signature.user_inputs) if self.caller_inputs else set()
        for partition in partitioner.propose_partitions():
            if not any(not is_alloc(node) for node in partition.nodes):
                continue
            tag = f"cmx_{partition.id}"
            for node in partition.nodes:
                node.meta["delegation_tag"] = tag
            _mark_dying_inputs(set(partition.nodes), kept)
            _mark_final_outputs(set(partition.nodes), exported_program.graph_module.graph)
            tags[tag] = self.delegation_spec
        tag_constant_data(exported_program)
        return PartitionResult(tagged_exported_program=exported_program, partition_tags=tags)


def _mark_dying_inputs(nodes: set[torch.fx.Node], kept: set[str]) -> None:
    """Tells preprocess which of a subgraph's inputs no one reads after the delegate call (so its
    schedule may put them in the working memory and write over them): on each reader, the
    positions of such arguments (schedule.DYING_ARGS). `kept`: program inputs that never die
    (the caller's buffers)."""
    for node in nodes:
        dying = tuple(
            k
            for k, arg in enumerate(node.args)
            if isinstance(arg, torch.fx.Node)
            and arg not in nodes
            and arg.op != "get_attr"
            and arg.name not in kept
            and all(user in nodes for user in arg.users)
        )
        if dying:
            node.meta[DYING_ARGS] = dying


def _mark_final_outputs(nodes: set[torch.fx.Node], graph: torch.fx.Graph) -> None:
    """Marks the subgraph's results that are program outputs when no operator outside the subgraph
    runs after it: they may live in its working memory (schedule.FINAL_OUTPUT)."""
    order = {node: i for i, node in enumerate(graph.nodes)}
    last = max(order[n] for n in nodes)
    if any(n.op == "call_function" and n not in nodes and order[n] > last for n in graph.nodes):
        return
    for node in nodes:
        if node.users and all(user.op == "output" for user in node.users):
            node.meta[FINAL_OUTPUT] = True


@dataclass(frozen=True)
class _Records:
    """A plan's records by the debug id they report as. A layer's kind is its first record that is no
    copy_region (a patched stage has many records per layer and copy_region gathers between them),
    or copy_region (a concat's copies). Nodes of one source op may share a debug id (a flatten's
    layout change and its reshape): they take its records in order, one each."""

    kinds: dict[int, list[str]]  # per id, the kinds of its records in plan order (no copy_region)
    computed: Counter[int]  # the output elements an id's records compute, halos included
    nodes: Counter[int]  # the compute nodes reporting as each id

    def kind(self, debug: int, nth: int) -> str:
        kinds = self.kinds.get(debug, [])
        if not kinds:
            return "copy_region"
        return kinds[nth] if self.nodes[debug] > 1 and len(kinds) == self.nodes[debug] else kinds[0]

    def calls(self, debug: int) -> int:
        """Records a node of `debug` runs as: its patches, or 1."""
        return max(len(self.kinds.get(debug, [])) // self.nodes[debug], 1)


def _records(blob: bytes, debugs: list[int]) -> _Records:
    from cmx_gen.lower.delegate.plan import read_layers

    kinds: dict[int, list[str]] = {}
    computed: Counter[int] = Counter()
    for kind, fields in read_layers(blob):
        if kind != "copy_region":
            kinds.setdefault(fields["debug"], []).append(kind)
            computed[fields["debug"]] += _record_outputs(fields)
    return _Records(kinds, computed, Counter(debugs))


def _debug_of(node: torch.fx.Node, index: int) -> int:
    handle = node.meta.get("debug_handle")
    return int(handle) if isinstance(handle, int) else index


def delegated_layers(program: Any) -> list[DelegatedLayer]:
    """Each layer the backend runs, in plan order per delegate: the delegate's position, the debug
    id the layer reports as (its profile and trace key), the node, op, plan kind, module and line."""
    module = program.graph_module
    out: list[DelegatedLayer] = []
    for position, call in enumerate(n for n in module.graph.nodes if is_delegate_call(n)):
        lowered = getattr(module, call.args[0].target)
        compute = [n for n in lowered.original_module.graph.nodes if n.op == "call_function" and not is_alloc(n)]
        debugs = [_debug_of(node, index) for index, node in enumerate(compute)]
        records, nth = _records(lowered.processed_bytes, debugs), Counter[int]()
        for node, debug in zip(compute, debugs):
            out.append(_layer(node, position, debug, records, nth[debug]))
            nth[debug] += 1
    return out


def _layer(node: torch.fx.Node, delegate: int, debug: int, records: _Records, nth: int) -> DelegatedLayer:
    from cmx_gen.lower.fx_nodes import module_path, op_name, reference_name, source_line

    val = node.meta["val"]
    calls, elements = records.calls(debug), int(val.numel())
    computed = records.computed[debug] // records.nodes[debug]
    patched = calls > 1
    return DelegatedLayer(
        delegate=delegate,
        debug=debug,
        op=op_name(node),
        kind=records.kind(debug, nth),
        patched=patched,
        calls=calls,
        node=reference_name(node),
        module=module_path(node),
        source=source_line(node),
        shape=[int(s) for s in val.shape],
        dim_order=[int(d) for d in val.dim_order()],
        dtype=str(val.dtype).removeprefix("torch."),
        nbytes=elements * val.element_size(),
        work=_patches_work(work(node), computed, elements) if patched else work(node),
        outputs=max(computed, elements) if patched else elements,
    )


def _record_outputs(fields: dict[str, Any]) -> int:
    """The output elements one plan record computes (a window layer's output box, an add's count), 0
    where its fields do not say."""
    if "output_h" in fields:
        return int(fields["output_n"]) * int(fields["output_h"]) * int(fields["output_w"]) * int(fields["output_c"])
    return int(fields.get("count", 0))


def _patches_work(whole: int, computed: int, outputs: int) -> int:
    """A patched layer's work as its patches do it: the whole layer's, scaled by the output elements
    its records compute (each patch's box, the halos computed again included) over the layer's."""
    return whole * computed // outputs if computed > outputs else whole


def work(node: torch.fx.Node) -> int:
    """What a layer's cycles scale with: the MACs of a convolution, depthwise or linear layer, else
    the elements of its largest input (a pool reads them all, an add or a table each once)."""
    from cmx_gen.lower.delegate.costs import macs
    from cmx_gen.lower.fx_nodes import op_name

    found = macs(node)
    if found:
        return found
    val = node.meta["val"]
    if op_name(node) in ("cortex_m::quantized_linear", "cmx::quantized_linear_s16"):
        return int(val.numel()) * int(node.all_input_nodes[0].meta["val"].shape[-1])  # outputs x in_features
    if op_name(node) == "cmx::quantized_conv2d_s16":  # weight OIHW: each output takes in/group x kh x kw
        weight = node.args[1].meta["val"]  # type: ignore[union-attr]
        return int(val.numel()) * int(weight.shape[1]) * int(weight.shape[2]) * int(weight.shape[3])
    inputs = [n.meta.get("val") for n in node.all_input_nodes]
    return max((int(v.numel()) for v in inputs if isinstance(v, torch.Tensor)), default=int(val.numel()))


def delegate_schedules(program: Any) -> list[Schedule]:
    """Each delegate call's memory schedule (schedule.Schedule.summary), in execution order: the one
    its plan was built on (CmxCmsisNNBackend.preprocess), not scheduled again."""
    module = program.graph_module
    out = []
    for position, call in enumerate(n for n in module.graph.nodes if is_delegate_call(n)):
        built: Schedule = getattr(module, call.args[0].target).meta["_delegate_info_meta"]
        out.append(built.model_copy(update={"delegate": position}))
    return out
