"""The shared runner and the model sources through arm-none-eabi-g++/gcc (-fsyntax-only,
the .S assembled) against the ExecuTorch headers of the wheel."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from cmx_gen.app.kinds.zephyr.checks.result import CheckResult, model_names, rel
from cmx_gen.common.targets import cores


def _wheel_include() -> Path | None:
    import importlib.util

    spec = importlib.util.find_spec("executorch")
    for loc in (spec.submodule_search_locations or []) if spec else []:
        inc = Path(loc) / "include"
        if (inc / "executorch" / "runtime").is_dir():
            return inc
    return None


def _ops_cmake_value(app: Path, var: str) -> str | None:
    path = app / "model" / "cmx_ops.cmake"
    if not path.is_file():
        return None
    m = re.search(rf'set\({var}\s+"([^"]*)"\)', path.read_text())
    return m.group(1) if m else None


def _board_flags(app: Path) -> list[str]:
    """-mcpu/-mfpu/-mfloat-abi of the board cmx.toml names (empty when it names none we know)."""
    from cmx_gen.app.folder import AppFolder
    from cmx_gen.common.errors import CmxError

    try:
        return AppFolder(app).board().core.gcc_flags
    except (CmxError, OSError, ValueError):
        return []


_CXX = ["-fsyntax-only", "-std=c++17", "-fno-exceptions", "-fno-rtti"]
_DEFINES = ["-DC10_USING_CUSTOM_GENERATED_MACROS", "-DET_LOG_ENABLED=1"]


def check_compile(app: Path) -> CheckResult:
    result = CheckResult("compile")
    gxx, gcc = shutil.which("arm-none-eabi-g++"), shutil.which("arm-none-eabi-gcc")
    inc = _wheel_include()
    if not gxx or not gcc:
        result.status = "skipped"
        result.note = "arm-none-eabi-gcc/g++ not on PATH"
        return result
    if inc is None:
        result.status = "skipped"
        result.note = "the executorch wheel's include/ folder was not found"
        return result
    arch, fallback_note = _arch(app, gcc)
    names = model_names(app)
    model_dirs = [app / "model" / name for name in names] or [app / "model"]  # model/ for an app of one model
    kconf, includes = _kconfig(app), _includes(app, inc)
    with tempfile.TemporaryDirectory(prefix="cmx-cc-") as tmp:
        jobs = [
            *_runner_and_api_jobs(app, gxx, arch, includes, _pool_defines(app, kconf), names, model_dirs),
            *_app_c_jobs(app, gcc, arch, kconf),
            *_model_jobs(app, gxx, gcc, arch, includes, model_dirs, Path(tmp)),
        ]
        if not jobs:
            result.fail("cmx/runner", "no runner or model sources to compile (was the app rendered completely?)")
        for what, cmd in jobs:
            result.checked.append(what)
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode:
                error = next((ln for ln in proc.stderr.splitlines() if "error" in ln), proc.stderr.strip()[:300])
                result.fail(what, f"does not compile: {error.replace(str(app) + '/', '')}")
    result.note = "not compiled: the Zephyr platform layer (needs Zephyr headers)" + fallback_note
    return result


def _arch(app: Path, gcc: str) -> tuple[list[str], str]:
    """The board's core flags (its FPU and float ABI decide whether GCC enables Helium), as Zephyr
    compiles for it; the program's target core where the app names no board. A core this GCC does
    not know is checked as its stand-in of the same ISA, said in the note."""
    flags = _board_flags(app) or [f"-mcpu={_ops_cmake_value(app, 'CMX_TARGET_CPU') or 'cortex-m55'}"]
    cpu, _, options = flags[0].removeprefix("-mcpu=").partition("+")
    stand_in = cores().get(cpu, {}).get("gcc_stand_in")
    if stand_in and not _gcc_knows_cpu(gcc, cpu):
        note = f"; {gcc} does not know -mcpu={cpu}, checked with -mcpu={stand_in} (same ISA)"
        return [f"-mcpu={stand_in}" + (f"+{options}" if options else ""), *flags[1:], "-mthumb"], note
    return [*flags, "-mthumb"], ""


def _includes(app: Path, inc: Path) -> list[str]:
    folders = [app / "src", app / "cmx" / "api", app / "cmx" / "app", app / "cmx" / "runner", app / "model"]
    return [
        *(f"-I{folder}" for folder in folders),
        f"-I{inc}",
        f"-I{inc / 'executorch/runtime/core/portable_type/c10'}",
    ]


def _kconfig(app: Path) -> str:
    return (app / "Kconfig").read_text() if (app / "Kconfig").is_file() else ""


def _pool_defines(app: Path, kconf: str) -> list[str]:
    """The Kconfig pool sizes as Zephyr's autoconf.h gives them to src/cmx_model.h, and the pools'
    section name CMakeLists.txt passes to the runner."""
    pools = []
    for sym in ("EXECUTORCH_METHOD_ALLOCATOR_POOL_SIZE", "EXECUTORCH_TEMP_ALLOCATOR_POOL_SIZE"):
        m = re.search(rf"config {sym}\b.*?default (\d+)", kconf, re.S)
        if m:
            pools.append(f"-DCONFIG_{sym}={m.group(1)}")
    arena = app / "linker" / "cmx_arena.ld"
    if arena.is_file():
        m = re.search(r"\*\((\.[\w.]+)\)", arena.read_text())
        pools.append(f'-DCMX_ARENA_SECTION="{m.group(1) if m else ".cmx_arena"}"')
    return pools


def _runner_and_api_jobs(
    app: Path,
    gxx: str,
    arch: list[str],
    includes: list[str],
    pools: list[str],
    names: list[str],
    model_dirs: list[Path],
) -> list[tuple[str, list[str]]]:
    """The runner as the default image, and as the profile and trace images (CONFIG_CMX_PROFILE /
    CONFIG_CMX_TRACE, which compile the EventTracer hooks in); the model API with each model's handle."""
    runner_dir, api_dir = app / "cmx" / "runner", app / "cmx" / "api"
    variants = {
        "": [],
        " (CONFIG_CMX_PROFILE)": ["-DCMX_PROFILE=1", "-DET_EVENT_TRACER_ENABLED"],
        " (CONFIG_CMX_TRACE)": ["-DCMX_TRACE=1", "-DET_EVENT_TRACER_ENABLED"],
    }
    if names:  # an app of several models has no profile or trace image; each model has its folder
        variants = {"": []}
    jobs = [
        (rel(app, src) + label, [gxx, *_CXX, "-Werror", *arch, *_DEFINES, *variant, *pools, *includes, str(src)])
        for src in (sorted(runner_dir.glob("*.cpp")) if runner_dir.is_dir() else [])
        for label, variant in variants.items()
    ]
    for src in sorted(api_dir.glob("*.cpp")) if api_dir.is_dir() else []:
        for folder in model_dirs if src.name == "cmx_model_instance.cpp" and names else [None]:
            first = [f"-I{folder}"] if folder else []
            label = rel(app, src) + (f" ({folder.name})" if folder else "")
            own_pools = pools if not folder else []
            jobs.append((label, [gxx, *_CXX, "-Werror", *arch, *_DEFINES, *own_pools, *first, *includes, str(src)]))
    return jobs


