"""The lowering outputs as one object: `.pte`, report and reference, and their folder on disk.

`cmx-gen lower` writes them; `check`, `create` and the cache read them back, so a folder written
by `lower -o DIR` can be handed to any later step.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from cmx_gen.common.errors import ModelSourceError
from cmx_gen.lower.facts import LowerOptions, PrecisionChoice, Target, WeightChoice
from cmx_gen.model import bundle
from cmx_gen.program import report as report_mod
from cmx_gen.program.pte import ProgramInfo, Quant, TensorSpec
from cmx_gen.program.report import Calibration, ModelFacts, ReferenceCheck, Report
from cmx_gen.program.report_text import markdown

if TYPE_CHECKING:  # lowering, reference and the model sources import torch: only produce() needs them
    from cmx_gen.lower.rewrites.int8_io import QParams
    from cmx_gen.model.export import Exported
    from cmx_gen.model.source import ModelSource

PTE, REPORT_JSON, REPORT_MD, REFERENCE = "model.pte", "report.json", "report.md", "reference.npz"


@dataclass(frozen=True)
class Artifacts:
    pte: bytes
    report: Report
    reference: dict[str, NDArray[Any]]  # empty for an analysed-only .pte

    def write(self, out_dir: Path) -> list[Path]:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / PTE).write_bytes(self.pte)
        report_mod.write_json(out_dir / REPORT_JSON, self.report)
        (out_dir / REPORT_MD).write_text(markdown(self.report))
        written = [out_dir / PTE, out_dir / REPORT_JSON, out_dir / REPORT_MD]
        if self.reference:
            write_reference(out_dir / REFERENCE, self.reference)
            written.append(out_dir / REFERENCE)
        return written


def read(out_dir: Path) -> Artifacts:
    """Read a folder written by `cmx-gen lower -o DIR`."""
    if not (out_dir / REPORT_JSON).is_file() or not (out_dir / PTE).is_file():
        raise ModelSourceError(f"{out_dir} holds no lowering outputs", f"run `cmx-gen lower MODEL -o {out_dir}` first")
    reference = load_reference(out_dir / REFERENCE) if (out_dir / REFERENCE).is_file() else {}
    return Artifacts((out_dir / PTE).read_bytes(), report_mod.load_json(out_dir / REPORT_JSON), reference)


def write_reference(path: Path, arrays: dict[str, NDArray[Any]]) -> None:
    """reference.npz (docs/report.md). np.savez with a fixed zip timestamp would still embed one;
    arrays are written sorted for stable bytes."""
    with path.open("wb") as handle:
        np.savez(handle, **dict(sorted(arrays.items())))


def load_reference(path: Path) -> dict[str, NDArray[Any]]:
    with np.load(path) as npz:
        return {key: npz[key] for key in npz.files}


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextmanager
def _collect_backend_warnings() -> Iterator[list[str]]:
    """Keep the cortex_m passes' warnings (e.g. an activation that could not be fused) for the report.

    They matter for performance but drown the progress lines on a terminal; the generic
    executorch deprecation chatter is dropped.
    """
    backend = logging.getLogger("executorch.backends.cortex_m")
    generic = logging.getLogger("executorch.exir")
    handler = _Collect()
    saved = (backend.propagate, generic.level)
    backend.addHandler(handler)
    backend.propagate = False
    generic.setLevel(logging.ERROR)
    try:
        yield handler.messages
    finally:
        backend.removeHandler(handler)
        backend.propagate, _ = saved
        generic.setLevel(saved[1])


def output_step(spec: TensorSpec) -> float:
    """One LSB of an output in its own unit: the scale of a float output behind a dequantize, 1 for
    an integer output (--io int8), 0 when unknown."""
    if spec.dtype.startswith(("int", "uint")):
        return 1.0
    return float((spec.quant.scale if spec.quant else None) or 0.0)


def generated_inputs(specs: list[TensorSpec]) -> dict[str, NDArray[Any]]:
    """A seeded input for a program that comes without one: uniform [-1, 1) floats, or integers over
    the dtype's range, in the logical shape."""
    rng = np.random.default_rng(0)
    arrays = {}
    for i, spec in enumerate(specs):
        dtype = np.dtype(spec.dtype)
        if dtype.kind == "f":
            arrays[f"input_{i}"] = (rng.random(spec.shape) * 2 - 1).astype(dtype)
        else:
            info = np.iinfo(dtype) if dtype.kind in "iu" else None
            low, high = (info.min, info.max) if info else (0, 1)
            arrays[f"input_{i}"] = rng.integers(low, high, size=spec.shape, endpoint=True).astype(dtype)
    return arrays


