"""The lowering report, typed: `report.json` (stable keys, see docs/report.md) built or read once as
a `Report`. How it reads for people (the stdout table, report.md) is report_text.py."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Literal

from cmx_gen import __version__
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from cmx_gen.common.errors import ModelSourceError, StrictError
from cmx_gen.program.pte import ProgramInfo

SCHEMA = "cmx-gen/report/1"


def executorch_version() -> str:
    from importlib.metadata import version

    return version("executorch")


def build_report(
    info: ProgramInfo,
    target: dict[str, str],
    model: dict[str, Any],
    calibration: dict[str, Any] | None = None,
    quantization_error: dict[str, Any] | None = None,
    reference: dict[str, Any] | None = None,
    warnings: list[str] | None = None,
    timings: dict[str, float] | None = None,
    extra: dict[str, Any] | None = None,
) -> "Report":
    """Assemble report.json (`extra`: keys after the common ones, in order). Keys are documented in
    docs/report.md; add, never rename."""
    return Report.of({
        "schema": SCHEMA,
        "cmx_gen_version": __version__,
        "executorch_version": executorch_version(),
        "model": model,
        "target": target,
        "pte": {"bytes": info.pte_bytes, "constant_bytes": info.constant_bytes, "sha256": info.sha256},
        "operators": [op.to_dict() for op in info.operators],
        "fallbacks": info.fallbacks,
        "inputs": [spec.to_dict() for spec in info.inputs],
        "outputs": [spec.to_dict() for spec in info.outputs],
        "memory": {
            "planned_buffer_sizes": info.planned_buffer_sizes,
            "planned_bytes": info.planned_bytes,
            "scratch_bytes": info.scratch_bytes,
            "method_allocator_bytes": info.method_allocator_bytes,
            "method_allocator_is_estimate": False,
            "temp_allocator_bytes": info.temp_allocator_bytes,
        },
        "program": {"values": info.num_values, "instructions": info.num_instructions, "delegates": info.delegates},
        "calibration": calibration,
        "quantization_error": quantization_error,
        "reference": reference,
        "lowering_warnings": warnings or [],
        "timings_s": {k: round(v, 3) for k, v in (timings or {}).items()},
        **(extra or {}),
    }, "the lowering report")


def check_strict(report: "Report") -> None:
    """--strict / `strict = true`: refuse a program with portable compute fallbacks, naming them."""
    fallbacks = report.fallbacks
    if fallbacks:
        raise StrictError(
            f"{len(fallbacks)} compute op(s) fell back to portable kernels: {', '.join(fallbacks)}",
            "rewrite those layers with ops the cortex_m backend lowers (see report.md), or drop --strict / strict = true",
        )


def write_json(path: Path, report: "Report") -> None:
    path.write_text(json.dumps(report.to_dict(), indent=2, sort_keys=False) + "\n")


class _Part(BaseModel):
    # Keys are only ever added (docs/report.md): an older cmx-gen reads a newer report.
    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)


class Target(_Part):
    core: str = ""
    isa: str


class Pte(_Part):
    bytes: int
    constant_bytes: int = 0
    sha256: str = ""


class Operator(_Part):
    name: str
    count: int
    class_: str = Field(alias="class")  # op_classes.yaml: cmsis_nn, quant_boundary, data_movement, fallback


class Layer(_Part):
    """layer_error.LayerError as report.json holds it: one operator's error against the float model."""

    index: int
    node: str
    op: str
    module: str = ""
    source: str = ""
    kind: Literal["compared", "exact", "float", "quant_boundary", "no_float_counterpart"]
    sqnr_db: float | None = None
    max_abs_err: float | None = None
    sqnr_drop_db: float | None = None


class Quant(_Part):
    scale: float | None = None
    zero_point: int | None = 0
    at: str | None = None  # "io": the caller (de)quantizes (--io int8)


class TensorSpec(_Part):
    shape: list[int]
    dtype: str
    dim_order: list[int]
    quant: Quant | None = None

    @property
    def numel(self) -> int:
        count = 1
        for dim in self.shape:
            count *= int(dim)
        return count


class Memory(_Part):
    planned_buffer_sizes: list[int]
    planned_bytes: int = 0
    scratch_bytes: int = 0
    method_allocator_bytes: int
    method_allocator_is_estimate: bool = False
    temp_allocator_bytes: int


class Program(_Part):
    values: int = 0
    instructions: int = 0
    delegates: list[Any] = []


class InstructionOutput(_Part):
    """Where an instruction's output tensor lives in the planned memory, and what it is."""

    mem_id: int
    offset: int
    nbytes: int
    shape: list[int]
    dtype: str
    dim_order: list[int]
    reference: bool = False  # the host holds its expected bytes (model/trace_reference.bin)


class Instruction(_Part):
    """One row of the program's forward plan (instructions.py), named for people."""

    index: int
    op: str
    node: str = ""
    module: str = ""
    source: str = ""
    output: InstructionOutput | None = None

    @property
    def traced(self) -> bool:
        """The host holds this instruction's expected output bytes (model/trace_reference.bin)."""
        return bool(self.output and self.output.reference)


