"""What a memory goal trades: the instructions a layer costs on each kernel (data/kernel_costs.yaml),
and which layers of a Helium core a goal moves to cmx-gen's DSP kernels for RAM.

Goals (`[options] memory`, `--memory`): `fast` keeps the fastest kernels (and spends flash on int16
weights for mid-sized layers: schedule.py); `balanced` (the default)
takes the smallest schedule within BALANCED_SLACK more instructions; `min` the smallest schedule.
Writing a layer over its input costs no instruction, so every goal does it."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache
from typing import Any

import torch
import yaml

from cmx_gen.common.paths import DATA_DIR
from cmx_gen.lower.delegate import kernel_choice
from cmx_gen.lower.delegate.kernel_choice import node_val

BALANCED_SLACK = 0.05  # balanced: at most 5 % more instructions than the fastest kernels


@cache
def _per_mac() -> dict[str, dict[str, float]]:
    data = yaml.safe_load((DATA_DIR / "kernel_costs.yaml").read_text())
    return {isa: kinds for isa, kinds in data.items() if isa != "schema"}


def macs(node: torch.fx.Node) -> int:
    """Multiply-accumulates of a convolution or depthwise layer (0 for other layers)."""
    kind = kernel_choice.conv_kind(node, "MVE") or kernel_choice.depthwise_kind(node, "MVE")
    if not kind:
        return 0
    weight = node_val(node.args[1])
    taps = int(weight.shape[1]) * int(weight.shape[2])
    per_output = taps * (1 if kernel_choice.depthwise_kind(node, "MVE") else int(weight.shape[3]))
    return int(node_val(node).numel()) * per_output


def _kind(node: torch.fx.Node, isa: str) -> str:
    kind = kernel_choice.conv_kind(node, isa) or kernel_choice.depthwise_kind(node, isa)
    weight = node_val(node.args[1])
    if kind == "depthwise_3x3" and isa == "MVE" and kernel_choice.helium_depthwise(node):
        return "depthwise_3x3_helium"
    if kind == "depthwise_3x3" and kernel_choice.depthwise_plane_bytes(node, isa):
        return "depthwise_3x3_planar" if kernel_choice.depthwise_planar_shape(node) else "depthwise_3x3_grouped"
    one_by_one = int(weight.shape[1]) == int(weight.shape[2]) == 1
    return f"{kind}_1x1" if kind in ("conv", "conv_helium") and one_by_one else kind


def instructions(node: torch.fx.Node, isa: str) -> float:
    """Estimated instructions of a convolution or depthwise layer on the kernel now chosen for it
    (infinite for a kernel not measured on this ISA: no goal but `min` trades for it)."""
    if not macs(node):
        return 0.0
    rate = _per_mac().get(isa, {}).get(_kind(node, isa))
    return float(rate) * macs(node) if rate is not None else math.inf


def per_mac_of(layers: Any, isa: str) -> float:
    """Instructions per MAC of these layers on their chosen kernels, on average (infinite when
    none is measured on this ISA)."""
    rates = _per_mac().get(isa, {})
    general = {"conv_general": "conv"}  # arm_convolve_s8 itself, which the wrapper calls for these
    spent, counted = 0.0, 0
    for node in layers:
        kind = _kind(node, isa) if macs(node) else ""
        rate = rates.get(general.get(kind, kind)) if kind else None
        if rate is not None:
            spent, counted = spent + float(rate) * macs(node), counted + macs(node)
    return spent / counted if counted else math.inf


def _extra(node: torch.fx.Node, isa: str) -> float:
    """What running this layer on the small kernel costs more than on the fast one (the node's
    choice is left as it was)."""
    with kernel_choice.kernels_as(node, small=True):
        small = instructions(node, isa)
    with kernel_choice.kernels_as(node, small=False):
        fast = instructions(node, isa)
    return small - fast if math.isfinite(small) and math.isfinite(fast) else math.inf  # unmeasured: not known cheaper


def extra_instructions(chosen: set[torch.fx.Node], isa: str) -> int | None:
    """Estimated instructions the chosen small kernels add (None: a kernel not measured)."""
    extra = sum(_extra(n, isa) for n in chosen)
    return round(extra) if math.isfinite(extra) else None


def choose_small(
    candidates: list[torch.fx.Node], work_bytes: Callable[[set[torch.fx.Node]], int], isa: str, goal: str, compute: Any
) -> set[torch.fx.Node]:
    """The layers to run on the small kernels: all that lower the working memory (min), kept only
    while they do, then (balanced) the dearest given back until within BALANCED_SLACK."""
    if goal == "fast" or not candidates:
        return set()
    extra = {n: _extra(n, isa) for n in candidates}
    fast = work_bytes(set())
    fast_instructions = sum(v for v in (instructions(n, isa) for n in compute) if math.isfinite(v))
    small = set(candidates)
    best = work_bytes(small)
    if best >= fast:
        return set()
    for node in sorted(candidates, key=lambda n: -extra[n]):
        without = work_bytes(small - {node})
        if without <= best:
            small.discard(node)
            best = without
    if goal == "balanced":
        budget = BALANCED_SLACK * fast_instructions
        while small and sum(extra[n] for n in small) > budget:
            small.discard(max(small, key=lambda n: extra[n]))
        if work_bytes(small) >= fast:
            return set()
    return small
