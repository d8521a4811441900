"""The lowering report: `report.json` (stable keys, see docs/report.md), `report.md`, and the stdout table."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Literal

from cmx_gen import __version__
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from cmx_gen.common.format import size
from cmx_gen.common.errors import ModelSourceError, StrictError
from cmx_gen.program.pte import ProgramInfo

SCHEMA = "cmx-gen/report/1"
CLASS_LABELS = {
    "cmsis_nn": "CMSIS-NN",
    "quant_boundary": "quant boundary",
    "data_movement": "portable data movement",
    "fallback": "PORTABLE FALLBACK",
}


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
        "operators": info.operators,
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


class Instruction(_Part):
    """One row of the program's forward plan (instructions.py), named for people."""

    index: int
    op: str
    node: str = ""
    module: str = ""
    source: str = ""
    output: dict[str, Any] | None = None  # mem_id, offset, nbytes, shape, dtype, dim_order, reference

    @property
    def traced(self) -> bool:
        """The host holds this instruction's expected output bytes (model/trace_reference.bin)."""
        return bool(self.output and self.output.get("reference"))


class Report(_Part):
    """report.json, typed: validated once when it is built or read, then passed around as is.

    `to_dict()` is the report exactly as written (key order and all), which is what report.json,
    the app's model/report.json and the templates' `cookiecutter.model` hold.
    """

    schema_: str = Field(alias="schema")
    cmx_gen_version: str = ""
    executorch_version: str = ""
    model: dict[str, Any] = {}
    target: Target
    pte: Pte
    operators: list[Operator] = []
    fallbacks: list[str] = []
    inputs: list[TensorSpec] = []
    outputs: list[TensorSpec] = []
    memory: Memory
    program: Program = Program()
    calibration: dict[str, Any] | None = None
    quantization_error: dict[str, Any] | None = None
    reference: dict[str, Any] | None = None
    lowering_warnings: list[str] = []
    lowering_options: dict[str, Any] = {}
    rewrites: list[dict[str, Any]] = []  # exact_rewrites.Rewrite.to_dict(), in graph order
    layers: list[Layer] = []  # per-layer error against the float model (layer_error.py), program order
    instructions: list[Instruction] = []
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
        return str(self.model.get("source", "?"))


def load_json(path: Path) -> Report:
    """A report.json from disk, checked."""
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ModelSourceError(f"{path} is not valid JSON: {exc}", "re-run `cmx-gen lower`") from exc
    return Report.of(data, str(path))


def _spec_line(spec: TensorSpec) -> str:
    text = f"{spec.dtype}{list(spec.shape)} dim_order={spec.dim_order}"
    q = spec.quant
    if q:
        kind = "int8 I/O (--io int8): real = scale * (q - zero_point)," if q.at == "io" else "int8"
        text += f" {kind} scale={q.scale:.6g} zero_point={q.zero_point}"
    return text


