"""What the lowering steps hand each other: the target, the options, and a frozen `Lowering`
that each step returns anew with what it made (steps/, in the order of lowering.STEPS)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from cmx_gen.common.errors import TargetError
from cmx_gen.common.noise import quiet_third_party
from cmx_gen.common.targets import TARGETS, canonical_core
from cmx_gen.lower.exact_rewrites import Rewrite
from cmx_gen.lower.int8_io import IoQuant
from cmx_gen.lower.layer_error import LayerError
from cmx_gen.model.export import Exported
from cmx_gen.model.source import Inputs

Outputs = tuple[torch.Tensor, ...]


@dataclass(frozen=True)
class Target:
    core: str  # canonical name (common/targets.canonical_core)
    isa: str  # "MVE" | "DSP" | "SCALAR"

    def to_dict(self) -> dict[str, str]:
        return {"core": self.core, "isa": self.isa}


def target_config(core: str) -> Any:
    """executorch's CortexMTargetConfig for a `cortex-mXX` name (one-line error otherwise)."""
    quiet_third_party()
    from executorch.backends.cortex_m.target_config import CortexMTargetConfig

    if canonical_core(core) not in TARGETS:
        raise TargetError(f"unknown target {core!r}", f"use one of: {', '.join(TARGETS)} (or the short m55, m4, ...)")
    return CortexMTargetConfig.from_target_string(canonical_core(core))


def resolve_target(core: str) -> Target:
    return Target(core=canonical_core(core), isa=target_config(core).backend.name)


@dataclass(frozen=True)
class LowerOptions:
    """Lowering choices beyond the target; every field is part of the cache key and the report."""

    # Parts of the model left in float on portable kernels: a module path (`features.3`), a
    # line of the model file (`model.py:15`), or a node name of the exported graph (`bmm_1`).
    keep_fp32: tuple[str, ...] = ()
    # "int8": the program takes and returns int8 tensors, no quantize/dequantize at its edges (int8_io.py).
    io: str = "float"
    # True: cmx-gen's CMSIS-NN backend runs the int8 subgraphs from a plan (lower/delegate/);
    # False: every operator on its own kernel, as before the backend (for comparison, a way out).
    delegate: bool = True
    # What the backend's schedule favours: "fast", "balanced" or "min" RAM (lower/delegate/costs.py).
    memory: str = "balanced"

    def to_dict(self) -> dict[str, Any]:
        return {"keep_fp32": list(self.keep_fp32), "io": self.io, "delegate": self.delegate, "memory": self.memory}


@dataclass(frozen=True)
class Lowering:
    """A lowering under way. The first fields are given; each step fills in the ones it makes by
    returning a new Lowering (exir's passes still edit their graph in place, as upstream's do)."""

    exported: Exported
    target: Target
    config: Any  # CortexMTargetConfig
    options: LowerOptions
    evaluate: tuple[Inputs, ...] = ()  # `run --data` samples (float, logical shape)
    graph: Any = None  # rewrite: the float GraphModule quantization starts from
    rewrites: tuple[Rewrite, ...] = ()
    float_graph: Any = None  # quantize: the float graph, for the per-layer error
    quantized: Any = None  # quantize: the converted (Q/DQ) graph
    scales: dict[str, tuple[float, int]] = field(default_factory=dict)  # quantize: (scale, zero point) per node
    edge: Any = None  # to_edge: the EdgeProgramManager
    lowered: Any = None  # cortex_m_passes: the ExportedProgram on cortex_m ops
    io: IoQuant | None = None  # --io int8: the I/O quantization the caller applies
    program_inputs: Inputs = ()  # what the program takes (int8 with --io int8)
    runnable: Any = None  # reference: the lowered program as a GraphModule
    exact: Any = None  # reference: the KernelExactInterpreter over it
    runs: Any = None  # reference: reference.ReferenceRuns on the sample input
    node_values: dict[str, Any] = field(default_factory=dict)  # every op's result on the sample input
    calibration_outputs: tuple[tuple[Outputs, Outputs], ...] = ()  # (float, kernel-exact) per error sample
    calibration_references: tuple[tuple[Outputs, Outputs | None], ...] = ()  # (kernel-exact, Python)
    layers: tuple[LayerError, ...] = ()
    evaluated: tuple[tuple[Inputs, Outputs, Outputs], ...] = ()
    edge_program: Any = None  # delegate: the EdgeProgramManager to serialize (after to_backend)
    delegated: tuple[dict[str, Any], ...] = ()  # delegate: each layer the backend runs (backend.delegated_layers)
    schedules: tuple[dict[str, Any], ...] = ()  # delegate: each call's memory schedule (backend.delegate_schedules)
    pte: bytes = b""
    program: Any = None  # serialize: the ExecutorchProgramManager


@dataclass(frozen=True)
class Step:
    """One lowering step: its name (its key in the report's timings_s), what it does, and the
    progress line it shows while it runs (None: quick, silent)."""

    name: str
    run: Callable[[Lowering], Lowering]
    says: Callable[[Lowering], str] | None = None
