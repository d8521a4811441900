"""Refuse, before any build, a lowered program that the kernels on the target would stop with
`execute:0x12` or compute wrongly: the rules (data/target_limits.yaml) are those kernels' argument
checks and known gaps, evaluated on the lowered graph's shapes, memory formats and arguments."""

from __future__ import annotations

import fnmatch
import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

import torch
import yaml

from cmx_gen.common.errors import ExportError
from cmx_gen.common.paths import DATA_DIR
from cmx_gen.lower.delegate import layers
from cmx_gen.lower.float_islands import NeedsFloat, island_of
from cmx_gen.lower.fx_nodes import fx_args, op_name, source_line


@dataclass(frozen=True)
class Rule:
    """One rule of data/target_limits.yaml: the ops it covers, the check it runs and what the
    target does when the check fails (stop: the kernel refuses; wrong: it computes something else)."""

    ops: tuple[str, ...]
    check: str
    effect: Literal["stop", "wrong"]
    source: str
    why: str
    fix: str
    backend_runs: bool = False


@functools.lru_cache(maxsize=1)
def rules() -> tuple[Rule, ...]:
    found = yaml.safe_load((DATA_DIR / "target_limits.yaml").read_text())["rules"]
    return tuple(Rule(**{**rule, "ops": tuple(rule["ops"])}) for rule in found)


def _tensors(node: torch.fx.Node) -> list[torch.Tensor]:
    values = [a.meta.get("val") for a in node.all_input_nodes] + [node.meta.get("val")]
    return [v for v in values if isinstance(v, torch.Tensor)]


def _dim_order(tensor: torch.Tensor) -> tuple[int, ...]:
    """The dim order ExecuTorch serializes for these strides (its own derivation, not torch's:
    they differ where size-1 dims make the strides ambiguous)."""
    from executorch.exir.tensor import dim_order_from_stride

    return tuple(int(d) for d in dim_order_from_stride(tuple(tensor.stride())))


def default_or_channels_last(node: torch.fx.Node) -> str | None:
    for tensor in _tensors(node):
        order = _dim_order(tensor) if tensor.dim() == 4 else None
        if order is not None and order not in ((0, 1, 2, 3), (0, 2, 3, 1)):
            return f"a tensor {list(tensor.shape)} has dim order {list(order)}"
    return None


def same_dim_order(node: torch.fx.Node) -> str | None:
    orders = {tuple(_dim_order(t)) for t in _tensors(node)}
    return f"its tensors have dim orders {sorted(list(o) for o in orders)}" if len(orders) > 1 else None


def one_memory_format(node: torch.fx.Node) -> str | None:
    """tensors_have_same_dim_order: every tensor contiguous, or every one channels-last (4-D)."""
    orders = [_dim_order(t) for t in _tensors(node)]
    if all(o == tuple(range(len(o))) for o in orders) or all(o == (0, 2, 3, 1) for o in orders):
        return None
    return f"its tensors have dim orders {[list(o) for o in orders]}, neither all contiguous nor all channels-last"


def slices_whole_rows(node: torch.fx.Node) -> str | None:
    """compute_slice copies `trailing` bytes per leading index of the logical shape: right only when
    the dims before the sliced one come first in memory, in order (any layout, for dim 0)."""
    value = fx_args(node)[0].meta.get("val") if fx_args(node) and isinstance(fx_args(node)[0], torch.fx.Node) else None
    if not isinstance(value, torch.Tensor) or not value.dim():
        return None
    dim = int(fx_args(node)[1]) % value.dim() if len(fx_args(node)) > 1 else 0
    order = _dim_order(value)
    if order[: order.index(dim)] != tuple(range(dim)):
        return f"it slices dim {dim} of a tensor {list(value.shape)} in dim order {list(order)}"
    return None


