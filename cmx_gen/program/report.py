"""The lowering report, typed: `report.json` (stable keys, see docs/report.md) built or read once as
a `Report`. How it reads for people (the stdout table, report.md) is report_text.py."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from cmx_gen import __version__
from cmx_gen.common.errors import ModelSourceError, StrictError
from cmx_gen.common.record import Record, ReportPart, SparseRecord
from cmx_gen.lower.facts import (
    DelegatedLayer,
    FloatPart,
    LayerError,
    LowerOptions,
    OpDiff,
    PrecisionChoice,
    Rewrite,
    Schedule,
    Target,
    WeightChoice,
)
from cmx_gen.program.pte import Operator, OutputPlace, ProgramInfo, Quant, TensorSpec

SCHEMA = "cmx-gen/report/1"

# The parts other stages make, held here as they are (one type per fact): listed for the readers.
__all__ = [
    "DelegatedLayer",
    "FloatPart",
    "LayerError",
    "LowerOptions",
    "OpDiff",
    "Operator",
    "OutputPlace",
    "Quant",
    "Rewrite",
    "Schedule",
    "Target",
    "TensorSpec",
    "WeightChoice",
    "PrecisionChoice",
    "Report",
    "build_report",
    "load_json",
    "write_json",
    "check_strict",
]


def executorch_version() -> str:
    from importlib.metadata import version

    return version("executorch")


def build_report(
    info: ProgramInfo,
    target: Target,
    model: ModelFacts,
    *,
    reference: ReferenceCheck,
    calibration: Calibration | None = None,
    quantization_error: QuantizationError | None = None,
    warnings: list[str] | None = None,
    timings: dict[str, float] | None = None,
    lowering_options: LowerOptions | None = None,
    rewrites: list[Rewrite] | None = None,
    float_parts: list[FloatPart] | None = None,
    layers: list[LayerError] | None = None,
    instructions: list[Instruction] | None = None,
    delegated_layers: list[DelegatedLayer] | None = None,
    schedules: list[Schedule] | None = None,
    note: str | None = None,
    parts: Mapping[str, ReportPart] | None = None,
) -> Report:
    """The report of a program from its parts. The parts only a lowered model has (lowering_options ...
    schedules) and `note` are left out of report.json when not given, not written as their defaults;
    `parts`: the steps' ReportParts by key (fields of Report). Keys are documented in docs/report.md;
    add, never rename."""
    given = {
        "lowering_options": lowering_options,
        "rewrites": rewrites,
        "float_parts": float_parts,
        "layers": layers,
        "instructions": instructions,
        "delegated_layers": delegated_layers,
        "schedules": schedules,
        "note": note,
    }
    return Report(
        schema_=SCHEMA,
        cmx_gen_version=__version__,
        executorch_version=executorch_version(),
        model=model,
        target=target,
        pte=Pte(bytes=info.pte_bytes, constant_bytes=info.constant_bytes, sha256=info.sha256),
        operators=info.operators,
        fallbacks=info.fallbacks,
        inputs=info.inputs,
        outputs=info.outputs,
        memory=_memory(info),
        program=Program(values=info.num_values, instructions=info.num_instructions, delegates=info.delegates),
        calibration=calibration,
        quantization_error=quantization_error,
        reference=reference,
        lowering_warnings=warnings or [],
        timings_s={k: round(v, 3) for k, v in (timings or {}).items()},
        **{key: part for key, part in given.items() if part is not None},
        **(parts or {}),
    )


def _memory(info: ProgramInfo) -> Memory:
    """The program's memory as the .pte's memory plan and the allocators' sizes give it: exact, the
    method allocator too (32-bit Arm)."""
    return Memory(
        planned_buffer_sizes=info.planned_buffer_sizes,
        planned_bytes=info.planned_bytes,
        scratch_bytes=info.scratch_bytes,
        caller_input_bytes=info.caller_input_bytes,
        method_allocator_bytes=info.method_allocator_bytes,
        method_allocator_is_estimate=False,
        temp_allocator_bytes=info.temp_allocator_bytes,
    )


def check_strict(report: Report) -> None:
    """--strict / `strict = true`: refuse a program with portable compute fallbacks, naming them, and
    the float islands cmx-gen made with the failure each one avoided."""
    fallbacks = report.fallbacks
    islands = [part for part in report.float_parts if part.why == "island"]
    if islands:
        first = islands[0]
        raise StrictError(
            f"{', '.join(first.ops)}{f' ({first.source})' if first.source else ''} was {first.reason}"
            + (f" (and {len(islands) - 1} more)" if len(islands) > 1 else ""),
            "drop --strict / strict = true to let cmx-gen keep it in float, or rewrite that layer with ops "
            "the cortex_m backend lowers",
        )
    if fallbacks:
        raise StrictError(
            f"{len(fallbacks)} compute op(s) fell back to portable kernels: {', '.join(fallbacks)}",
            "rewrite those layers with ops the cortex_m backend lowers (see report.md), or drop --strict / strict = true",
        )


def write_json(path: Path, report: Report) -> None:
    path.write_text(json.dumps(report.to_dict(), indent=2, sort_keys=False) + "\n")


class Pte(Record):
    bytes: int
    constant_bytes: int = 0
    sha256: str = ""


class Memory(Record):
    planned_buffer_sizes: list[int]
    planned_bytes: int = 0
    scratch_bytes: int = 0
    caller_input_bytes: int = 0  # inputs in the caller's buffers (input_memory = "caller"), not planned
    method_allocator_bytes: int
    method_allocator_is_estimate: bool = False
    temp_allocator_bytes: int


class Program(Record):
    values: int = 0
    instructions: int = 0
    delegates: list[Any] = []


class Instruction(Record):
    """One row of the program's forward plan (instructions.py), named for people."""

    index: int
    op: str
    node: str = ""
    module: str = ""
    source: str = ""
    output: OutputPlace | None = None

    @property
    def traced(self) -> bool:
        """The host holds this instruction's expected output bytes (model/trace_reference.bin)."""
        return bool(self.output and self.output.reference)