def table(report: Report) -> str:
    """The plain-text summary printed on stdout."""
    mem = report.memory
    lines = [
        f"model      {report.source}",
        f"target     {report.target.core} ({report.target.isa})   executorch {report.executorch_version}",
        f".pte       {size(report.pte.bytes)} (weights/constants {size(report.pte.constant_bytes)})",
        f"memory     planned {size(mem.planned_bytes)} (largest CMSIS-NN scratch {size(mem.scratch_bytes)}), "
        f"method allocator {size(mem.method_allocator_bytes)}, temp {size(mem.temp_allocator_bytes)}",
    ]
    for i, spec in enumerate(report.inputs):
        lines.append(f"input {i}    {_spec_line(spec)}")
    for i, spec in enumerate(report.outputs):
        lines.append(f"output {i}   {_spec_line(spec)}")
    lines.append("")
    width = max((len(op.name) for op in report.operators), default=10)
    lines.append(f"{'operator':<{width}}  {'nodes':>5}  kernel")
    for op in report.operators:
        lines.append(f"{op.name:<{width}}  {op.count:>5}  {CLASS_LABELS[op.class_]}")
    compute = [op for op in report.operators if op.class_ in ("cmsis_nn", "fallback")]
    accelerated = sum(op.count for op in compute if op.class_ == "cmsis_nn")
    total = sum(op.count for op in compute)
    lines.append("")
    lines.append(f"compute    {accelerated}/{total} nodes on CMSIS-NN" + (f"; fallbacks: {', '.join(report.fallbacks)}" if report.fallbacks else ""))
    qe = report.quantization_error
    if qe:
        text = f"int8 error max |float - int8| = {qe['max_abs_err']:.4g} over {qe['samples']} inputs"
        if qe.get("top1_agreement") is not None:
            text += f", top-1 agreement {qe['top1_agreement'] * 100:.1f} %"
        lines.append(text)
    cal = report.calibration
    if cal:
        lines.append(f"calibrated {cal['source']}" + ("  ** RANDOM: accuracy not representative **" if cal.get("random") else ""))
    for rewrite in report.rewrites:
        lines.append(f"rewrite    {describe_rewrite(rewrite)}")
    worst = worst_layers(report)
    if worst:
        lines.append("worst layers (SQNR against the float model, calibration inputs; what each layer loses):")
        lines += [f"  {describe_layer(layer)}" for layer in worst]
    note = reference_note(report)
    if note:
        lines.append(f"reference  {note}")
    return "\n".join(lines)


def worst_layers(report: Report, count: int = 5) -> list[Layer]:
    """The `count` layers that lose the most SQNR, worst first (the inputs' quantization has no
    input to lose against: report.json has its SQNR)."""
    ranked = [layer for layer in report.layers if layer.sqnr_drop_db is not None]
    return sorted(ranked, key=lambda layer: layer.sqnr_drop_db or 0.0, reverse=True)[:count]


def _where(module: str, source: str | None) -> str:
    """`features.3, model.py:17 x = ...`: the module path, and the user's line where known."""
    return f"{module}, {source}" if source else module


def describe_layer(layer: Layer) -> str:
    """`loses 4.2 dB, 23.9 dB after it, max 0.79  op #9 cortex_m::quantized_conv2d (blocks.3, model.py:59 ...)`."""
    return (f"loses {layer.sqnr_drop_db:4.1f} dB, {layer.sqnr_db:5.1f} dB after it, max {layer.max_abs_err:.3g}  "
            f"op #{layer.index} {layer.op} ({_where(layer.module, layer.source)})")


def describe_rewrite(rewrite: dict[str, Any]) -> str:
    """`aten::conv_transpose2d (up, model.py:9 ...): stride [2, 2] with padding [1, 1]: ...`."""
    return f"{rewrite['op']} ({_where(rewrite['module'], rewrite.get('source'))}): {rewrite['what']}"


def describe_op_diff(op: dict[str, Any]) -> str:
    """`op #8 cortex_m::quantized_avg_pool2d (Residual, model.py:17 ...): 1 LSB on 13/256 elements`."""
    where = _where(op["module"], op.get("source"))
    return f"op #{op['index']} {op['op']} ({where}): {op['max_lsb']} LSB on {op['elements']}/{op['numel']} elements"