def concatenates_whole_rows(node: torch.fx.Node) -> str | None:
    """The portable cat copies `size(dim) x trailing` elements per leading index of the logical
    shape: right only when the dims before `dim` come first in memory, in order (size-1 dims place
    no byte and may lie anywhere)."""
    args = fx_args(node)
    value = node.meta.get("val")
    if not isinstance(value, torch.Tensor) or not value.dim():
        return None
    dim = int(args[1]) % value.dim() if len(args) > 1 else 0
    tensors = [a.meta.get("val") for a in args[0] if isinstance(a, torch.fx.Node)] + [value]
    for tensor in (t for t in tensors if isinstance(t, torch.Tensor)):
        order = [d for d in _dim_order(tensor) if int(tensor.shape[d]) != 1 or d == dim]
        before = order[: order.index(dim)]
        if before != [d for d in range(dim) if int(tensor.shape[d]) != 1]:
            return f"it concatenates dim {dim} of a tensor {list(tensor.shape)} in dim order {list(_dim_order(tensor))}"
    return None


def views_in_logical_order(node: torch.fx.Node) -> str | None:
    """The portable view_copy copies the input's bytes as they lie: a reshape of a tensor whose memory
    is not in its logical order (a channels-last image flattened) takes them in the wrong order."""
    source = fx_args(node)[0] if fx_args(node) else None
    value = source.meta.get("val") if isinstance(source, torch.fx.Node) else None
    if not isinstance(value, torch.Tensor):
        return None
    order = [d for d in _dim_order(value) if int(value.shape[d]) != 1]
    if order != sorted(order):
        return f"it reshapes a tensor {list(value.shape)} in dim order {list(_dim_order(value))}"
    return None


def _operands(node: torch.fx.Node) -> list[torch.Tensor]:
    """The first two tensor arguments of an elementwise op."""
    values = [a.meta.get("val") for a in fx_args(node) if isinstance(a, torch.fx.Node)]
    return [t for t in values if isinstance(t, torch.Tensor)][:2]


def same_shape(node: torch.fx.Node) -> str | None:
    operands = _operands(node)
    if len(operands) < 2 or operands[0].shape == operands[1].shape:
        return None
    return f"operands {list(operands[0].shape)} and {list(operands[1].shape)}"


def same_shape_or_channel_broadcast(node: torch.fx.Node) -> str | None:
    problem = same_shape(node)
    if problem is None:
        return None
    big, small = sorted(_operands(node), key=lambda t: t.numel(), reverse=True)
    channel = (
        big.dim() == 4
        and small.dim() == 4
        and small.shape[1] == big.shape[1]
        and small.numel() == big.shape[1]
        and _dim_order(big) == (0, 2, 3, 1)
    )
    return None if channel else problem


def rank_3_or_4(node: torch.fx.Node) -> str | None:
    value = fx_args(node)[0].meta.get("val") if fx_args(node) and isinstance(fx_args(node)[0], torch.fx.Node) else None
    if isinstance(value, torch.Tensor) and value.dim() not in (3, 4):
        return f"its input {list(value.shape)} is {value.dim()}-D"
    return None


def no_padding_with_stride(node: torch.fx.Node) -> str | None:
    stride, padding = (fx_args(node)[3], fx_args(node)[4]) if len(fx_args(node)) > 4 else ([1], [0])
    if any(int(s) > 1 for s in stride) and any(int(p) for p in padding):
        return f"stride {list(stride)} with padding {list(padding)}"
    return None


EFFECTS = {"stop": "stop (execute error 0x12)", "wrong": "compute wrong results"}


CHECKS: dict[str, Callable[[torch.fx.Node], str | None]] = {
    "default_or_channels_last": default_or_channels_last,
    "same_shape_or_channel_broadcast": same_shape_or_channel_broadcast,
    "same_shape": same_shape,
    "rank_3_or_4": rank_3_or_4,
    "no_padding_with_stride": no_padding_with_stride,
    "same_dim_order": same_dim_order,
    "one_memory_format": one_memory_format,
    "slices_whole_rows": slices_whole_rows,
    "concatenates_whole_rows": concatenates_whole_rows,
    "views_in_logical_order": views_in_logical_order,
}


def _violations(
    program: torch.fx.GraphModule, applies: Callable[[torch.fx.Node, Rule], bool]
) -> Iterator[tuple[torch.fx.Node, str, Rule, str]]:
    """(node, op name, rule, problem) for each rule of its op that `applies` and that it breaks."""
    for node in program.graph.nodes:
        name = op_name(node)
        if not name:
            continue
        for rule in rules():
            if not any(fnmatch.fnmatchcase(name, pattern) for pattern in rule.ops) or not applies(node, rule):
                continue
            problem = CHECKS[rule.check](node)
            if problem:
                yield node, name, rule, problem