class ModelFacts(SparseRecord):
    """Which model the program came from (`graph_sha256`: its exported graph, for a lowered model)."""

    source: str = "?"
    kind: str = ""
    content_sha256: str = ""
    graph_sha256: str = ""


class Calibration(Record):
    source: str
    samples: int = 0
    random: bool = False  # --random-calibration: the INT8 accuracy is not representative


class QuantizationError(Record):
    """The INT8 program against the float model (reference_check.quantization_error)."""

    max_abs_err: float
    sample_max_abs_err: float | None = None
    samples: int = 0
    top1_agreement: float | None = None  # classifiers: float and INT8 agree on the top class


# What the firmware's outputs are compared with: the CMSIS-NN kernels' host models, a bundle's
# expected outputs, or nothing (the app reports RAN, never PASS).
CheckedAgainst = Literal["cmsis-nn", "bundle", "none"]


class ReferenceCheck(SparseRecord):
    """Which reference the firmware is checked against; the keys that do not apply to it are left out."""

    checked_against: CheckedAgainst
    description: str = ""
    tolerance: float | None = None  # a bundle's, in the outputs' own unit
    python_reference_max_lsb: int | None = None  # ExecuTorch's Python reference, LSB from the checked one
    python_reference_max_lsb_calibration: int | None = None
    ops: list[OpDiff] = []


class Report(SparseRecord):
    """report.json, typed: validated once when it is built or read, then passed around as is.

    `to_dict()` is the report as report.json, the app's model/report.json and the templates'
    `cookiecutter.model` hold it: the keys in this order, and only the parts the program has (a .pte
    lowered elsewhere has no lowering_options, layers, ...).
    """

    schema_: str = Field(alias="schema")
    cmx_gen_version: str = ""
    executorch_version: str = ""
    model: ModelFacts = ModelFacts()
    target: Target
    pte: Pte
    operators: list[Operator] = []
    fallbacks: list[str] = []
    inputs: list[TensorSpec] = []
    outputs: list[TensorSpec] = []
    memory: Memory
    program: Program = Program()
    calibration: Calibration | None = None
    quantization_error: QuantizationError | None = None
    reference: ReferenceCheck | None = None
    lowering_warnings: list[str] = []
    timings_s: dict[str, float] = {}  # seconds per lowering step (lower/lowering.STEPS); apps do not keep it
    lowering_options: LowerOptions = LowerOptions()
    rewrites: list[Rewrite] = []  # in graph order
    float_parts: list[FloatPart] = []  # what computes in float and why (float_islands.py), program order
    layers: list[LayerError] = []  # per-layer error against the float model (layer_error.py), program order
    instructions: list[Instruction] = []
    delegated_layers: list[DelegatedLayer] = []  # what cmx-gen's backend runs, in order
    schedules: list[Schedule] = []  # each delegate call's working memory, in order
    weight_choice: WeightChoice | None = None  # weights = "auto": which layers took int4 and why
    precision_choice: PrecisionChoice | None = None  # precision = "auto": which layers took int16 and why
    note: str = ""

    @classmethod
    def of(cls, data: Any, where: str = "report.json") -> Report:
        """`data` (a loaded report.json) as a Report if it is a cmx-gen lowering report of this schema,
        else a one-line error."""
        found = data.get("schema") if isinstance(data, dict) else None
        if found != SCHEMA:
            raise ModelSourceError(
                f"{where} is not a cmx-gen lowering report (schema {found!r}, expected {SCHEMA!r})",
                "pass the report.json written by `cmx-gen lower -o DIR`",
            )
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(part) for part in first["loc"])
            problem = f"lacks {field}" if first["type"] == "missing" else f"has a bad {field}: {first['msg']}"
            raise ModelSourceError(f"{where} {problem}", "re-run `cmx-gen lower` with this cmx-gen version") from exc

    def for_app(self, source: str) -> Report:
        """The report as an app keeps it: the same for the same inputs, so without the timings, and the
        model named as `source`."""
        kept = self.model_copy(update={"model": self.model.model_copy(update={"source": source})})
        return kept.without("timings_s")

    @property
    def source(self) -> str:
        return self.model.source


def load_json(path: Path) -> Report:
    """A report.json from disk, checked."""
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ModelSourceError(f"{path} is not valid JSON: {exc}", "re-run `cmx-gen lower`") from exc
    return Report.of(data, str(path))