def _app_c_jobs(app: Path, gcc: str, arch: list[str], kconf: str) -> list[tuple[str, list[str]]]:
    """The application image: the user's main and its helpers are plain C over cmx.h (no Zephyr header)."""
    api_dir, app_dir, runner_dir, model_dir = (
        app / "cmx" / "api",
        app / "cmx" / "app",
        app / "cmx" / "runner",
        app / "model",
    )
    iterations = re.search(r"config CMX_APP_ITERATIONS\b.*?default (\d+)", kconf, re.S)
    return [
        (
            rel(app, src),
            [
                gcc, "-fsyntax-only", "-std=c11", "-Wall", "-Werror", *arch,
                f"-DCONFIG_CMX_APP_ITERATIONS={iterations.group(1) if iterations else 10}",
                f"-I{api_dir}", f"-I{app_dir}", f"-I{runner_dir}", f"-I{model_dir}", str(src),
            ],
        )
        for src in [app / "src" / "main.c", app_dir / "cmx_app.c"]
        if src.is_file()
    ]  # fmt: skip


def _model_jobs(
    app: Path, gxx: str, gcc: str, arch: list[str], includes: list[str], model_dirs: list[Path], tmp: Path
) -> list[tuple[str, list[str]]]:
    """The kernel registration, the models' C files, and each model's embedded program assembled
    (into `tmp`)."""
    model_dir, api_dir = app / "model", app / "cmx" / "api"
    kernels = model_dir / "cmx_kernels.cpp"
    jobs = []
    if kernels.is_file():
        jobs.append((rel(app, kernels), [gxx, *_CXX, *arch, *_DEFINES, *includes, str(kernels)]))
    c_sources = [folder / "cmx_model_io.c" for folder in model_dirs] + [model_dir / "cmx_shared_pools.c"]
    c11 = [gcc, "-fsyntax-only", "-std=c11", "-Werror", *arch]
    jobs += [
        (rel(app, src), [*c11, f"-I{src.parent}", f"-I{model_dir}", f"-I{api_dir}", str(src)])
        for src in c_sources
        if src.is_file()
    ]
    jobs += [
        (
            rel(app, folder / "model_pte.S"),
            [
                gcc,
                "-c",
                *arch,
                f"-I{folder}",
                str(folder / "model_pte.S"),
                "-o",
                str(tmp / f"{folder.name}_model_pte.o"),
            ],
        )
        for folder in model_dirs
        if (folder / "model_pte.S").is_file()
    ]
    return jobs


def _gcc_knows_cpu(gcc: str, cpu: str) -> bool:
    proc = subprocess.run(
        [gcc, f"-mcpu={cpu}", "-mthumb", "-E", "-x", "c", "-", "-o", os.devnull],
        input="",
        capture_output=True,
        text=True,
    )
    return proc.returncode == 0