def _given_inputs(given: list[NDArray[Any]], specs: list[TensorSpec]) -> dict[str, NDArray[Any]]:
    """--input's arrays as the program's inputs: one per input, of its shape, in its dtype."""
    if len(given) != len(specs):
        raise ModelSourceError(
            f"--input holds {len(given)} arrays, the program takes {len(specs)} inputs",
            "store one array per program input (np.savez(path, a, b))",
        )
    arrays = {}
    for i, (array, spec) in enumerate(zip(given, specs)):
        if list(array.shape) != list(spec.shape):
            raise ModelSourceError(
                f"--input array {i} has shape {list(array.shape)}, the program's input {i} is {list(spec.shape)}",
                "give arrays in the program's input shapes (logical, NCHW)",
            )
        arrays[f"input_{i}"] = array.astype(np.dtype(spec.dtype))
    return arrays


def _plan_reference(
    pte: bytes, info: ProgramInfo, isa: str, where: str, given: list[NDArray[Any]] | None
) -> tuple[dict[str, NDArray[Any]], str, ReferenceCheck]:
    """A .pte's reference: its own plan run on the host on the given (--input) or a generated input
    (plan_reference.py), bit-exact like a lowered model's; without a host model for every call,
    none, and the app says RAN."""
    from cmx_gen.lower.host_models.kernel_models import ISA_DEPENDENT
    from cmx_gen.program import plan_reference

    reference = generated_inputs(info.inputs) if given is None else _given_inputs(given, info.inputs)
    try:
        if isa == "unknown":
            dependent = sorted({op.name.split(".")[0] for op in info.operators} & ISA_DEPENDENT)
            if dependent:
                raise plan_reference.NoHostModel(f"{', '.join(dependent)} without the target's ISA (pass --target)")
        outputs = plan_reference.reference(pte, [reference[f"input_{i}"] for i in range(len(info.inputs))], isa)
    except plan_reference.NoHostModel as exc:
        note = f"analysed a .pte lowered elsewhere: {where}no reference outputs (the app runs and says so)"
        return (
            reference,
            note,
            ReferenceCheck(
                checked_against="none",
                description=f"no host model computes {exc}, so this .pte has no reference: the firmware runs "
                f"it on its {'--input' if given is not None else 'generated input'} and reports RAN",
            ),
        )
    reference.update({f"output_{i}": y for i, y in enumerate(outputs)})
    note = f"a .pte lowered elsewhere: {where}reference outputs computed on the host from the program's own plan"
    float_program = not info.delegates and not any(op.name.startswith("cortex_m::") for op in info.operators)
    how = (
        "a float program: its operators computed by torch in float32 on the host, which the target's float "
        "kernels may round differently (max_abs_err then says by how much)"
        if float_program
        else "with bit-exact host models of the CMSIS-NN C kernels (ExecuTorch's Python ops where they agree)"
    )
    return (
        reference,
        note,
        ReferenceCheck(
            checked_against="cmsis-nn",
            description="the program's own plan run on the host on its check input ("
            f"{'--input' if given is not None else 'generated'}), {how}",
        ),
    )


def _with_io_quant(specs: list[TensorSpec], quants: list[QParams]) -> list[TensorSpec]:
    """The program's I/O specs with the quantization the caller applies (--io int8), where there is one."""
    return [
        spec.model_copy(update={"quant": Quant(scale=quants[i].scale, zero_point=quants[i].zero_point, at="io")})
        if i < len(quants)
        else spec
        for i, spec in enumerate(specs)
    ]


def _model_facts(source: ModelSource, graph_sha256: str | None = None) -> ModelFacts:
    """The model's source and hashes; a lowered model's exported graph's too (the files' hash cannot
    tell two models of one file apart)."""
    facts = ModelFacts(source=source.spec, kind=source.kind, content_sha256=source.content_hash)
    return facts if graph_sha256 is None else facts.model_copy(update={"graph_sha256": graph_sha256})


def _refuse_other_isa(info: ProgramInfo, target: Target) -> None:
    """A program whose linear layers were lowered for another ISA than the target's computes wrong
    (an MVE program on a DSP core drops every bias) or stops (the reverse: ARG_ERROR): refused."""
    built = info.linear_lowered_for
    if built is None or target.isa == "unknown" or (built == "MVE") == (target.isa == "MVE"):
        return
    reads = (
        "a kernel sum in place of its bias, which only the Helium kernel reads: on this core every "
        "linear layer would lose its bias and input offset"
        if built == "MVE"
        else "a bias and no kernel sum, and the Helium kernel needs the kernel sum: it would stop (ARG_ERROR)"
    )
    raise ModelSourceError(
        f"this program was lowered for {'an MVE core' if built == 'MVE' else 'a core without MVE'} and the "
        f"target is {target.core} ({target.isa}): its cortex_m::quantized_linear carries {reads}",
        f"lower it again for {target.core} (aot_arm_compiler --target={target.core}), or give cmx-gen the model "
        "itself and it lowers for the board",
    )


