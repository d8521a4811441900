"""Helpers of the lowering tests that check a program's plan: the kinds its backend layers run, the plan's
host run against the lowering's reference, and a model source made in a test."""

from __future__ import annotations

import collections
from typing import Any

import numpy as np
import torch

from cmx_gen.model.source import ModelSource
from cmx_gen.program import plan_reference

ISA = {"cortex-m4": "DSP", "cortex-m55": "MVE", "cortex-m3": "SCALAR"}


def kinds(artifacts: Any) -> collections.Counter[str]:
    """How many of each backend layer kind the program's plans hold."""
    return collections.Counter(layer.kind for layer in artifacts.report.delegated_layers)


def plan_gives_the_reference(artifacts: Any, core: str) -> None:
    """The .pte's plans run on the host from their integers give the lowering's reference, bit for bit."""
    inputs = [artifacts.reference[k] for k in sorted(artifacts.reference) if k.startswith("input_")]
    outputs = plan_reference.reference(artifacts.pte, inputs, ISA[core])
    assert np.array_equal(outputs[0], artifacts.reference["output_0"])


def source_of(module: torch.nn.Module, calibration: list[tuple[torch.Tensor, ...]], spec: str) -> ModelSource:
    """A model made in a test, calibrated on `calibration` (its first sample the example)."""
    return ModelSource(
        spec=spec,
        kind="python",
        module=module.eval(),
        example_inputs=calibration[0],
        calibration=calibration,
        calibration_source="made in the test",
    )
