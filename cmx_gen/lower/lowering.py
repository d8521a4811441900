"""Quantize and lower a model to a cortex_m `.pte` with ExecuTorch's own APIs, as an ordered list
of steps (STEPS, like CortexMPassManager.pass_list), each one module under steps/:

rewrite -> quantize (CortexMQuantizer, calibrate) -> to_edge (cortex_m_edge_compile_config) ->
cortex_m_passes (CortexMPassManager for the target's ISA) -> cleanup -> check_target -> float_parts ->
reference (the kernel-exact host run) -> error (against the float model) -> evaluate -> delegate
(cmx-gen's CMSIS-NN backend takes the int8 subgraphs) -> serialize.

A step that cannot take a node to int8 raises float_islands.NeedsFloat: lower() leaves that node in
float and runs the steps again (at most MAX_ISLANDS times), instead of refusing the model.

The scratch buffers CortexMPassManager plans depend on the ISA (a pte lowered for DSP cores
corrupts memory on an M55 and the reverse fails), so the target is recorded in every output.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar, cast

from cmx_gen.common import progress
from cmx_gen.common.noise import quiet_executorch
from cmx_gen.common.record import ReportPart
from cmx_gen.common.targets import canonical_core
from cmx_gen.lower.facts import FloatIsland, OpDiff
from cmx_gen.lower.float_islands import MAX_ISLANDS, NeedsFloat
from cmx_gen.lower.host_models.reference import merge_diffs
from cmx_gen.lower.state import (
    Errors,
    Given,
    LowerOptions,
    Referenced,
    Serialized,
    Step,
    Target,
    resolve_target,
    target_config,
)
from cmx_gen.lower.steps import (
    check_target,
    cleanup,
    cortex_m_passes,
    delegate,
    error,
    evaluate,
    float_parts,
    quantize,
    reference,
    rewrite,
    serialize,
    to_edge,
)
from cmx_gen.model.export import Exported
from cmx_gen.model.source import Inputs

STEPS: list[Step] = [
    rewrite.STEP,
    quantize.STEP,
    to_edge.STEP,
    cortex_m_passes.STEP,
    cleanup.STEP,
    check_target.STEP,
    float_parts.STEP,
    reference.STEP,
    error.STEP,
    evaluate.STEP,
    delegate.STEP,
    serialize.STEP,
]

__all__ = ["STEPS", "LoweredModel", "LowerOptions", "Target", "check_order", "lower", "resolve_target", "target_config"]

R = TypeVar("R")


def check_order(steps: Sequence[Step]) -> None:
    """Every step reads only records that `Given` or an earlier step made, and no two steps make the
    same one; else the step and the record are named."""
    made: set[type] = {Given}
    for step in steps:
        missing = [kind.__name__ for kind in step.reads if kind not in made]
        if missing:
            raise RuntimeError(
                f"lowering step {step.name!r} reads {', '.join(missing)}, which no earlier step makes: "
                "put the step that makes it first in lowering.STEPS"
            )
        if step.makes in made:
            raise RuntimeError(
                f"lowering step {step.name!r} makes {step.makes.__name__} again: "
                "give each step a record type of its own (lower/state.py)"
            )
        made.add(step.makes)


check_order(STEPS)


@dataclass(frozen=True)
class LoweredModel:
    """The result of lowering: what it was given and every step's record, by type, and each step's seconds."""

    given: Given
    records: dict[type, object]
    timings: dict[str, float]  # seconds per step, by its name

    def get(self, kind: type[R]) -> R:
        """The record of type `kind` (state.py), made by the one step that makes it."""
        return cast(R, self.records[kind])

    def report_parts(self) -> dict[str, ReportPart]:
        """The records that report.json holds as they are (common/record.ReportPart), by their key."""
        return {record.key: record for record in self.records.values() if isinstance(record, ReportPart)}

    @property
    def pte(self) -> bytes:
        return self.get(Serialized).pte

    @property
    def target(self) -> Target:
        return self.given.target

    @property
    def op_diffs(self) -> tuple[OpDiff, ...]:
        """Where the two host references part, over the sample input and the error samples."""
        return tuple(merge_diffs(self.get(Referenced).runs.diffs, self.get(Errors).diffs).values())


def lower(
    exported: Exported, core: str, options: LowerOptions = LowerOptions(), evaluate: Sequence[Inputs] = ()
) -> LoweredModel:
    """Quantize with the calibration set and lower for one core; compute reference outputs.
    `evaluate`: more samples (float, logical shape) to run through the program and the float model
    (`cmx-gen run --data`): their outputs come back in the `Evaluated` record."""
    config = target_config(core)
    # executorch resets its logger level when these load: load them all, then quiet it
    import executorch.backends.cortex_m.passes.cortex_m_pass_manager  # noqa: F401
    import executorch.exir  # noqa: F401
    import torchao.quantization.pt2e.quantize_pt2e  # noqa: F401

    quiet_executorch()
    target = Target(core=canonical_core(core), isa=config.backend.name)
    islands: tuple[FloatIsland, ...] = ()
    timings: dict[str, float] = {}
    while True:
        given = Given(
            exported=exported, target=target, config=config, options=options, evaluate=tuple(evaluate), islands=islands
        )
        try:
            return _run_steps(given, timings)
        except NeedsFloat as need:
            if need.island.part in {i.part for i in islands} or len(islands) >= MAX_ISLANDS:
                raise
            islands += (need.island,)
            island = need.island
            where = f" ({island.source})" if island.source and island.part != island.source.split()[0] else ""
            progress.say(f"{island.part}{where} stays in float: {island.reason}; lowering again")


def _run_steps(given: Given, timings: dict[str, float]) -> LoweredModel:
    """STEPS in order; each step's seconds are added to `timings` (a try that made an island too)."""
    records: dict[type, object] = {Given: given}
    for step in STEPS:
        started = time.monotonic()
        args = [records[kind] for kind in step.reads]
        if step.says is None:
            made = step.run(*args)
        else:
            with progress.step(step.says(*args)):
                made = step.run(*args)
        records = {**records, type(made): made}
        timings[step.name] = timings.get(step.name, 0.0) + time.monotonic() - started
    return LoweredModel(given=given, records=records, timings=dict(timings))
