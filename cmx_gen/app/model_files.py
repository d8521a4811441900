"""The generated model/ folder of an app: the program, its embedding, the plan and the reference.

Same files for the bare-metal and the Zephyr app (see docs/architecture.md). Every file is a pure
function of (pte, report, reference, placement, section): the bytes are deterministic so `regen` can tell a
user edit from a stale file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from cmx_gen.app.c_templates import render
from cmx_gen.app.shared_files import app_files, c_name, handle_symbol
from cmx_gen.common.dim_order import to_layout
from cmx_gen.common.errors import RenderError
from cmx_gen.program.report import Report, TensorSpec

if TYPE_CHECKING:
    from cmx_gen.fit.boards import ModelSlot
    from cmx_gen.fit.memory import Placement

# ExecuTorch ScalarType codes (runtime/core/portable_type/scalar_type.h) by numpy dtype.
SCALAR_TYPES: dict[str, int] = {
    "uint8": 0,
    "int8": 1,
    "int16": 2,
    "int32": 3,
    "int64": 4,
    "float16": 5,
    "float32": 6,
    "float64": 7,
    "bool": 11,
}


def _round16(n: int) -> int:
    return (n + 15) // 16 * 16


@dataclass(frozen=True)
class TensorRef:
    """One reference tensor as cmx_model_io.c declares it (its bytes, laid out as the program reads them)."""

    name: str
    data: bytes
    numel: int
    dtype: int  # executorch ScalarType
    scale: float  # the check's error unit: the output's quantization step (0: its own unit)
    zero_point: int

    @property
    def scale_c(self) -> str:
        """`scale` as a C float literal."""
        return _float(self.scale)

    @property
    def rows(self) -> list[str]:
        """The bytes as hex literals, 16 a row (one 0x00 for an empty tensor: C has no empty arrays)."""
        rows = [", ".join(f"0x{b:02x}" for b in self.data[i : i + 16]) for i in range(0, len(self.data), 16)]
        return rows or ["0x00"]


def _tolerance(outputs: list[tuple[NDArray[Any], float]]) -> float:
    """0 for integer outputs (bit-exact); float outputs with a scale allow float rounding noise only."""
    tol = 0.0
    for array, scale in outputs:
        if array.dtype.kind == "f":
            tol = max(tol, 0.01 if scale > 0 else 1e-4)
    return tol


def trace_outputs(report: Report) -> str:
    """{mem_id, offset, bytes} of each instruction's output for the on-target trace; mem_id 0 where
    the host has no value to compare with (views, non-tensors): the trace skips those."""
    rows = []
    for row in report.instructions:
        out = row.output
        rows.append(f"{{{out.mem_id}u, {out.offset}u, {out.nbytes}u}}" if out and row.traced else "{0u, 0u, 0u}")
    return "{" + ", ".join(rows or ["{0u, 0u, 0u}"]) + "}"


def trace_reference(report: Report, reference: Mapping[str, NDArray[Any]]) -> bytes:
    """model/trace_reference.bin: the expected output bytes of every traced instruction, in order,
    then those of every traced layer of cmx-gen's backend."""
    from cmx_gen.program.instructions import LAYER_TRACE_PREFIX, TRACE_PREFIX

    rows = b"".join(
        np.asarray(reference[f"{TRACE_PREFIX}{row.index}"]).tobytes() for row in report.instructions if row.traced
    )
    return rows + b"".join(
        np.asarray(reference[f"{LAYER_TRACE_PREFIX}{layer.debug}"]).tobytes()
        for layer in report.delegated_layers
        if layer.traced
    )


def io_quant(report: Report) -> list[tuple[str, str, int]]:
    """The I/O quantization, for the code around the model: with --io int8 the program takes and
    returns int8 (`real = scale * (q - zero_point)`); otherwise the parameters the program's own
    boundary quantize/dequantize apply, for reference. (macro name, scale literal, zero point) each."""
    found = []
    for side in ("inputs", "outputs"):
        for i, spec in enumerate(getattr(report, side)):
            quant = spec.quant
            if quant and quant.scale is not None:
                found.append((f"CMX_{side[:-1].upper()}_{i}", _float(quant.scale), int(quant.zero_point or 0)))
    return found


def _float(value: float) -> str:
    """A C float literal of `value` as float32 holds it (`0.0123f`)."""
    return f"{np.float32(value).item()!r}f"