def analyse_pte(source: ModelSource, core: str) -> Artifacts:
    """A program lowered elsewhere (.pte, .bpte): its facts, and a reference where one can be had."""
    from cmx_gen.lower.lowering import resolve_target
    from cmx_gen.program import instructions
    from cmx_gen.program.pte import analyse

    model = _model_facts(source)
    assert source.pte is not None
    info = analyse(source.pte)
    # A .pte does not say which core it was lowered for (scratch sizes depend on the ISA):
    # the user's --target (create: the board's core) is taken at its word, else it stays unknown.
    target = resolve_target(core) if core else Target(core="unknown", isa="unknown")
    _refuse_other_isa(info, target)
    where = "target as given; " if core else "target ISA not known (pass --target); "
    if source.kind == "bpte":
        found = source.bundle
        reference = {f"input_{i}": x for i, x in enumerate(found.inputs)}
        reference.update({f"output_{i}": y for i, y in enumerate(found.outputs)})
        note = f"a bundled program lowered elsewhere: {where}checked against the bundle's expected outputs"
        checked = ReferenceCheck(
            checked_against="bundle",
            tolerance=found.tolerance(),
            description="the bundle's expected outputs: bit-exact where integer, else within "
            f"BundleIO's atol {bundle.ATOL} + rtol {bundle.RTOL} x |expected|",
        )
    else:
        reference, note, checked = _plan_reference(source.pte, info, target.isa, where, source.given_inputs)
    report = report_mod.build_report(
        info, target, model, reference=checked, instructions=instructions.describe(info.instructions, {}), note=note
    )
    return Artifacts(source.pte, report, reference)


def lower_model(exported: Exported, core: str, options: LowerOptions | None = None) -> Artifacts:
    """Lower an exported model for `core` and assemble its report and reference."""
    from cmx_gen.lower.lowering import lower
    from cmx_gen.lower.state import Delegated, Errors, Floats, Lowered, Referenced, Rewritten, Serialized
    from cmx_gen.program import instructions
    from cmx_gen.program.pte import analyse
    from cmx_gen.program.reference_check import compare_references, quantization_error, reference_arrays

    options = options or LowerOptions()
    source = exported.source
    model = _model_facts(source, exported.graph_sha256)
    with _collect_backend_warnings() as warnings:
        resolved, choice = _weights(exported, core, options)
        resolved, precision = _precision(exported, core, resolved)
        lowered = lower(exported, core, resolved)
    io, delegated = lowered.get(Lowered).io, lowered.get(Delegated)
    names, values = lowered.get(Serialized).instruction_names, lowered.get(Referenced).runs.values
    info = analyse(lowered.pte)
    if io:  # int8 I/O: the quantization the caller applies is not in the program any more
        info = replace(
            info, inputs=_with_io_quant(info.inputs, io.inputs), outputs=_with_io_quant(info.outputs, io.outputs)
        )
    calibration = Calibration(
        source=source.calibration_source, samples=len(source.calibration), random=source.random_calibration
    )
    traced = instructions.trace_arrays(info.instructions, names, values)
    rows = instructions.describe(info.instructions, names, set(traced))
    reference = reference_arrays(lowered)
    reference.update({f"{instructions.TRACE_PREFIX}{index}": data for index, data in traced.items()})
    traced_layers = instructions.layer_trace_arrays(delegated.layers, values)
    reference.update({f"{instructions.LAYER_TRACE_PREFIX}{debug}": data for debug, data in traced_layers.items()})
    layers = [layer.model_copy(update={"traced": layer.debug in traced_layers}) for layer in delegated.layers]
    report = report_mod.build_report(
        info,
        lowered.target,
        model,
        calibration=calibration,
        quantization_error=quantization_error(lowered),
        reference=compare_references(lowered, [output_step(spec) for spec in info.outputs]),
        warnings=sorted(set(warnings)),
        timings=lowered.timings,
        lowering_options=options,
        rewrites=list(lowered.get(Rewritten).rewrites),
        float_parts=list(lowered.get(Floats).parts),
        layers=list(lowered.get(Errors).layers),
        instructions=rows,
        delegated_layers=layers,
        schedules=list(delegated.schedules),
        parts={**lowered.report_parts(), **{c.key: c for c in (choice, precision) if c is not None}},
    )
    return Artifacts(lowered.pte, report, reference)


def _weights(exported: Exported, core: str, options: LowerOptions) -> tuple[LowerOptions, WeightChoice | None]:
    """The options a lowering takes: `weights = "auto"` resolved to the int4 layers it chooses
    (lower/weight_choice.py), the record of that choice for the report; else the options as given."""
    if options.weights != "auto":
        return options, None
    from cmx_gen.lower import weight_choice

    return weight_choice.resolve(exported, core, options)


def _precision(exported: Exported, core: str, options: LowerOptions) -> tuple[LowerOptions, PrecisionChoice | None]:
    """`precision = "auto"` resolved to the int16 layers it chooses (lower/precision_choice.py), after the
    weights are, and the record of that choice; else the options as given."""
    if options.precision != "auto":
        return options, None
    from cmx_gen.lower import precision_choice

    return precision_choice.resolve(exported, core, options)
