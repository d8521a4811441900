"""Kernel registration source for exactly the operators a program uses.

Why here and not in CMake: upstream generates registration at configure time with torchgen and
sizes the registry from the portable list only (its `MAX_KERNEL_NUM` ignores the cortex_m
kernels and the firmware aborts at boot). Generating at render time from the op list of the
program, with the wheel's own codegen (the same executorch that lowered the model), gives one
small, reviewable C++ file per app, needs no Python at build time, and the registry size is
simply the number of kernels in it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from cmx_gen.app import kernel_guards
from cmx_gen.app.c_templates import render

# Operators of kernels/prim_ops/register_prim_ops.cpp (built selectively, not by the codegen).
PRIM_OP_PREFIXES = (
    "executorch_prim::",
    "aten::sym_size",
    "aten::sym_numel",
    "aten::sym_stride",
    "aten::_local_scalar_dense",
)


@dataclass(frozen=True)
class KernelSet:
    """The kernels one program needs, split the way `kernels/` builds them."""

    cortex_m: tuple[str, ...]  # "quantize_per_tensor", ... (source: backends/cortex_m/ops/op_<name>.cpp)
    portable: tuple[str, ...]  # "_clone_dim_order", ... (source: kernels/portable/cpu/op_<name>.cpp)
    portable_kernels: tuple[str, ...]  # C++ function of each portable op ("softmax_out" for _softmax):
    #                                    kernels/ finds the source file by it when the name differs
    prim_ops: tuple[str, ...]  # executorch_prim / sym ops the program calls (register_prim_ops.cpp, selective)
    registered: tuple[str, ...]  # full op names registered by the generated source
    optimized: tuple[str, ...] = ()  # ops only ExecuTorch's optimized library has: "linear"
    #                                  (source: kernels/optimized/cpu/op_<name>.cpp; a float program's)

    @property
    def kernel_count(self) -> int:
        """Kernels in the registry at run time: ours plus the selected prim ops."""
        return len(self.registered) + len(self.prim_ops)


def _executorch_dir() -> Path:
    import executorch  # the wheel that lowered the model

    return Path(next(iter(executorch.__path__)))


def _yaml_paths() -> tuple[Path, Path]:
    root = _executorch_dir()
    return root / "kernels" / "portable" / "functions.yaml", root / "backends" / "cortex_m" / "ops" / "operators.yaml"


def _base_name(op: str) -> str:
    """'cortex_m::quantized_conv2d.out' -> 'quantized_conv2d'."""
    return op.split("::", 1)[1].split(".", 1)[0]


@functools.lru_cache(maxsize=1)
def _portable_kernel_names() -> dict[str, str]:
    """'aten::_softmax.out' -> 'softmax_out', from the wheel's kernels/portable/functions.yaml."""
    import yaml

    functions_yaml, _ = _yaml_paths()
    out: dict[str, str] = {}
    for entry in yaml.safe_load(functions_yaml.read_text()) or []:
        name = entry.get("op") or str(entry.get("func", "")).split("(")[0]
        kernels = entry.get("kernels") or []
        if name and kernels:
            full = name if "::" in name else f"aten::{name}"
            out[full] = str(kernels[0]["kernel_name"]).split("::")[-1]
    return out


def split_ops(op_names: list[str]) -> KernelSet:
    """Sort the program's operator names into cortex_m kernels, portable kernels, the optimized
    library's (only where portable has none and the SDK's optimized.yaml has one) and prim ops."""
    cortex_m: set[str] = set()
    portable: dict[str, str] = {}
    optimized: set[str] = set()
    prim: list[str] = []
    registered: list[str] = []
    for op in sorted(set(op_names)):
        if op.startswith(PRIM_OP_PREFIXES):
            prim.append(op)
            continue
        if op.startswith("cortex_m::"):
            cortex_m.add(_base_name(op))
        elif _from_optimized(op):
            optimized.add(_base_name(op))
        else:
            kernel = _portable_kernel_names().get(op, f"{_base_name(op)}_out")
            portable[_base_name(op)] = kernel
        registered.append(op)
    names = tuple(sorted(portable))
    return KernelSet(
        tuple(sorted(cortex_m)),
        names,
        tuple(portable[n] for n in names),
        tuple(prim),
        tuple(registered),
        tuple(sorted(optimized)),
    )


def _functions_yaml(ops: tuple[str, ...]) -> Path:
    """The wheel's portable functions.yaml, plus the optimized library's entries for the ops portable
    lacks (written beside the other memos: torchgen reads yaml files by path)."""
    import hashlib

    import yaml

    from cmx_gen.common.paths import cache_root

    portable_yaml, _ = _yaml_paths()
    extra = [optimized_entries()[op] for op in ops if _from_optimized(op)]
    if not extra:
        return portable_yaml
    text = portable_yaml.read_text() + "\n" + yaml.safe_dump(extra, sort_keys=False)
    path = cache_root() / "codegen" / f"functions-{hashlib.sha256(text.encode()).hexdigest()[:16]}.yaml"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return path


@functools.lru_cache(maxsize=8)
def _parsed(ops: tuple[str, ...], functions_yaml: Path):
    import torchgen
    from executorch.codegen import gen
    from torchgen.selective_build.selector import SelectiveBuilder

    selector = SelectiveBuilder.from_yaml_dict(
        {
            "operators": {
                op: {"is_root_operator": True, "is_used_for_training": False, "include_all_overloads": False}
                for op in ops
            },
            "include_all_non_op_selectives": False,
            "et_kernel_metadata": {op: ["default"] for op in ops},
        }
    )
    packaged = Path(torchgen.__file__).parent / "packaged" / "ATen" / "native"
    cortex_m_yaml = _yaml_paths()[1]
    combined, _ = gen.parse_yaml_files(
        str(packaged / "tags.yaml"),
        str(packaged / "native_functions.yaml"),
        str(functions_yaml),
        str(cortex_m_yaml),
        selector,
        False,
    )
    return selector, combined


