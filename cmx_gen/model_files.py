"""The generated model/ folder of an app: the program, its embedding, the plan and the reference.

Same files for the bare-metal and the Zephyr app (see docs/architecture.md). Every file is a pure
function of (pte, report, reference, section): the bytes are deterministic so `regen` can tell a
user edit from a stale file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from cmx_gen import codegen
from cmx_gen.errors import RenderError
from cmx_gen.memory import pool_sizes

# ExecuTorch ScalarType codes (runtime/core/portable_type/scalar_type.h) by numpy dtype.
SCALAR_TYPES: dict[str, int] = {
    "uint8": 0, "int8": 1, "int16": 2, "int32": 3, "int64": 4, "float16": 5,
    "float32": 6, "float64": 7, "bool": 11,
}


def _round16(n: int) -> int:
    return (n + 15) // 16 * 16


def program_ops(pte: bytes) -> list[str]:
    """Operator names ("ns::name.overload") of the program's forward plan, as the runtime looks them up.

    Memoized on the program's hash: parsing a .pte imports exir, which takes seconds.
    """
    from cmx_gen.cache import memo_json

    return memo_json("ops", (hashlib.sha256(pte).hexdigest(),), lambda: _program_ops(pte))


def _program_ops(pte: bytes) -> list[str]:
    from executorch.exir._serialize._program import deserialize_pte_binary

    result = deserialize_pte_binary(pte)
    program = getattr(result, "program", result)
    names: list[str] = []
    for plan in program.execution_plan:
        for op in plan.operators:
            names.append(f"{op.name}.{op.overload}" if op.overload else op.name)
    return names


def _c_bytes(name: str, data: bytes) -> str:
    rows = [
        "    " + ", ".join(f"0x{b:02x}" for b in data[i : i + 16]) + ","
        for i in range(0, len(data), 16)
    ]
    body = "\n".join(rows) if rows else "    0x00,"
    return f"static const uint8_t {name}[{max(len(data), 1)}] CMX_REFERENCE_DATA = {{\n{body}\n}};\n"


def _layout(array: np.ndarray, spec: Mapping | None) -> np.ndarray:
    """The array in the program's memory order (dim_order), as the runtime sees the buffer."""
    array = np.asarray(array)
    order = list((spec or {}).get("dim_order") or range(array.ndim))
    if len(order) != array.ndim:
        order = list(range(array.ndim))
    return np.ascontiguousarray(np.transpose(array, order))


def _tolerance(outputs: list[tuple[np.ndarray, float]]) -> float:
    """0 for integer outputs (bit-exact); float outputs with a scale allow float rounding noise only."""
    tol = 0.0
    for array, scale in outputs:
        if array.dtype.kind == "f":
            tol = max(tol, 0.01 if scale > 0 else 1e-4)
    return tol


def trace_outputs(report: Mapping) -> str:
    """{mem_id, offset, bytes} of each instruction's output for the on-target trace; mem_id 0 where
    the host has no value to compare with (views, non-tensors): the trace skips those."""
    rows = []
    for row in report.get("instructions") or []:
        out = row.get("output") or {}
        rows.append(f"{{{out['mem_id']}u, {out['offset']}u, {out['nbytes']}u}}" if out.get("reference") else "{0u, 0u, 0u}")
    return "{" + ", ".join(rows or ["{0u, 0u, 0u}"]) + "}"


def trace_reference(report: Mapping, reference: Mapping[str, np.ndarray]) -> bytes:
    """model/trace_reference.bin: the expected output bytes of every traced instruction, in order."""
    from cmx_gen.instructions import TRACE_PREFIX

    return b"".join(np.asarray(reference[f"{TRACE_PREFIX}{row['index']}"]).tobytes()
                    for row in report.get("instructions") or [] if (row.get("output") or {}).get("reference"))


def io_quant_macros(report: Mapping) -> str:
    """The I/O quantization, for the code around the model: with --io int8 the program takes and
    returns int8 (`real = scale * (q - zero_point)`); otherwise the parameters the program's own
    boundary quantize/dequantize apply, for reference."""
    lines = []
    for side in ("inputs", "outputs"):
        for i, spec in enumerate(report.get(side) or []):
            quant = (spec or {}).get("quant")
            if quant and quant.get("scale") is not None:
                name = f"CMX_{side[:-1].upper()}_{i}"
                lines.append(f"#define {name}_SCALE {np.float32(quant['scale']).item()!r}f")
                lines.append(f"#define {name}_ZERO_POINT {int(quant['zero_point'])}")
    if not lines:
        return ""
    io_int8 = any(((s or {}).get("quant") or {}).get("at") == "io" for s in report.get("inputs") or [])
    return ("/* I/O quantization, real = scale * (q - zero_point). CMX_IO_INT8 1: the program takes and returns\n"
            " * int8 (--io int8) and the caller (de)quantizes with these; 0: the program does it itself. */\n"
            f"#define CMX_IO_INT8 {int(io_int8)}\n" + "\n".join(lines) + "\n\n")