def reference_note(report: Report) -> str | None:
    """One line when ExecuTorch's Python reference differs from the CMSIS-NN kernels' result, which
    is what the firmware is checked against (reference.py); None when they agree."""
    ref = report.reference
    if ref and ref.get("checked_against") == "bundle":
        return f"checked against {ref['description']}"
    if ref and ref.get("checked_against") == "none":
        return "no reference: " + ref["description"] + "; RAN is not a PASS, nothing was compared"
    if ref and ref.get("python_reference_max_lsb") is None and ref.get("description"):
        return ref["description"] + "; PASS means bit-exact against the CMSIS-NN kernels"
    if not ref or not (ref.get("ops") or ref.get("python_reference_max_lsb_calibration")):
        return None
    ops = [describe_op_diff(op) for op in ref.get("ops", [])]
    first = f"first at {ops[0]}" if ops else "at no single op"
    more = f" (+{len(ops) - 1} more op(s) in report.json)" if len(ops) > 1 else ""
    return (f"ExecuTorch's Python reference differs from the CMSIS-NN kernels by {ref['python_reference_max_lsb']} LSB "
            f"at the output ({ref['python_reference_max_lsb_calibration']} LSB over the calibration inputs), "
            f"{first}{more}; PASS means bit-exact against the CMSIS-NN kernels")


def markdown(report: Report) -> str:
    """report.md: the same facts for people, as Markdown tables."""
    mem = report.memory
    out = [
        f"# cmx-gen report: {report.source}",
        "",
        f"- target: **{report.target.core}** ({report.target.isa}), executorch {report.executorch_version}, cmx-gen {report.cmx_gen_version}",
        f"- `.pte`: {report.pte.bytes:,} bytes, of which constants {report.pte.constant_bytes:,}",
        f"- planned buffers: {mem.planned_buffer_sizes} = {mem.planned_bytes:,} bytes (largest CMSIS-NN scratch {mem.scratch_bytes:,})",
        f"- method allocator: {mem.method_allocator_bytes:,} bytes (exact for 32-bit Arm); temp allocator: {mem.temp_allocator_bytes:,} bytes",
        "",
        "## Operators",
        "",
        "| operator | nodes | kernel |",
        "| --- | ---: | --- |",
    ]
    out += [f"| `{op.name}` | {op.count} | {CLASS_LABELS[op.class_]} |" for op in report.operators]
    out += ["", "## Inputs and outputs", "", "| tensor | spec |", "| --- | --- |"]
    out += [f"| input {i} | {_spec_line(s)} |" for i, s in enumerate(report.inputs)]
    out += [f"| output {i} | {_spec_line(s)} |" for i, s in enumerate(report.outputs)]
    qe, cal = report.quantization_error, report.calibration
    if qe or cal:
        out += ["", "## Quantization", ""]
    if cal:
        out.append(f"- calibration: {cal['source']}" + (" — **random data: INT8 accuracy is not representative**" if cal.get("random") else ""))
    if qe:
        out.append(f"- max abs error float vs INT8: {qe['max_abs_err']} over {qe['samples']} inputs")
        if qe.get("top1_agreement") is not None:
            out.append(f"- top-1 agreement float vs INT8: {qe['top1_agreement'] * 100:.1f} %")
    ref = report.reference
    if ref:
        out += ["", "## Reference", "",
                f"- the firmware is checked bit-exact against: {ref['description']}",
                (f"- ExecuTorch's Python reference differs from it by {ref['python_reference_max_lsb']} LSB at the output "
                 f"({ref['python_reference_max_lsb_calibration']} LSB over the calibration inputs)"
                 if ref.get("python_reference_max_lsb") is not None else "- ExecuTorch's Python reference cannot run it")]
        out += [f"- {describe_op_diff(op)}" for op in ref.get("ops", [])]
    if report.rewrites:
        out += ["", "## Exact rewrites", "", "Rewritten before quantizing, so that they stay on CMSIS-NN; the reference "
                "is computed from the rewritten program, so PASS stays bit-exact:", ""]
        out += [f"- {describe_rewrite(r)}" for r in report.rewrites]
    if report.fallbacks:
        out += ["", "## Fallbacks", "", "These compute ops run on portable (unaccelerated) kernels:", ""]
        out += [f"- `{name}`" for name in report.fallbacks]
    if report.lowering_warnings:
        out += ["", "## Lowering warnings", ""] + [f"- {w}" for w in report.lowering_warnings]
    return "\n".join(out) + "\n"
