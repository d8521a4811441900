"""`weights = "auto"`: which layers take 4-bit weights, from measured error (issue 52).

Each weighted layer is lowered alone at int4 (the rest int8; without the backend: the error is measured
before it) and the output's SQNR against float on the calibration samples says what its 4 bits cost;
the layers are taken to int4 in the order of SQNR lost per byte saved, and the longest prefix of that
order whose program keeps the target is found by bisection, each step a lowering. (Each layer's own
loss inside the all-int4 program ranks them badly: its input is already that program's noise.) The
result is plain options (`weights_for` naming the int4 layers) that the caller lowers with, and the
record of the choice for the report. A lowering per layer: for a large model, --weights-for by hand is
quicker."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from cmx_gen.common import progress
from cmx_gen.common.goals import AUTO_SQNR_SLACK_DB
from cmx_gen.lower.activation_bits import any_int16
from cmx_gen.lower.delegate.kernel_choice import WEIGHTED_OPS
from cmx_gen.lower.facts import LayerError, LayerWeights, LowerOptions, WeightChoice
from cmx_gen.lower.lowering import LoweredModel, lower
from cmx_gen.lower.state import Errors
from cmx_gen.model.export import Exported

_LEAST_COST_DB = 0.05  # a layer that loses nothing more at 4 bits still ranks by its bytes


def output_powers(lowered: LoweredModel) -> list[tuple[float, float]]:
    """Per calibration sample, its float outputs' power and the kernel-exact outputs' error's."""
    powers: list[tuple[float, float]] = []
    for floats, exact in lowered.get(Errors).calibration_outputs:
        signal = noise = 0.0
        for f, q in zip(floats, exact):
            a, b = np.asarray(f, dtype=np.float64), np.asarray(q, dtype=np.float64)
            signal += float(np.sum(a * a))
            noise += float(np.sum((a - b) ** 2))
        powers.append((signal, noise))
    return powers


def output_sqnr(lowered: LoweredModel) -> float:
    """10 log10 of the float outputs' power over the kernel-exact outputs' error, all calibration samples."""
    powers = output_powers(lowered)
    signal, noise = sum(s for s, _ in powers), sum(n for _, n in powers)
    return float(10 * np.log10(signal / noise)) if noise > 0 else float("inf")


def _modules(layers: Sequence[LayerError]) -> list[str]:
    """The module paths of the weighted layers, in program order."""
    found: list[str] = []
    for layer in layers:
        if layer.op.split(".")[0] in WEIGHTED_OPS and layer.module and layer.module not in found:
            found.append(layer.module)
    return found


def _weight_bytes(module: Any, path: str) -> int:
    """The int8 bytes of the weight of the module at `path` (0 where it has none)."""
    weight = getattr(dict(module.named_modules()).get(path), "weight", None)
    return int(weight.numel()) if weight is not None else 0


def resolve(exported: Exported, core: str, options: LowerOptions) -> tuple[LowerOptions, WeightChoice]:
    """The options `weights = "auto"` comes to (`weights = "int8"`, `weights_for` the user's and the
    chosen int4 layers), and the record of the choice."""
    pinned = options.weights_for  # the user's own overrides hold in every trial
    trials = 0

    def trial(default: str, int4: Sequence[str]) -> LoweredModel:
        nonlocal trials
        trials += 1
        chosen = tuple(f"{m}=int4" for m in int4)
        # without the backend (faster) unless a layer runs 16-bit activations, which only the backend runs
        delegate = any_int16(options)
        trial_options = options.model_copy(
            update={"weights": default, "weights_for": chosen + pinned, "delegate": delegate, "sqnr_target": None}
        )
        with progress.step(f"weights auto: trial {trials}, {default} with {len(int4)} layer(s) at int4"):
            return lower(exported, core, trial_options)

    int8, int4 = trial("int8", ()), trial("int4", ())
    int8_db, int4_db = output_sqnr(int8), output_sqnr(int4)
    target = options.sqnr_target if options.sqnr_target is not None else int8_db - AUTO_SQNR_SLACK_DB
    pinned_parts = {text.rpartition("=")[0] for text in pinned}
    module = exported.source.module
    weighted = [m for m in _modules(int8.get(Errors).layers) if m not in pinned_parts and _weight_bytes(module, m)]
    if int4_db >= target:
        alone: dict[str, float] = {}  # every layer at int4 keeps the target: no need to rank them
        order, count, chosen_db = weighted, len(weighted), int4_db
    else:
        alone = {m: output_sqnr(trial("int8", (m,))) for m in weighted}
        order = sorted(weighted, key=lambda m: -_weight_bytes(module, m) / max(int8_db - alone[m], _LEAST_COST_DB))
        low, high, chosen_db = 0, len(order), int8_db  # low keeps the target (or is none), high does not
        while high - low > 1:
            middle = (low + high) // 2
            db = alone[order[0]] if middle == 1 else output_sqnr(trial("int8", order[:middle]))
            low, high, chosen_db = (middle, high, db) if db >= target else (low, middle, chosen_db)
        if low == 0 and order and alone[order[0]] >= target:  # bisection never tries one alone when high is 1
            low, chosen_db = 1, alone[order[0]]
        count = low
    layers = [
        LayerWeights(
            module=m,
            weights="int4" if i < count else "int8",
            bytes_int8=_weight_bytes(module, m),
            alone_db=round(alone[m], 3) if m in alone else None,
        )
        for i, m in enumerate(order)
    ]
    record = WeightChoice(
        target_db=round(target, 3),
        int8_db=round(int8_db, 3),
        int4_db=round(int4_db, 3),
        chosen_db=round(chosen_db, 3),
        trials=trials,
        layers=layers,
    )
    return resolved_options(options, record), record


def resolved_options(options: LowerOptions, choice: WeightChoice) -> LowerOptions:
    """What `weights = "auto"` lowers with once `choice` is made: int8, the chosen layers int4 by name,
    the user's own overrides after them (also how `run --data` lowers an auto app again)."""
    chosen = tuple(f"{layer.module}=int4" for layer in choice.layers if layer.weights == "int4")
    return options.model_copy(update={"weights": "int8", "weights_for": chosen + options.weights_for})