def model_header(report: Mapping, pools: Mapping, n_in: int, n_out: int, tolerance: float) -> str:
    planned = [int(x) for x in pools["planned"]]
    temp = int(pools["temp"])
    method_bytes = int(pools["method"])
    target = report.get("target", {})
    sizes = "{" + ", ".join(f"{s}u" for s in planned) + "}"
    return f"""/* Generated by cmx-gen: the memory plan and I/O of this model. Do not edit; `cmx-gen regen` rewrites it. */
#ifndef CMX_MODEL_H
#define CMX_MODEL_H

#include <stdint.h>

#define CMX_TARGET_CPU "{target.get('core', '')}"
#define CMX_TARGET_ISA "{target.get('isa', '')}"
#define CMX_EXECUTORCH_VERSION "{report.get('executorch_version', '')}"

/* Pools, in bytes (the runner prints each as used/allocated). */
#define CMX_METHOD_POOL_BYTES {method_bytes}u
#define CMX_PLANNED_BUFFER_COUNT {len(planned)}
#define CMX_PLANNED_BUFFER_SIZES {sizes}
#define CMX_PLANNED_POOL_BYTES {sum(_round16(s) for s in planned)}u
#define CMX_TEMP_POOL_BYTES {temp}u

#define CMX_NUM_INPUTS {n_in}
#define CMX_NUM_OUTPUTS {n_out}
/* Largest accepted |device - reference| in output quantization steps. */
#define CMX_TOLERANCE_LSB {tolerance!r}

{io_quant_macros(report)}/* The program's instructions (the runtime's debug handles) and, per instruction, where its output
 * lies in the planned buffers: {{mem_id, byte offset, bytes}}, mem_id 0 = not traced. Used only by
 * the profile (-D CMX_PROFILE=ON) and trace (-D CMX_TRACE=ON) builds. */
#define CMX_NUM_INSTRUCTIONS {max(len(report.get("instructions") or []), 1)}
#define CMX_TRACE_OUTPUTS {trace_outputs(report)}

#ifdef __cplusplus
extern "C" {{
#endif

/* One reference tensor: raw bytes in the program's dim order. scale > 0: errors are measured in
 * steps of `scale` (the output's quantization), else in the tensor's own unit. */
typedef struct {{
  const void* data;
  uint32_t nbytes;
  uint32_t numel;
  int32_t dtype; /* executorch ScalarType */
  float scale;
  int32_t zero_point;
}} cmx_tensor_ref;

extern const cmx_tensor_ref cmx_inputs[CMX_NUM_INPUTS > 0 ? CMX_NUM_INPUTS : 1];
extern const cmx_tensor_ref cmx_outputs[CMX_NUM_OUTPUTS > 0 ? CMX_NUM_OUTPUTS : 1];

#ifdef __cplusplus
}}
#endif

#endif /* CMX_MODEL_H */
"""


def _tensor_refs(prefix: str, arrays: list[np.ndarray], specs: list[Mapping]) -> tuple[str, str, list[float]]:
    data_parts: list[str] = []
    entries: list[str] = []
    scales: list[float] = []
    for i, array in enumerate(arrays):
        spec = specs[i] if i < len(specs) else {}
        laid = _layout(array, spec)
        dtype = laid.dtype.name
        if dtype not in SCALAR_TYPES:
            raise RenderError(f"{prefix} {i} has dtype {dtype}, which the runner cannot compare",
                              "use float32 or integer model inputs/outputs")
        # Float tensors behind a (de)quantize: errors in steps of its scale. int8 tensors (--io int8)
        # are compared in their own integer steps, which are the LSB.
        quant = ((spec or {}).get("quant") or {}) if laid.dtype.kind == "f" else {}
        scale = float(quant.get("scale") or 0.0)
        zp = int(quant.get("zero_point") or 0)
        scales.append(scale)
        name = f"cmx_{prefix}_{i}"
        data_parts.append(_c_bytes(name, laid.tobytes()))
        entries.append(
            f"    {{{name}, {laid.nbytes}u, {laid.size}u, {SCALAR_TYPES[dtype]}, {np.float32(scale).item()!r}f, {zp}}},"
        )
    return "".join(data_parts), "\n".join(entries) or "    {0, 0u, 0u, 0, 0.0f, 0},", scales


