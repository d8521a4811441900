"""`cmx-gen run --data`: more samples through the kernel-exact program and the float model, so
the target's answers can be compared with the host's sample by sample (pipeline/data_run.py)."""

from __future__ import annotations

from dataclasses import replace

import torch

from cmx_gen.common import progress
from cmx_gen.lower import int8_io
from cmx_gen.lower.state import Lowering, Step
from cmx_gen.model.source import Inputs, call, fresh


def _like(sample: Inputs, example: Inputs) -> Inputs:
    """A sample in the memory format the lowering gave the example inputs (channels-last where spatial)."""
    return tuple(x.contiguous(memory_format=torch.channels_last)
                 if e.dim() == 4 and e.is_contiguous(memory_format=torch.channels_last) and not e.is_contiguous()
                 else x.contiguous() for x, e in zip(sample, example))


def run(state: Lowering) -> Lowering:
    exact, io, module = state.exact, state.io, state.exported.source.module
    evaluated = []
    exact.compare_python = False
    for index, sample in enumerate(state.evaluate):
        sample = _like(sample, state.exported.inputs)
        fed = int8_io.quantize_inputs(sample, io) if io else sample
        with torch.no_grad():
            out = exact.run(*fresh(fed))
        evaluated.append((fed, (out,) if isinstance(out, torch.Tensor) else tuple(out), call(module, sample)))
        if (index + 1) % 50 == 0 or index + 1 == len(state.evaluate):
            progress.say(f"host reference: {index + 1}/{len(state.evaluate)} samples")
    return replace(state, evaluated=tuple(evaluated))


STEP = Step("evaluate", run)