def _error(node: torch.fx.Node, name: str, rule: Rule, problem: str, when: str = "") -> str:
    where = source_line(node)
    return (
        f"the program would {EFFECTS[rule.effect]} on the target: {name} at node {node.name}"
        f"{f' ({where})' if where else ''}{when}: {problem}; {rule.why}"
    )


def check(program: torch.fx.GraphModule, exported: torch.fx.GraphModule | None = None, delegate: bool = False) -> None:
    """Raise ExportError at the first node a target kernel would refuse: a NeedsFloat when it is a
    cortex_m kernel's node made from a node of `exported` (float_islands.py: it can stay in float).
    `delegate`: cmx-gen's backend will run the nodes it takes, so a rule about a portable kernel
    (`backend_runs: true`) does not apply to them."""

    def applies(node: torch.fx.Node, rule: Rule) -> bool:
        return not (rule.backend_runs and delegate and layers.supports(node))

    for node, name, rule, problem in _violations(program, applies):
        where = source_line(node)
        in_float = name.startswith("cortex_m::")
        hint = rule.fix + (f", or leave it in float with --keep-fp32 {where.split()[0]}" if where and in_float else "")
        reason = f"{name} would {EFFECTS[rule.effect]} on it: {problem}"
        island = island_of(node, exported, reason) if in_float and exported is not None else None
        error = _error(node, name, rule, problem)
        raise NeedsFloat(error, hint, island) if island else ExportError(error, hint)


# The rules about the dim orders a portable kernel checks: the orders to_executorch serializes are
# derived again from the kernels when the program is delegated, so they are checked once more there.
SERIALIZED_CHECKS = ("default_or_channels_last", "one_memory_format")


def check_serialized(program: torch.fx.GraphModule) -> None:
    """Raise ExportError at the first portable kernel of the program to_executorch emitted (out
    variants, the delegates called) whose tensors a dim-order rule refuses, or at the first tensor
    a delegate call passes laid out otherwise than the delegate's plan reads or writes it: what
    `check` passed before delegation, ExecuTorch may have laid out otherwise since."""
    for node, name, rule, problem in _violations(program, lambda node, rule: rule.check in SERIALIZED_CHECKS):
        raise ExportError(_error(node, name, rule, problem, ", as serialized"), rule.fix)
    for problem in _boundary_mismatches(program):
        raise ExportError(
            f"cmx-gen would build wrong firmware: {problem}",
            "lower with --no-delegate to build this model, and report it: this is a defect of cmx-gen's backend",
        )


def _boundary_mismatches(program: torch.fx.GraphModule) -> Iterator[str]:
    """Each delegate input and output whose bytes the serialized program lays out otherwise than the
    delegate's plan (its subgraph, as preprocess saw it): ExecuTorch derives the program's dim orders
    again when it delegates, from each op's fake kernel (fuzzer seed 7010: a concat declared
    contiguous outside, written channels-last inside, FAIL 149 LSB on QEMU)."""
    from cmx_gen.common.dim_order import placed_dims
    from cmx_gen.lower.delegate.preprocess import is_delegate_call

    calls = [node for node in program.graph.nodes if is_delegate_call(node)]
    for position, call in enumerate(calls):
        inner = getattr(program, call.args[0].target).original_module
        names = set(inner.graph_signature.user_inputs)
        inputs = [n.meta["val"] for n in inner.graph.nodes if n.op == "placeholder" and n.name in names]
        outputs = [n.meta["val"] for n in inner.graph.output_node().args[0]]
        pairs = [("input", k, val, arg.meta["val"]) for k, (val, arg) in enumerate(zip(inputs, call.args[1:]))]
        pairs += [("output", k, val, outer) for k, (val, outer) in enumerate(zip(outputs, call.meta["val"]))]
        for side, k, val, outer in pairs:
            if (
                isinstance(val, torch.Tensor)
                and isinstance(outer, torch.Tensor)
                and placed_dims(val) != placed_dims(outer)
            ):
                yield (
                    f"delegate {position}'s {side} {k} {list(val.shape)} lies in dim order "
                    f"{list(val.dim_order())} in its plan but {list(outer.dim_order())} in the serialized program"
                )
