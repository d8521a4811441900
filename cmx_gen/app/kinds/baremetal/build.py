"""`cmx-gen build`: configure and build a generated bare-metal app, then report memory per region.

The memory report comes from the linked ELF (section addresses and sizes, `objdump -h`) mapped onto
the regions of the app's own linker script, so it shows what the board will really hold, including
load images (.data, a program copied to RAM) that sit in flash as well.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from cmx_gen.common import progress
from cmx_gen.common.errors import BuildError
from cmx_gen.common.paths import cache_root
from cmx_gen.device import sdk as sdk_mod
from cmx_gen.device.build_tool import stream

TOOLCHAIN = "cmake/arm-none-eabi.cmake"


@dataclass
class Region:
    name: str
    origin: int
    length: int
    used: int = 0
    sections: dict[str, int] = field(default_factory=dict)

    def contains(self, address: int) -> bool:
        return self.origin <= address < self.origin + self.length


@dataclass
class Section:
    name: str
    size: int
    vma: int
    lma: int
    flags: set[str]


@dataclass
class BuildResult:
    app: Path
    build_dir: Path
    elf: Path
    seconds: float  # configure (if it ran) + build
    compiled: int  # compile/link steps ninja ran
    regions: list[Region]
    sections: list[Section]

    @property
    def text_bytes(self) -> int:
        return sum(s.size for s in self.sections if s.name == ".text")

    def table(self) -> str:
        lines = [f"{'region':<10} {'used':>10} {'size':>10} {'use':>6}  sections"]
        for r in self.regions:
            if not r.used:
                continue
            parts = ", ".join(f"{n} {b:,}" for n, b in sorted(r.sections.items(), key=lambda kv: -kv[1]))
            lines.append(
                f"{r.name.lower():<10} {r.used:>10,} {r.length:>10,} {100 * r.used / r.length:>5.1f}%  {parts}"
            )
        return "\n".join(lines)


def linker_regions(linker_script: Path) -> list[Region]:
    """MEMORY { NAME (attrs) : ORIGIN = x, LENGTH = y } of a generated linker script."""
    text = linker_script.read_text()
    block = re.search(r"MEMORY\s*\{(.*?)\}", text, re.S)
    if not block:
        raise BuildError(f"{linker_script} has no MEMORY block", "regenerate the app with `cmx-gen regen`")
    regions = []
    for m in re.finditer(
        r"(\w+)\s*\([^)]*\)\s*:\s*ORIGIN\s*=\s*(0x[0-9a-fA-F]+|\d+)\s*,\s*LENGTH\s*=\s*(0x[0-9a-fA-F]+|\d+)",
        block.group(1),
    ):
        regions.append(Region(m.group(1), int(m.group(2), 0), int(m.group(3), 0)))
    return regions


def elf_sections(elf: Path) -> list[Section]:
    objdump = shutil.which("arm-none-eabi-objdump")
    if objdump is None:
        raise BuildError("arm-none-eabi-objdump not found", "install the Arm GNU toolchain (arm-none-eabi-gcc)")
    out = subprocess.run([objdump, "-h", "-w", str(elf)], capture_output=True, text=True, check=True).stdout
    sections = []
    for line in out.splitlines():
        m = re.match(r"\s*\d+\s+(\S+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+[0-9a-f]+\s+\S+\s+(.*)$", line)
        if m:
            flags = {f.strip() for f in m.group(5).split(",")}
            sections.append(Section(m.group(1), int(m.group(2), 16), int(m.group(3), 16), int(m.group(4), 16), flags))
    return sections


def memory_use(elf: Path, linker_script: Path) -> tuple[list[Region], list[Section]]:
    """Bytes per linker region: every ALLOC section at its run address, plus its load image if elsewhere."""
    regions = linker_regions(linker_script)
    sections = elf_sections(elf)
    for s in sections:
        if "ALLOC" not in s.flags or s.size == 0:
            continue
        places = [s.vma] + ([s.lma] if "LOAD" in s.flags and s.lma != s.vma else [])
        for address in places:
            for r in regions:
                if r.contains(address):
                    r.used += s.size
                    key = s.name if address == s.vma else f"{s.name} (load image)"
                    r.sections[key] = r.sections.get(key, 0) + s.size
                    break
    return regions, sections


USER_APP_SUFFIX = "_app"  # the user's application image beside the check: <name>_app.elf


def find_elf(build_dir: Path, user_app: bool = False) -> Path:
    """The check image in `build_dir` (`<name>.elf`), or the user's application (`<name>_app.elf`),
    `<name>` the CMake project's (its cache says): a project whose own name ends in `_app` (a model in
    model.py of the current folder is `cmx_app`) keeps its check image apart from the application."""
    name = _project_name(build_dir)
    if name is not None:
        elf = build_dir / f"{name}{USER_APP_SUFFIX if user_app else ''}.elf"
        elves = [elf] if elf.is_file() else []
    else:
        elves = sorted(e for e in build_dir.glob("*.elf") if e.stem.endswith(USER_APP_SUFFIX) == user_app)
    if not elves:
        raise BuildError(f"no .elf in {build_dir}", "the build did not link; run `cmx-gen build APP --clean`")
    return elves[0]


def _project_name(build_dir: Path) -> str | None:
    """CMAKE_PROJECT_NAME from the build folder's CMakeCache.txt, if it has one."""
    cache = build_dir / "CMakeCache.txt"
    if not cache.is_file():
        return None
    for line in cache.read_text(errors="replace").splitlines():
        if line.startswith("CMAKE_PROJECT_NAME:"):
            return line.partition("=")[2].strip() or None
    return None


