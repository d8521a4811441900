"""What the lowering steps hand each other. Each step (steps/, in the order of lowering.STEPS) is a
function whose parameters name the records it reads and whose return type is the record it makes:
`Given` is what `lower()` was handed, every other record is made by exactly one step and never
changed after. lowering.check_order refuses, at import, an order in which a step would read a record
no earlier step made."""

from __future__ import annotations

import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cmx_gen.common.errors import TargetError
from cmx_gen.common.noise import quiet_third_party
from cmx_gen.common.targets import TARGETS, canonical_core
from cmx_gen.lower.facts import (
    DelegatedLayer,
    FloatIsland,
    FloatPart,
    LayerError,
    LowerOptions,
    OpDiff,
    Rewrite,
    Schedule,
    Target,
)

# The records' field types are only annotations: this module loads neither torch nor executorch, so a
# step's record that the report holds (common/record.ReportPart) can live in its step's module.
if TYPE_CHECKING:
    import torch
    from executorch.backends.cortex_m.target_config import CortexMTargetConfig
    from executorch.exir import EdgeProgramManager, ExecutorchProgramManager
    from torch.export import ExportedProgram

    from cmx_gen.lower.host_models.reference import ReferenceRuns
    from cmx_gen.lower.rewrites.int8_io import IoQuant
    from cmx_gen.model.export import Exported
    from cmx_gen.model.source import Inputs

    Outputs = tuple[torch.Tensor, ...]

__all__ = ["LowerOptions", "Target"]


def target_config(core: str) -> CortexMTargetConfig:
    """executorch's CortexMTargetConfig for a `cortex-mXX` name (one-line error otherwise)."""
    quiet_third_party()
    from executorch.backends.cortex_m.target_config import CortexMTargetConfig

    if canonical_core(core) not in TARGETS:
        raise TargetError(f"unknown target {core!r}", f"use one of: {', '.join(TARGETS)} (or the short m55, m4, ...)")
    return CortexMTargetConfig.from_target_string(canonical_core(core))


def resolve_target(core: str) -> Target:
    return Target(core=canonical_core(core), isa=target_config(core).backend.name)


@dataclass(frozen=True)
class Given:
    """What lower() was handed."""

    exported: Exported
    target: Target
    config: CortexMTargetConfig
    options: LowerOptions
    evaluate: tuple[Inputs, ...] = ()  # `run --data` samples (float, logical shape)
    # Nodes an earlier try could not take to int8, left in float this time (float_islands.py).
    islands: tuple[FloatIsland, ...] = ()


@dataclass(frozen=True)
class Rewritten:
    """rewrite: the float graph quantization starts from, and the exact rewrites applied to it."""

    graph: torch.fx.GraphModule
    rewrites: tuple[Rewrite, ...]


@dataclass(frozen=True)
class Quantized:
    """quantize: the converted (Q/DQ) graph and the (scale, zero point) of every quantized float node."""

    graph: torch.fx.GraphModule
    scales: dict[str, tuple[float, int]]
    lstm_cells: dict[str, float]  # the largest |cell state| of each cmx::lstm node, by name (recurrent_graph.py)


@dataclass(frozen=True)
class Edge:
    """to_edge: the edge program; with --io int8, the I/O quantization the caller applies."""

    manager: EdgeProgramManager
    io: IoQuant | None


@dataclass(frozen=True)
class Lowered:
    """cortex_m_passes: the program on cortex_m ops, and what it takes (int8 with --io int8)."""

    program: ExportedProgram
    io: IoQuant | None
    inputs: Inputs


@dataclass(frozen=True)
class Cleaned:
    """cleanup: a copy of the lowered program without what the runtime would trip on."""

    program: ExportedProgram


@dataclass(frozen=True)
class Checked:
    """check_target: the program, once nothing in it is beyond the target's kernels."""

    program: ExportedProgram


@dataclass(frozen=True)
class Floats:
    """float_parts: the parts of the checked program that compute in float, and why each does."""

    parts: tuple[FloatPart, ...]


@dataclass(frozen=True)
class Referenced:
    """reference: the checked program as a GraphModule, and its host run on the sample input
    (both references' outputs, every op's result, where the references part)."""

    runnable: torch.fx.GraphModule
    runs: ReferenceRuns


@dataclass(frozen=True)
class Errors:
    """error: the program against the float model on the error samples."""

    calibration_outputs: tuple[tuple[Outputs, Outputs], ...]  # (float model, kernel-exact) per sample
    calibration_references: tuple[tuple[Outputs, Outputs | None], ...]  # (kernel-exact, Python) per sample
    layers: tuple[LayerError, ...]
    diffs: dict[str, OpDiff]  # where the references parted on these samples, by node


@dataclass(frozen=True)
class Evaluated:
    """evaluate: per `run --data` sample, (what the program takes, its kernel-exact outputs, the float model's)."""

    samples: tuple[tuple[Inputs, Outputs, Outputs], ...]


@dataclass(frozen=True)
class Delegated:
    """delegate: the edge program to serialize (after to_backend, when the backend is on), the layers
    cmx-gen's backend runs and each delegate call's memory schedule."""

    manager: EdgeProgramManager
    layers: tuple[DelegatedLayer, ...]
    schedules: tuple[Schedule, ...]


@dataclass(frozen=True)
class Serialized:
    """serialize: the .pte bytes, and the graph node each instruction runs (instructions.py)."""

    pte: bytes
    program: ExecutorchProgramManager
    instruction_names: dict[int, dict[str, str]]


@dataclass(frozen=True)
class Step:
    """One lowering step: its name (its key in the report's timings_s), the function, and the progress
    line it shows while it runs (None: quick, silent; called with the step's own arguments)."""

    name: str
    run: Callable[..., Any]
    says: Callable[..., str] | None = None

    @property
    def reads(self) -> tuple[type, ...]:
        """The record types the step takes, from its parameters' annotations."""
        hints = typing.get_type_hints(self.run)
        return tuple(hints[name] for name in self.run.__code__.co_varnames[: self.run.__code__.co_argcount])

    @property
    def makes(self) -> type:
        made: type = typing.get_type_hints(self.run)["return"]
        return made