def model_io_source(reference: Mapping[str, np.ndarray], report: Mapping) -> tuple[str, int, int, float]:
    inputs = [np.asarray(reference[k]) for k in sorted((k for k in reference if k.startswith("input_")), key=lambda k: int(k.split("_")[1]))]
    outputs = [np.asarray(reference[k]) for k in sorted((k for k in reference if k.startswith("output_")), key=lambda k: int(k.split("_")[1]))]
    in_data, in_entries, _ = _tensor_refs("input", inputs, list(report.get("inputs") or []))
    out_data, out_entries, scales = _tensor_refs("output", outputs, list(report.get("outputs") or []))
    tol = _tolerance(list(zip(outputs, scales)))
    text = (
        "/* Generated by cmx-gen: the reference input(s) and the expected output(s) of the lowered\n"
        " * program, computed in Python. Do not edit; `cmx-gen regen` rewrites it. */\n"
        '#include "cmx_model.h"\n\n'
        "/* The bare-metal app puts these in their own section (size reports show them apart from\n"
        " * the code); elsewhere they are plain read-only data. */\n"
        "#if defined(CMX_REFERENCE_SECTION)\n"
        "#define CMX_REFERENCE_DATA __attribute__((section(CMX_REFERENCE_SECTION), aligned(16)))\n"
        "#else\n"
        "#define CMX_REFERENCE_DATA __attribute__((aligned(16)))\n"
        "#endif\n\n"
        f"{in_data}\n{out_data}\n"
        f"const cmx_tensor_ref cmx_inputs[CMX_NUM_INPUTS > 0 ? CMX_NUM_INPUTS : 1] = {{\n{in_entries}\n}};\n\n"
        f"const cmx_tensor_ref cmx_outputs[CMX_NUM_OUTPUTS > 0 ? CMX_NUM_OUTPUTS : 1] = {{\n{out_entries}\n}};\n"
    )
    return text, len(inputs), len(outputs), tol


def pte_asm(section: str) -> str:
    return f"""/* Generated by cmx-gen: embeds model.pte without a C array. Program::load needs >= 8-byte
 * alignment (0x12 otherwise); 16 keeps the constant data aligned for SIMD kernels. */
    .section {section}, "a"
    .balign 16
    .global cmx_model_pte
    .type cmx_model_pte, %object
cmx_model_pte:
    .incbin "model.pte"
    .global cmx_model_pte_end
cmx_model_pte_end:
    .size cmx_model_pte, cmx_model_pte_end - cmx_model_pte
    .balign 16
"""


def ops_cmake(report: Mapping, kset: codegen.KernelSet) -> str:
    target = report.get("target", {})

    def cm_list(items) -> str:
        return " ".join(f'"{x}"' for x in items)

    return f"""# Generated by cmx-gen: what kernels/ builds and registers for this model. Do not edit.
set(CMX_EXECUTORCH_VERSION "{report.get('executorch_version', '')}")
set(CMX_TARGET_CPU "{target.get('core', '')}")
set(CMX_CMSIS_NN_ISA "{target.get('isa', '')}")
set(CMX_CORTEX_M_OPS {cm_list(kset.cortex_m)})
set(CMX_PORTABLE_OPS {cm_list(kset.portable)})
set(CMX_PORTABLE_KERNELS {cm_list(kset.portable_kernels)})
set(CMX_PRIM_OPS {cm_list(kset.prim_ops)})
set(CMX_REGISTERED_OPS {cm_list(kset.registered)})
"""


def write_model_files(
    model_dir: Path,
    pte: bytes,
    report: dict,
    reference: Mapping[str, np.ndarray],
    pte_section: str,
) -> list[Path]:
    """Write APP/model/*: model.pte, model_pte.S, cmx_model.h, cmx_model_io.c, cmx_ops.cmake,
    cmx_kernels.cpp (registration of exactly the program's kernels), trace_reference.bin.
    Returns the paths written."""
    model_dir = Path(model_dir)
    model_dir.mkdir(parents=True, exist_ok=True)
    ops = program_ops(pte)
    kset = codegen.split_ops(ops)
    from cmx_gen.cache import memo_json

    registration = memo_json(
        "registration", (str(report.get("executorch_version")), *sorted(set(ops))), lambda: codegen.registration_source(ops)
    )
    io_text, n_in, n_out, tol = model_io_source(reference, report)
    files: dict[str, bytes] = {
        "model.pte": bytes(pte),
        "model_pte.S": pte_asm(pte_section).encode(),
        "cmx_model.h": model_header(report, pool_sizes(report), n_in, n_out, tol).encode(),
        "cmx_model_io.c": io_text.encode(),
        "cmx_ops.cmake": ops_cmake(report, kset).encode(),
        "cmx_kernels.cpp": registration.encode(),
        # host side of `cmx-gen run --trace`; not built into the firmware
        "trace_reference.bin": trace_reference(report, reference),
    }
    written: list[Path] = []
    for name, data in files.items():
        path = model_dir / name
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)
        written.append(path)
    return written