def runtime_cache_dir() -> Path:
    """Shared kernel-library builds (kernels/cmx_runtime_cache.cmake), beside the lowering cache."""
    return cache_root() / "runtime"


def build(
    app: Path,
    build_dir: Path | None = None,
    clean: bool = False,
    jobs: int | None = None,
    env: dict[str, str] | None = None,
    defines: list[str] | None = None,
    runtime_cache: Path | None = None,
    shared: bool = True,
) -> BuildResult:
    """Configure (first time, with clean=True, or when `defines` are given) and build APP;
    return the ELF and its memory use. `defines`: extra NAME=VALUE cache entries (e.g. CMX_ET_LOG=OFF).
    The kernel library comes from the shared runtime cache (`runtime_cache`, default
    runtime_cache_dir()) when an app with the same sources, kernels and flags built it; `shared=False`
    compiles it in this app only."""
    app = Path(app).resolve()
    _require_app_and_tools(app)
    environment = dict(os.environ if env is None else env)
    sdk = sdk_mod.require(environment)
    for warning in sdk.warnings:
        progress.say(f"warning: {warning}")
    if shared and runtime_cache is None:
        runtime_cache = runtime_cache_dir()
    if not shared:
        runtime_cache = None
    build_dir = Path(build_dir).resolve() if build_dir else app / "build"
    if clean and build_dir.exists():
        shutil.rmtree(build_dir)
    build_dir.mkdir(parents=True, exist_ok=True)
    log = build_dir / "cmx-build.log"
    log.write_text("")
    start = time.monotonic()
    if defines or not (build_dir / "CMakeCache.txt").is_file():
        progress.say(f"configuring {app.name} (CMake, Ninja)")
        sdk_defines = [*sdk.cmake_defines(), f"-DCMX_RUNTIME_CACHE={runtime_cache or ''}"]
        _configure(app, build_dir, log, environment, [*sdk_defines, *(f"-D{d}" for d in defines or [])])
    steps = _compile(app, build_dir, log, environment, jobs)
    seconds = time.monotonic() - start
    elf = find_elf(build_dir)
    regions, sections = memory_use(elf, app / "linker.ld")
    return BuildResult(app, build_dir, elf, seconds, steps, regions, sections)


def _require_app_and_tools(app: Path) -> None:
    """Refuse, before any step, a folder that is not a bare-metal app or a machine without the tools."""
    if not (app / "CMakeLists.txt").is_file() or not (app / TOOLCHAIN).is_file():
        raise BuildError(
            f"{app} is not a generated bare-metal app (no CMakeLists.txt / {TOOLCHAIN})",
            "create one with `cmx-gen create MODEL --board ID --rtos baremetal -o APP`; "
            "Zephyr apps build with `west build`",
        )
    for tool in ("cmake", "ninja", "arm-none-eabi-gcc"):
        if shutil.which(tool) is None:
            raise BuildError(f"{tool} not found on PATH", "install CMake >= 3.20, Ninja and the Arm GNU toolchain")


def _configure(app: Path, build_dir: Path, log: Path, environment: dict[str, str], defines: list[str]) -> None:
    """CMake with the app's toolchain file, for size (MinSizeRel), with the SDK's and the caller's -D options."""
    cmd = [
        "cmake",
        "-S",
        str(app),
        "-B",
        str(build_dir),
        "-G",
        "Ninja",
        f"-DCMAKE_TOOLCHAIN_FILE={app / TOOLCHAIN}",
        "-DCMAKE_BUILD_TYPE=MinSizeRel",
        *defines,
    ]
    stream(cmd, app, log, "configure", environment)


def _compile(app: Path, build_dir: Path, log: Path, environment: dict[str, str], jobs: int | None) -> int:
    """The build's steps run; a failed build leaves no image behind."""
    cmd = ["cmake", "--build", str(build_dir)] + (["-j", str(jobs)] if jobs else [])
    try:
        return stream(cmd, app, log, "build", environment)
    except BuildError:
        # Ninja keeps the images of the last good build when a compile fails: `run` would run those
        # and report on code that is no longer the app's. Gone, it says "build first" instead.
        for stale in build_dir.glob("*.elf"):
            stale.unlink()
        raise
