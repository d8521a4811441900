"""`precision = "auto"`: which layers take 16-bit activations, from measured error (issue 52).

From the all-int8 program, each layer that can take int16 (a convolution, linear layer, add, multiplication,
LSTM, batch matmul or softmax; a module path, or the node name of one in the model's own forward) is lowered
alone at int16 and the output's SQNR against float on the calibration samples says what its 16 bits gain;
the layers are taken to int16 in the order of SQNR gained per activation byte added (its output's
elements: a byte each more), and the shortest prefix of that order whose program reaches the target is
found by bisection, each step a lowering (16-bit activations run on cmx-gen's backend only, so every trial
is a full lowering). A layer's gain alone understates what it gains beside others (a residual's first
convolution gains nothing while the add after it rounds to int8), so the prefix holds layers the others made
unneeded: each is lowered without, last taken first, and left int8 where the target still holds. The result
is plain options (`precision_for` naming the int16 layers) that the caller lowers with, and the record of
the choice for the report.

The SQNR is each calibration sample's, averaged in dB: what 16 bits buy is the quiet inputs, which the
SQNR of all samples' outputs together (weight_choice.output_sqnr, what `weights = "auto"` keeps) hides
behind the loud ones; both sum the same per-sample powers (weight_choice.output_powers)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from cmx_gen.common import progress
from cmx_gen.common.goals import AUTO_PRECISION_SLACK_DB
from cmx_gen.lower.activation_bits import BINARY, WIDENED
from cmx_gen.lower.delegate.kernel_choice import WEIGHTED_OPS
from cmx_gen.lower.facts import LayerPrecision, LowerOptions, PrecisionChoice
from cmx_gen.lower.lowering import LoweredModel, lower
from cmx_gen.lower.state import Errors
from cmx_gen.lower.weight_choice import output_powers
from cmx_gen.model.export import Exported
from cmx_gen.model.source import call

_LEAST_GAIN_DB = 0.05  # a layer that gains nothing alone still ranks by its bytes
# int8 ops that can take int16 (activation_bits.WIDENED's, as the int8 program has them)
_LAYER_OPS = (
    *WEIGHTED_OPS,
    "cortex_m::quantized_add",
    "cortex_m::quantized_mul",
    "cmx::quantized_lstm",
    "cmx::quantized_bmm",
    "cortex_m::softmax",
)


_SQNR_CEILING_DB = 150.0  # a sample the program gets exactly right counts as this, not as infinity


def sample_sqnr(lowered: LoweredModel) -> float:
    """The output's SQNR against float, each calibration sample's in dB (its outputs' power over their
    error), averaged; a sample whose float outputs are all zero has none and is left out."""
    values = [
        min(10 * np.log10(signal / noise), _SQNR_CEILING_DB) if noise > 0 else _SQNR_CEILING_DB
        for signal, noise in output_powers(lowered)
        if signal > 0
    ]
    return float(np.mean(values)) if values else _SQNR_CEILING_DB


def _modules(exported: Exported, int8: LoweredModel) -> list[str]:
    """The module paths of the layers that can take int16, in program order (not an add in the model's own
    forward: its path, the model class, would name every layer; _forward_layers names those)."""
    top = type(exported.source.module).__name__
    found: list[str] = []
    for layer in int8.get(Errors).layers:
        if layer.op.split(".")[0] in _LAYER_OPS and layer.module not in ("", top, *found):
            found.append(layer.module)
    return found


def _forward_layers(exported: Exported) -> dict[str, int]:
    """The layers written in the model's own forward (`x + self.body(x)`), by node name of the exported
    graph (what --precision-for takes for them), with their output elements: the adds and multiplications of
    two tensors, and any other op that takes int16 called as a function there."""
    found: dict[str, int] = {}
    for node in exported.program.graph.nodes:
        paths = [p for p, _ in (node.meta.get("nn_module_stack") or {}).values() if p]
        if node.op != "call_function" or paths or str(node.target) not in WIDENED:
            continue
        if str(node.target) in BINARY and not all(isinstance(a, torch.fx.Node) for a in node.args[:2]):
            continue  # a scaling by a constant: int16 follows its input
        value = node.meta.get("val")
        found[node.name] = int(value.numel()) if isinstance(value, torch.Tensor) else 0
    return found


def _output_elements(exported: Exported, paths: Sequence[str]) -> dict[str, int]:
    """Each module's output elements on the example inputs (what int16 adds a byte each to)."""
    module = exported.source.module
    if module is None:  # a .pte: nothing to lower again
        return {p: 0 for p in paths}
    named = dict(module.named_modules())
    sizes: dict[str, int] = {}
    hooks = [
        named[p].register_forward_hook(lambda _m, _i, out, p=p: sizes.__setitem__(p, _elements(out)))
        for p in paths
        if p in named
    ]
    try:
        with torch.no_grad():
            call(module, exported.inputs)
    finally:
        for hook in hooks:
            hook.remove()
    return {p: sizes.get(p, 0) for p in paths}


