"""`cmx-gen run --data`: more samples through the kernel-exact program and the float model, so
the target's answers can be compared with the host's sample by sample (pipeline/data_run.py)."""

from __future__ import annotations

import torch

from cmx_gen.common import progress
from cmx_gen.lower.host_models.reference import kernel_exact
from cmx_gen.lower.rewrites import int8_io
from cmx_gen.lower.state import Evaluated, Given, Lowered, Referenced, Step
from cmx_gen.model.source import Inputs, call_float


def _like(sample: Inputs, example: Inputs) -> Inputs:
    """A sample in the memory format the lowering gave the example inputs (channels-last where spatial)."""
    return tuple(
        x.contiguous(memory_format=torch.channels_last)
        if e.dim() == 4 and e.is_contiguous(memory_format=torch.channels_last) and not e.is_contiguous()
        else x.contiguous()
        for x, e in zip(sample, example)
    )


def run(given: Given, lowered: Lowered, referenced: Referenced) -> Evaluated:
    io, module = lowered.io, given.exported.module
    evaluated = []
    for index, sample in enumerate(given.evaluate):
        sample = _like(sample, given.exported.inputs)
        fed = int8_io.quantize_inputs(sample, io) if io else sample
        evaluated.append((fed, kernel_exact(referenced.runnable, fed, given.target.isa), call_float(module, sample)))
        if (index + 1) % 50 == 0 or index + 1 == len(given.evaluate):
            progress.say(f"host reference: {index + 1}/{len(given.evaluate)} samples")
    return Evaluated(samples=tuple(evaluated))


STEP = Step("evaluate", run)
