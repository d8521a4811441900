"""Quantize and lower a model to a cortex_m `.pte` with ExecuTorch's own APIs, as an ordered list
of steps (STEPS, like CortexMPassManager.pass_list), each one module under steps/:

rewrite -> quantize (CortexMQuantizer, calibrate) -> to_edge (cortex_m_edge_compile_config) ->
cortex_m_passes (CortexMPassManager for the target's ISA) -> cleanup -> check_target ->
reference (the kernel-exact host run) -> error (against the float model) -> evaluate -> delegate
(cmx-gen's CMSIS-NN backend takes the int8 subgraphs) -> serialize.

The scratch buffers CortexMPassManager plans depend on the ISA (a pte lowered for DSP cores
corrupts memory on an M55 and the reverse fails), so the target is recorded in every output.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from cmx_gen.common import progress
from cmx_gen.common.noise import quiet_executorch
from cmx_gen.common.targets import canonical_core
from cmx_gen.lower import exact_rewrites, instructions, int8_io, layer_error
from cmx_gen.lower.reference import OpDiff
from cmx_gen.lower.state import Lowering, LowerOptions, Step, Target, resolve_target, target_config
from cmx_gen.lower.steps import (check_target, cleanup, cortex_m_passes, delegate, error, evaluate, quantize, reference,
                                 rewrite, serialize, to_edge)
from cmx_gen.model.export import Exported
from cmx_gen.model.source import Inputs

STEPS: list[Step] = [rewrite.STEP, quantize.STEP, to_edge.STEP, cortex_m_passes.STEP, cleanup.STEP, check_target.STEP,
                     reference.STEP, error.STEP, evaluate.STEP, delegate.STEP, serialize.STEP]

__all__ = ["STEPS", "LoweredModel", "LowerOptions", "Target", "lower", "resolve_target", "target_config"]


@dataclass(frozen=True)
class LoweredModel:
    """The result of lowering: program bytes plus what is needed to check it later."""

    pte: bytes
    target: Target
    sample_inputs: Inputs
    reference_outputs: tuple[torch.Tensor, ...]  # the CMSIS-NN kernels' result (reference.py)
    python_outputs: tuple[torch.Tensor, ...] | None  # ExecuTorch's Python ops' result (None: they cannot run it)
    float_outputs: tuple[torch.Tensor, ...]
    # (float model, kernel-exact program) per error sample; (kernel-exact, Python) per error sample
    calibration_outputs: list[tuple[tuple[torch.Tensor, ...], tuple[torch.Tensor, ...]]] = field(default_factory=list)
    calibration_references: list[tuple[tuple[torch.Tensor, ...], tuple[torch.Tensor, ...] | None]] = field(default_factory=list)
    op_diffs: list[OpDiff] = field(default_factory=list)
    python_missing: set[str] = field(default_factory=set)  # ops ExecuTorch's Python reference cannot run
    timings: dict[str, float] = field(default_factory=dict)  # seconds per step, by its name
    instruction_names: dict[int, dict[str, str]] = field(default_factory=dict)  # instructions.node_names
    io: int8_io.IoQuant | None = None  # --io int8: the I/O quantization the caller applies
    node_values: dict[str, Any] = field(default_factory=dict)  # every op's result on the sample input, by node
    # lower(evaluate=...): per sample, (what the program takes, its kernel-exact outputs, the float model's outputs)
    evaluated: list[tuple[Inputs, tuple[torch.Tensor, ...], tuple[torch.Tensor, ...]]] = field(default_factory=list)
    rewrites: list[exact_rewrites.Rewrite] = field(default_factory=list)  # exact rewrites applied before quantizing
    layers: list[layer_error.LayerError] = field(default_factory=list)  # per-layer error against the float model
    delegated: list[dict[str, Any]] = field(default_factory=list)  # layers cmx-gen's backend runs (report)
    schedules: list[dict[str, Any]] = field(default_factory=list)  # each delegate call's memory schedule (report)


def lower(exported: Exported, core: str, options: LowerOptions = LowerOptions(),
          evaluate: Sequence[Inputs] = ()) -> LoweredModel:
    """Quantize with the calibration set and lower for one core; compute reference outputs.
    `evaluate`: more samples (float, logical shape) to run through the program and the float model
    (`cmx-gen run --data`): their outputs come back in `LoweredModel.evaluated`."""
    config = target_config(core)
    # executorch resets its logger level when these load: load them all, then quiet it
    import executorch.backends.cortex_m.passes.cortex_m_pass_manager  # noqa: F401
    import executorch.exir  # noqa: F401
    import torchao.quantization.pt2e.quantize_pt2e  # noqa: F401
    quiet_executorch()
    state = Lowering(exported=exported, target=Target(core=canonical_core(core), isa=config.backend.name),
                     config=config, options=options, evaluate=tuple(evaluate))
    timings: dict[str, float] = {}
    for step in STEPS:
        started = time.monotonic()
        if step.says is None:
            state = step.run(state)
        else:
            with progress.step(step.says(state)):
                state = step.run(state)
        timings[step.name] = time.monotonic() - started
    return LoweredModel(
        pte=state.pte,
        target=state.target,
        sample_inputs=state.program_inputs,
        reference_outputs=state.runs.kernel_exact,
        python_outputs=state.runs.python,
        float_outputs=exported.float_outputs,
        calibration_outputs=list(state.calibration_outputs),
        calibration_references=list(state.calibration_references),
        op_diffs=list(state.exact.diffs.values()),
        python_missing=set(state.exact.python_missing),
        timings=timings,
        instruction_names=instructions.node_names(state.program.exported_program().graph_module),
        node_values=state.node_values,
        io=state.io,
        evaluated=list(state.evaluated),
        rewrites=list(state.rewrites),
        layers=list(state.layers),
        delegated=list(state.delegated),
        schedules=list(state.schedules),
    )