class ModelFacts(_Part):
    """Which model the program came from (`graph_sha256`: its exported graph, for a lowered model)."""

    source: str = "?"
    kind: str = ""
    content_sha256: str = ""
    graph_sha256: str = ""


class Calibration(_Part):
    source: str
    samples: int = 0
    random: bool = False  # --random-calibration: the INT8 accuracy is not representative


class QuantizationError(_Part):
    """The INT8 program against the float model (reference_check.quantization_error)."""

    max_abs_err: float
    sample_max_abs_err: float | None = None
    samples: int = 0
    top1_agreement: float | None = None  # classifiers: float and INT8 agree on the top class


class OpDiff(_Part):
    """reference.OpDiff as report.json holds it: where ExecuTorch's Python op and the CMSIS-NN
    kernel's host model disagree."""

    index: int
    node: str = ""
    op: str
    module: str = ""
    max_lsb: int
    elements: int
    numel: int
    source: str = ""


# What the firmware's outputs are compared with: the CMSIS-NN kernels' host models, a bundle's
# expected outputs, or nothing (the app reports RAN, never PASS).
CheckedAgainst = Literal["cmsis-nn", "bundle", "none"]


class ReferenceCheck(_Part):
    checked_against: CheckedAgainst
    description: str = ""
    tolerance: float | None = None  # a bundle's, in the outputs' own unit
    python_reference_max_lsb: int | None = None  # ExecuTorch's Python reference, LSB from the checked one
    python_reference_max_lsb_calibration: int | None = None
    ops: list[OpDiff] = []


class Rewrite(_Part):
    """exact_rewrites.Rewrite as report.json holds it."""

    node: str = ""
    op: str
    module: str = ""
    source: str = ""
    what: str


class DelegatedLayer(_Part):
    """A layer cmx-gen's CMSIS-NN backend runs (lower/delegate/backend.delegated_layers)."""

    delegate: int  # which delegate call of the program, in execution order
    debug: int  # the id the layer reports as in the profile (`cmx-gen: prof_layer <debug> <count>`)
    op: str  # the cortex_m operator it replaces
    kind: str = ""  # its plan layer kind (lower/delegate/plan.py OPS): what the runtime calls for it
    node: str = ""
    module: str = ""
    source: str = ""
    shape: list[int] = []  # its output, as it lies in the working memory
    dim_order: list[int] = []
    dtype: str = "int8"
    nbytes: int = 0
    traced: bool = False  # the host holds its expected output bytes (model/trace_reference.bin, after the instructions')


class Schedule(_Part):
    """One delegate call's working memory (lower/delegate/schedule.py): what it takes, what layer-by-
    layer execution would take, that execution's floor, and where the peak sits."""

    delegate: int
    goal: str = "balanced"  # the memory goal it was made for (lower/delegate/costs.py)
    work_bytes: int
    layer_by_layer_bytes: int
    floor_bytes: int  # the largest inputs + output of one layer: layer-by-layer's least
    floor_at: str = ""
    peak_bytes: int = 0  # the most bytes in use at one layer
    peak_at: str = ""
    written_over_input: int = 0  # layers whose output shares bytes with their input
    inputs_in_work: int = 0  # delegate inputs placed inside the working memory
    outputs_in_work: int = 0  # delegate outputs placed inside the working memory
    extra_instructions: int | None = 0  # estimated, against the fastest kernels (data/kernel_costs.yaml); None: not measured


class LoweringOptions(_Part):
    keep_fp32: list[str] = []
    io: Literal["float", "int8"] = "float"
    delegate: bool = True
    memory: Literal["fast", "balanced", "min"] = "balanced"


class Report(_Part):
    """report.json, typed: validated once when it is built or read, then passed around as is.

    `to_dict()` is the report exactly as written (key order and all), which is what report.json,
    the app's model/report.json and the templates' `cookiecutter.model` hold.
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
    lowering_options: LoweringOptions = LoweringOptions()
    rewrites: list[Rewrite] = []  # in graph order
    layers: list[Layer] = []  # per-layer error against the float model (layer_error.py), program order
    instructions: list[Instruction] = []
    delegated_layers: list[DelegatedLayer] = []  # what cmx-gen's backend runs, in order
    schedules: list[Schedule] = []  # each delegate call's working memory, in order
    note: str = ""
    _raw: dict[str, Any] = PrivateAttr(default_factory=dict)

    @classmethod
    def of(cls, data: Any, where: str = "report.json") -> "Report":
        """`data` as a Report if it is a cmx-gen lowering report of this schema, else a one-line error."""
        found = data.get("schema") if isinstance(data, dict) else None
        if found != SCHEMA:
            raise ModelSourceError(f"{where} is not a cmx-gen lowering report (schema {found!r}, expected {SCHEMA!r})",
                                   "pass the report.json written by `cmx-gen lower -o DIR`")
        try:
            report = cls.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(part) for part in first["loc"])
            problem = f"lacks {field}" if first["type"] == "missing" else f"has a bad {field}: {first['msg']}"
            raise ModelSourceError(f"{where} {problem}", "re-run `cmx-gen lower` with this cmx-gen version") from exc
        report._raw = copy.deepcopy(data)
        return report

    def to_dict(self) -> dict[str, Any]:
        return copy.deepcopy(self._raw)

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