@dataclass(frozen=True)
class Symbols:
    """A model's link-time names. One model keeps the historic ones; in an image of several each
    model's program and reference tensors carry its name (`cmx_digits_pte`)."""

    pte: str = "cmx_model_pte"
    inputs: str = "cmx_inputs"
    outputs: str = "cmx_outputs"

    @classmethod
    def of(cls, name: str) -> Symbols:
        c = c_name(name)
        return cls(f"cmx_{c}_pte", f"cmx_{c}_inputs", f"cmx_{c}_outputs")


@dataclass(frozen=True)
class Pools:
    """One model's pools as its cmx_model.h sizes them (the placement's numbers)."""

    method_pool_bytes: int
    temp_pool_bytes: int
    shared: bool = False  # planned buffers and temp pool are the image's (model/cmx_shared_pools.c)


def io_quant_of(specs: list[TensorSpec], index: int) -> tuple[float, int, float]:
    """(scale, zero_point, 1/scale) as float32 holds them where input/output `index` is int8 at the
    program's boundary (--io int8), else zeros. 1/scale is rounded once, as torch's
    quantize_per_tensor multiplies by it."""
    quant = specs[index].quant if index < len(specs) else None
    if quant is None or quant.at != "io" or quant.scale is None:
        return 0.0, 0, 0.0
    return np.float32(quant.scale).item(), int(quant.zero_point or 0), np.float32(1.0 / float(quant.scale)).item()


def _quant_table(specs: list[TensorSpec], count: int) -> str:
    """{scale, zero_point, 1/scale} per input/output where the program takes or returns int8 (--io int8)."""
    rows = []
    for i in range(max(count, 1)):
        scale, zero_point, inverse = io_quant_of(specs, i)
        rows.append(f"{{{scale!r}f, {zero_point}, {inverse!r}f}}" if scale else "{0.0f, 0, 0.0f}")
    return "{" + ", ".join(rows) + "}"


def model_header(
    report: Report,
    pools: Pools,
    n_in: int,
    n_out: int,
    tolerance: float,
    name: str = "model",
    has_reference: bool = True,
    symbols: Symbols = Symbols(),
    slots: Sequence[ModelSlot] = (),
) -> str:
    """cmx_model.h: the pools as the placement sized them, each planned buffer at the program's own
    size (the placement's are 16-byte aligned: the runner aligns each one itself)."""
    planned = list(report.memory.planned_buffer_sizes)
    temp = pools.temp_pool_bytes
    method_bytes = pools.method_pool_bytes
    target = report.target
    return render(
        "cmx_model.h",
        core=target.core,
        isa=target.isa,
        executorch_version=report.executorch_version,
        name=name,
        handle=handle_symbol(name),
        symbols=symbols,
        method_bytes=method_bytes,
        planned_count=len(planned),
        planned_sizes="{" + ", ".join(f"{s}u" for s in planned) + "}",
        planned_pool_bytes=sum(_round16(s) for s in planned),
        temp_bytes=temp,
        shared=pools.shared,
        n_in=n_in,
        n_out=n_out,
        tolerance=repr(tolerance),
        has_reference=int(has_reference),
        bundle=int(is_bundle(report)),
        io_quant=io_quant(report),
        io_int8=int(any(s.quant is not None and s.quant.at == "io" for s in report.inputs)),
        input_quant=_quant_table(report.inputs, n_in),
        output_quant=_quant_table(report.outputs, n_out),
        instructions=max(len(report.instructions), 1),
        delegated_layers=len(report.delegated_layers),
        trace_outputs=trace_outputs(report),
        slots=list(slots),
    )


def is_bundle(report: Report) -> bool:
    return bool(report.reference and report.reference.checked_against == "bundle")


def tensor_refs(
    prefix: str, arrays: list[NDArray[Any]], specs: list[TensorSpec], own_unit: bool = False
) -> tuple[list[TensorRef], list[float]]:
    refs: list[TensorRef] = []
    scales: list[float] = []
    for i, array in enumerate(arrays):
        spec = specs[i] if i < len(specs) else None
        laid = to_layout(array, spec.dim_order if spec else None)
        dtype = laid.dtype.name
        if dtype not in SCALAR_TYPES:
            raise RenderError(
                f"{prefix} {i} has dtype {dtype}, which the runner cannot compare",
                "use float32 or integer model inputs/outputs",
            )
        # Float tensors behind a (de)quantize: errors in steps of its scale. int8 tensors (--io int8)
        # are compared in their own integer steps, which are the LSB. A bundle's outputs are checked
        # in their own unit, as BundleIO does.
        quant = spec.quant if spec is not None and laid.dtype.kind == "f" and not own_unit else None
        scale = float(quant.scale or 0.0) if quant else 0.0
        zp = int(quant.zero_point or 0) if quant else 0
        scales.append(scale)
        refs.append(TensorRef(f"cmx_{prefix}_{i}", laid.tobytes(), int(laid.size), SCALAR_TYPES[dtype], scale, zp))
    return refs, scales