def optimized_yaml() -> Path | None:
    """ExecuTorch's optimized kernel list (kernels/optimized/optimized.yaml in the SDK that
    EXECUTORCH_ROOT names; the wheel does not ship it)."""
    import os

    path = Path(os.environ.get("EXECUTORCH_ROOT", "/nonexistent")) / "kernels" / "optimized" / "optimized.yaml"
    return path if path.is_file() else None


@functools.lru_cache(maxsize=4)
def _optimized_entries(path: Path | None) -> dict[str, dict]:
    import yaml

    if path is None:
        return {}
    out = {}
    for entry in yaml.safe_load(path.read_text()) or []:
        name = str(entry.get("op") or entry.get("func", "")).split("(")[0]
        if name and entry.get("kernels"):
            out[name if "::" in name else f"aten::{name}"] = entry
    return out


def optimized_entries() -> dict[str, dict]:
    """Full op name -> its optimized.yaml entry (empty without the SDK)."""
    return _optimized_entries(optimized_yaml())


def _from_optimized(op: str) -> bool:
    """An op whose kernel comes from the optimized library: portable has none, the SDK's has one."""
    return op not in _portable_kernel_names() and op in optimized_entries()


def optimized_kernels(op_names: list[str]) -> tuple[str, ...]:
    """ "aten::linear.out=torch::executor::opt_linear_out" for each op taken from the optimized library:
    what the registration depends on beyond the op names (a cache key part)."""
    return tuple(
        f"{op}={optimized_entries()[op]['kernels'][0]['kernel_name']}"
        for op in sorted(set(op_names))
        if _from_optimized(op)
    )


def _missing_kernels(missing: list[str], quantized: bool) -> tuple[str, str]:
    """The problem and the fix when the libraries cmx-gen links have no kernel for some operators: an
    aten operator is a float program's (the int8 ones run on cortex_m/CMSIS-NN kernels), or a float
    part the lowering of a `quantized` program left."""
    names = ", ".join(missing)
    quantize = (
        "give cmx-gen the model itself (path/model.py:Class or a .pt2) so that it quantizes it to int8, "
        "or export the .pte quantized (upstream's aot_arm_compiler --quantize)"
    )
    if all(op.startswith("aten::") for op in missing):
        where = (
            "neither portable, cortex_m nor the optimized library of the SDK at EXECUTORCH_ROOT has one"
            if optimized_yaml()
            else "no portable or cortex_m kernel; set EXECUTORCH_ROOT to ExecuTorch's "
            "sources (`cmx-gen sdk`) and cmx-gen links the optimized library's where it has one"
        )
        if quantized:
            return (
                f"float operator(s) {names} left in the int8 program: {where}",
                "report.md's `float` lines name the model's lines; rewrite them with layers cmx-gen takes to int8, "
                "or report the model to cmx-gen",
            )
        return f"float operator(s) {names} of an unquantized program: {where}", quantize
    return (
        f"no kernel in this executorch for operator(s) {names}",
        "lower the model with the cmx-gen/executorch version that renders the app",
    )


def registration_source(op_names: list[str], backend: bool = False, guarded: bool = False) -> str:
    """C++ source that declares the used kernels and registers them in `cmx_register_kernels()`;
    with `backend`, cmx-gen's CMSIS-NN backend (kernels/backend/) first; with `guarded` (a slot app,
    whose program is input), each kernel's arguments checked before it is called (kernel_guards.py).

    Registration is an explicit call (not a static initializer) so the object is never dropped
    from a static library and start-up order is visible in the runner.
    """
    from executorch.codegen import gen
    from executorch.codegen.api.types import ExecutorchCppSignature
    from torchgen.context import native_function_manager

    kset = split_ops(op_names)
    ops = kset.registered
    missing: list[str] = []
    decls: dict[str, list[str]] = {}
    bodies: list[str] = []
    if ops:
        selector, combined = _parsed(tuple(ops), _functions_yaml(tuple(ops)))
        found = set()
        unbox = gen.ComputeCodegenUnboxedKernels(selector, False, False)
        for f in sorted(combined.native_functions, key=lambda f: f"{f.namespace}::{f.func.name}"):
            with native_function_manager(f):
                for key, meta in combined.kernel_index.get_kernels(f).items():
                    sig = ExecutorchCppSignature.from_native_function(f)
                    name = meta.kernel.split("::")[-1]
                    decls.setdefault(meta.cpp_namespace, []).append(sig.decl(name=name, include_context=True) + ";")
                    body = unbox((f, (key, meta))).strip("\n")
                    bodies.append(kernel_guards.guarded(f"{f.namespace}::{f.func.name}", body) if guarded else body)
                    found.add(f"{f.namespace}::{f.func.name}")
        missing = [op for op in ops if op not in found]
    if missing:
        from cmx_gen.common.errors import RenderError

        quantized = backend or any(op.startswith("cortex_m::") for op in op_names)
        raise RenderError(*_missing_kernels(missing, quantized))
    namespaces = [(ns, ns.split("::"), decls[ns]) for ns in sorted(decls)]
    # The header's path is the module's before app/: generated apps stayed byte-identical across that move.
    text = render("cmx_kernels.cpp", count=len(ops), namespaces=namespaces, bodies=bodies, backend=backend)
    text = "\n".join(line.rstrip() for line in text.splitlines())
    return text.replace("\t", "    ") + "\n"