def _elements(out: Any) -> int:
    """A module's output elements: its tensor's, or its first output's (nn.LSTM returns (y, (h, c)))."""
    while isinstance(out, (tuple, list)) and out:
        out = out[0]
    return int(out.numel()) if isinstance(out, torch.Tensor) else 0


def resolve(exported: Exported, core: str, options: LowerOptions) -> tuple[LowerOptions, PrecisionChoice]:
    """The options `precision = "auto"` comes to (`precision = "int8"`, `precision_for` the chosen int16
    layers and the user's own), and the record of the choice."""
    pinned = options.precision_for  # the user's own overrides hold in every trial
    trials = 0

    def trial(default: str, int16: Sequence[str]) -> LoweredModel:
        nonlocal trials
        trials += 1
        chosen = tuple(f"{m}=int16" for m in int16)
        trial_options = options.model_copy(
            update={"precision": default, "precision_for": chosen + pinned, "sqnr_target": None}
        )
        with progress.step(f"precision auto: trial {trials}, {default} with {len(int16)} layer(s) at int16"):
            return lower(exported, core, trial_options)

    int8, int16 = trial("int8", ()), trial("int16", ())
    int8_db, int16_db = sample_sqnr(int8), sample_sqnr(int16)
    target = options.sqnr_target if options.sqnr_target is not None else int16_db - AUTO_PRECISION_SLACK_DB
    pinned_parts = {text.rpartition("=")[0] for text in pinned}
    forward = _forward_layers(exported)
    layers = [m for m in (*_modules(exported, int8), *forward) if m not in pinned_parts]
    sizes = {**_output_elements(exported, [m for m in layers if m not in forward]), **forward}
    alone: dict[str, float] = {}
    without: dict[str, float] = {}
    taken: list[str] = []
    if int8_db >= target:  # int8 reaches it: no layer needs 16 bits
        order, chosen_db = layers, int8_db
    else:
        alone = {m: sample_sqnr(trial("int8", (m,))) for m in layers}
        order = sorted(layers, key=lambda m: -max(alone[m] - int8_db, _LEAST_GAIN_DB) / max(sizes[m], 1))
        known: dict[tuple[str, ...], float] = {(m,): db for m, db in alone.items()}

        def measure(int16: Sequence[str]) -> float:
            return known[tuple(int16)] if tuple(int16) in known else sample_sqnr(trial("int8", int16))

        taken, chosen_db, without = _fewest(order, target, measure)
    record = PrecisionChoice(
        target_db=round(target, 3),
        int8_db=round(int8_db, 3),
        int16_db=round(int16_db, 3),
        chosen_db=round(chosen_db, 3),
        trials=trials,
        layers=[
            LayerPrecision(
                module=m,
                precision="int16" if m in taken else "int8",
                bytes_added=sizes[m],
                alone_db=round(alone[m], 3) if m in alone else None,
                without_db=round(without[m], 3) if m in without else None,
            )
            for m in order
        ],
    )
    return resolved_options(options, record), record


def _fewest(
    order: list[str], target: float, measure: Callable[[Sequence[str]], float]
) -> tuple[list[str], float, dict[str, float]]:
    """The fewest layers of `order` at int16 whose program reaches `target` (`measure` gives a choice's SQNR):
    the shortest prefix, by bisection (every layer when none reaches it, and then no more lowerings), less each
    layer of it the others made unneeded, tried without last first. Returns them, their SQNR and each layer's SQNR tried without."""
    low, high = 0, len(order)  # low does not reach the target (all int8), high does (or is all of them)
    measured: dict[int, float] = {}
    while high - low > 1:
        middle = (low + high) // 2
        measured[middle] = measure(order[:middle])
        low, high = (low, middle) if measured[middle] >= target else (middle, high)
    taken = order[:high]
    chosen_db = measured[high] if high in measured else measure(taken)
    without: dict[str, float] = {}
    if chosen_db < target:  # every layer at int16 falls short too: none can go
        return taken, chosen_db, without
    for m in reversed(order[: high - 1]):  # the last one taken is needed: the prefix without it fell short
        without[m] = measure([t for t in taken if t != m])
        if without[m] >= target:
            taken, chosen_db = [t for t in taken if t != m], without[m]
    return taken, chosen_db, without


def resolved_options(options: LowerOptions, choice: PrecisionChoice) -> LowerOptions:
    """What `precision = "auto"` lowers with once `choice` is made: int8, the chosen layers int16 by name,
    the user's own overrides after them (also how `run --data` lowers an auto app again)."""
    chosen = tuple(f"{layer.module}=int16" for layer in choice.layers if layer.precision == "int16")
    return options.model_copy(update={"precision": "int8", "precision_for": chosen + options.precision_for})