def ordered_reference(reference: Mapping[str, NDArray[Any]]) -> tuple[list[NDArray[Any]], list[NDArray[Any]]]:
    """The reference's inputs and outputs, each in index order (`input_0`, `input_1`, ...)."""

    def ordered(prefix: str) -> list[NDArray[Any]]:
        keys = sorted((k for k in reference if k.startswith(prefix)), key=lambda k: int(k.split("_")[1]))
        return [np.asarray(reference[k]) for k in keys]

    return ordered("input_"), ordered("output_")


def tolerance_of(reference: Mapping[str, NDArray[Any]], report: Report) -> float:
    """The check's largest accepted error: 0 (bit-exact) unless the outputs say otherwise, or a
    bundle's own tolerance, in the outputs' unit."""
    if report.reference is not None and is_bundle(report):
        return float(report.reference.tolerance or 0.0)  # BundleIO's, in the outputs' own unit
    _, outputs = ordered_reference(reference)
    has_reference = bool(outputs) and len(outputs) == len(report.outputs)
    _, scales = tensor_refs("output", outputs if has_reference else [], report.outputs)
    return _tolerance(list(zip(outputs, scales)))


def model_io_source(
    reference: Mapping[str, NDArray[Any]], report: Report, symbols: Symbols = Symbols()
) -> tuple[str, int, int, float, bool]:
    """cmx_model_io.c: the reference input(s) and, when known, the expected output(s); the I/O
    counts (the program's), the tolerance and whether the outputs are known."""
    inputs, outputs = ordered_reference(reference)
    has_reference = bool(outputs) and len(outputs) == len(report.outputs)
    in_refs, _ = tensor_refs("input", inputs, report.inputs)
    out_refs, _ = tensor_refs("output", outputs if has_reference else [], report.outputs, own_unit=is_bundle(report))
    text = render("cmx_model_io.c", inputs=in_refs, outputs=out_refs, symbols=symbols)
    return text, len(report.inputs), len(report.outputs), tolerance_of(reference, report), has_reference


def pte_asm(section: str, symbol: str = "cmx_model_pte") -> str:
    """model_pte.S: model.pte embedded with .incbin, aligned, between `symbol` and `symbol`_end."""
    return render("model_pte.S", section=section, symbol=symbol)


def model_files(
    pte: bytes,
    report: Report,
    reference: Mapping[str, NDArray[Any]],
    pools: Pools,
    pte_section: str,
    name: str,
    symbols: Symbols = Symbols(),
) -> dict[str, bytes]:
    """One model's files: model.pte, model_pte.S, cmx_model.h, cmx_model_io.c, and the host-side
    trace_reference.bin and reference_output_<i>.bin."""
    io_text, n_in, n_out, tol, has_reference = model_io_source(reference, report, symbols)
    files: dict[str, bytes] = {
        "model.pte": bytes(pte),
        "model_pte.S": pte_asm(pte_section, symbols.pte).encode(),
        "cmx_model.h": model_header(report, pools, n_in, n_out, tol, name, has_reference, symbols).encode(),
        "cmx_model_io.c": io_text.encode(),
        # host side of `cmx-gen run --trace`; not built into the firmware
        "trace_reference.bin": trace_reference(report, reference),
    }
    # host side of `cmx-gen run --app`: the check's expected output bytes, as the firmware lays them out
    for i, spec in enumerate(report.outputs):
        if f"output_{i}" in reference:
            files[f"reference_output_{i}.bin"] = to_layout(reference[f"output_{i}"], spec.dim_order).tobytes()
    return files


def write_files(folder: Path, files: dict[str, bytes]) -> list[Path]:
    """Write `files` into `folder`, leaving a file that already holds the bytes untouched."""
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for rel, data in files.items():
        path = folder / rel
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)
        written.append(path)
    return written


def write_model_files(
    model_dir: Path,
    pte: bytes,
    report: Report,
    reference: Mapping[str, NDArray[Any]],
    placement: Placement,
    pte_section: str,
    name: str = "model",
) -> list[Path]:
    """A one-model app's APP/model/*: the model's files and the app-wide ones in one folder.
    `name` names the model's API handle (handle_symbol). Returns the paths written."""
    pools = Pools(placement.method_pool_bytes, placement.temp_pool_bytes)
    files = {**model_files(pte, report, reference, pools, pte_section, name), **app_files({name: pte}, report, ["."])}
    return write_files(Path(model_dir), files)
