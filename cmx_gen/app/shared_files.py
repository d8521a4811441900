"""The files every model of an app shares (one model's files are model_files.py): the handles
(cmx_models.h), one kernel library for the union of their operators (cmx_ops.cmake,
cmx_kernels.cpp), the list of model folders (cmx_models.cmake) and a shared arena
(cmx_shared_pools.c). Pure functions of their inputs, like every generated file."""

from __future__ import annotations

from collections.abc import Sequence

from cmx_gen.app import c_templates, codegen, kernel_guards
from cmx_gen.app.c_templates import render
from cmx_gen.common.memo import memo_json
from cmx_gen.program.pte import backend_layers, operator_names
from cmx_gen.program.report import Report


def c_name(name: str) -> str:
    """A model's name made a C identifier."""
    return "".join(c if c.isalnum() else "_" for c in name.lower()).strip("_") or "model"


def handle_symbol(name: str) -> str:
    """The C name of a model's handle (cmx.h): `cmx_model_<name>`, the name made a C identifier.
    It depends on the model's name only, so `regen` keeps the names the user's code calls."""
    return f"cmx_model_{c_name(name)}"


def models_header(names: list[str], shared: tuple[int, int] | None = None) -> str:
    """cmx_models.h: the handles of this app's models, for the user's code (cmx.h is the API);
    `shared`: (planned, temp) bytes of the pools the models share (model/cmx_shared_pools.c)."""
    decls = "\n".join(f"/* {name} */\nextern cmx_model {handle_symbol(name)};\n" for name in names)
    listed = ", ".join(f"&{handle_symbol(name)}" for name in names)
    arena = (
        (
            "/* The models run one after another and share one arena for their planned buffers (activations,\n"
            " * inputs, outputs) and one temp pool: read a model's outputs before you call another model\n"
            " * (docs/api.md). Each keeps its own method pool (its state). */\n"
            f"#define CMX_SHARED_ARENA 1\n#define CMX_SHARED_PLANNED_BYTES {shared[0]}u\n"
            f"#define CMX_SHARED_TEMP_BYTES {shared[1]}u\n"
        )
        if shared
        else "#define CMX_SHARED_ARENA 0\n"
    )
    return render("cmx_models.h", decls=decls, count=len(names), listed=listed, arena=arena)


def shared_pools_source(planned: int, temp: int) -> str:
    """model/cmx_shared_pools.c: the arena the models of an image share (shared layout)."""
    return render("cmx_shared_pools.c", planned=planned, temp=temp)


def models_cmake(dirs: list[str], sources: list[str]) -> str:
    """model/cmx_models.cmake: each model's folder (under model/) and the app-wide model sources."""
    return render("cmx_models.cmake", dirs=dirs, sources=sources)


def ops_cmake(report: Report, kset: codegen.KernelSet, layers: Sequence[str] = ()) -> str:
    """What kernels/ builds: the kernels of every program in the app and the layer kinds cmx-gen's
    backend runs for them (`report`: any one of them, for the core and the executorch version they
    share). CMX_OPTIMIZED_OPS only for a float program: int8 apps' files stay as they were."""
    target = report.target
    return render(
        "cmx_ops.cmake",
        executorch_version=report.executorch_version,
        core=target.core,
        isa=target.isa,
        kset=kset,
        layers=layers,
    )


def app_files(
    programs: dict[str, bytes],
    report: Report,
    dirs: list[str],
    shared: tuple[int, int] | None = None,
    guarded: bool = False,
) -> dict[str, bytes]:
    """The files all models of an app share: their handles (cmx_models.h), one kernel library for
    the union of their operators (cmx_ops.cmake, cmx_kernels.cpp: each kernel once; `guarded`, for a
    program from a slot: each checks its arguments first), the list of model folders
    (cmx_models.cmake) and, when they share it, the arena (cmx_shared_pools.c)."""
    ops = sorted({op for pte in programs.values() for op in operator_names(pte)})
    kset = codegen.split_ops(ops)
    layers = sorted({kind for pte in programs.values() for kind in backend_layers(pte)})
    backend = "backend" if layers else ""
    registration = memo_json(
        "registration",
        (
            report.executorch_version,
            backend,
            c_templates.digest(),
            kernel_guards.digest() if guarded else "",
            *ops,
            *codegen.optimized_kernels(ops),
        ),
        lambda: codegen.registration_source(ops, bool(layers), guarded),
    )
    files = {
        "cmx_models.h": models_header(list(programs), shared).encode(),
        "cmx_ops.cmake": ops_cmake(report, kset, layers).encode(),
        "cmx_kernels.cpp": registration.encode(),
        "cmx_models.cmake": models_cmake(dirs, ["cmx_shared_pools.c"] if shared else []).encode(),
    }
    if shared:
        files["cmx_shared_pools.c"] = shared_pools_source(*shared).encode()
    return files
