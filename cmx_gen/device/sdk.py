"""Where the firmware's source dependencies are: ExecuTorch, its flatbuffers, CMSIS-NN, flatc.

The generated apps compile ExecuTorch from source (only the parts a model needs), so a source
checkout must exist outside the app. This module finds it, checks that it matches the executorch
wheel that lowered the model, and says exactly how to get it when it is missing. `kernels/
cmx_sdk.cmake` applies the same rules at configure time for people who run CMake by hand.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from cmx_gen.common.errors import SdkError

EXECUTORCH_GIT = "https://github.com/pytorch/executorch.git"
FLATBUFFERS_GIT = "https://github.com/google/flatbuffers.git"
CMSIS_NN_GIT = "https://github.com/ARM-software/CMSIS-NN.git"
FLATBUFFERS_TAG = "v24.3.25"  # program_generated.h static-asserts flatbuffers 24.x
# CMSIS-NN commit pinned by executorch 1.5 (backends/cortex_m/CMakeLists.txt, CMSIS_NN_VERSION);
# used when the checkout does not say.
DEFAULT_CMSIS_NN_COMMIT = "dbf45dbfcc515421dd6099037d3e2637b90748c8"


@dataclass
class Sdk:
    """What was found; `problems` is empty when an app can be built."""

    executorch_root: Path | None = None
    executorch_version: str | None = None  # version.txt of the checkout
    pip_version: str | None = None  # the executorch wheel that lowers models
    flatbuffers_version: str | None = None
    cmsis_nn_path: Path | None = None
    cmsis_nn_commit: str | None = None
    cmsis_nn_pinned: str = DEFAULT_CMSIS_NN_COMMIT
    flatc: Path | None = None
    flatc_version: str | None = None
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def cmake_defines(self) -> list[str]:
        """-D options that point kernels/ at this SDK."""
        out = []
        if self.executorch_root:
            out.append(f"-DEXECUTORCH_ROOT={self.executorch_root}")
        if self.cmsis_nn_path:
            out.append(f"-DCMSIS_NN_PATH={self.cmsis_nn_path}")
        if self.flatc:
            out.append(f"-DFLATC_EXECUTABLE={self.flatc}")
        torch_include = _torch_include()
        if torch_include:  # ExecuTorch's optimized kernels compile with them (kernels/CMakeLists.txt)
            out.append(f"-DCMX_TORCH_INCLUDE_DIR={torch_include}")
        return out


def _torch_include() -> str | None:
    """PyTorch's C++ headers beside this Python's torch (found without importing torch)."""
    import importlib.util

    spec = importlib.util.find_spec("torch")
    include = Path(spec.origin).parent / "include" if spec and spec.origin else None
    return str(include) if include and (include / "ATen").is_dir() else None


def pip_executorch_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("executorch")
    except PackageNotFoundError:
        return None


def _wheel_flatc() -> Path | None:
    try:
        import executorch
    except ImportError:
        return None
    for root in executorch.__path__:
        candidate = Path(root) / "data" / "bin" / "flatc"
        if candidate.is_file():
            return candidate
    return None


def _run(cmd: list[str], cwd: Path | None = None) -> str | None:
    try:
        done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=30, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip()


def _flatbuffers_version(root: Path) -> str | None:
    base = root / "third-party" / "flatbuffers" / "include" / "flatbuffers" / "base.h"
    if not base.is_file():
        return None
    text = base.read_text(errors="replace")
    parts = [re.search(rf"#define FLATBUFFERS_VERSION_{k}\s+(\d+)", text) for k in ("MAJOR", "MINOR", "REVISION")]
    found = [m.group(1) for m in parts if m]
    return ".".join(found) if len(found) == len(parts) else None


def pinned_cmsis_nn(executorch_root: Path | None) -> str:
    """The CMSIS-NN commit the ExecuTorch checkout pins (backends/cortex_m/CMakeLists.txt)."""
    if executorch_root:
        cmake = executorch_root / "backends" / "cortex_m" / "CMakeLists.txt"
        if cmake.is_file():
            m = re.search(r'CMSIS_NN_VERSION\s+"([0-9a-f]{7,40})"', cmake.read_text(errors="replace"))
            if m:
                return m.group(1)
    return DEFAULT_CMSIS_NN_COMMIT


def fix_hint(pip_version: str | None = None) -> str:
    version = pip_version or pip_executorch_version() or "<executorch version>"
    return (
        f"run `cmx-gen sdk --clone ~/cmx-sdk` (ExecuTorch v{version}, flatbuffers {FLATBUFFERS_TAG}, CMSIS-NN at "
        "the pinned commit), then `export EXECUTORCH_ROOT=~/cmx-sdk/executorch CMSIS_NN_PATH=~/cmx-sdk/CMSIS-NN`"
    )


def find(env: dict[str, str] | None = None) -> Sdk:
    """Look at EXECUTORCH_ROOT, CMSIS_NN_PATH, FLATC_EXECUTABLE (and the wheel/PATH for flatc)."""
    env = dict(os.environ if env is None else env)
    sdk = Sdk(pip_version=pip_executorch_version())

    root = env.get("EXECUTORCH_ROOT")
    if not root:
        sdk.problems.append("EXECUTORCH_ROOT is not set")
    elif not (Path(root) / "runtime" / "executor" / "method.cpp").is_file():
        sdk.problems.append(f"EXECUTORCH_ROOT={root} is not an ExecuTorch source checkout")
    else:
        sdk.executorch_root = Path(root).resolve()
        version_txt = sdk.executorch_root / "version.txt"
        sdk.executorch_version = version_txt.read_text().strip() if version_txt.is_file() else None
        sdk.flatbuffers_version = _flatbuffers_version(sdk.executorch_root)
        if sdk.flatbuffers_version is None:
            sdk.problems.append(
                f"{sdk.executorch_root}/third-party/flatbuffers is empty "
                f"(git -C {sdk.executorch_root} submodule update --init third-party/flatbuffers)"
            )
        elif not sdk.flatbuffers_version.startswith("24."):
            sdk.problems.append(
                f"third-party/flatbuffers is {sdk.flatbuffers_version}, the program schema needs 24.x ({FLATBUFFERS_TAG})"
            )
        if sdk.executorch_version and sdk.pip_version:
            src_mm = ".".join(sdk.executorch_version.split(".")[:2])
            pip_mm = ".".join(re.split(r"[+]", sdk.pip_version)[0].split(".")[:2])
            if sdk.executorch_version != sdk.pip_version.split("+")[0]:
                sdk.warnings.append(
                    f"ExecuTorch sources are {sdk.executorch_version}, the executorch wheel is {sdk.pip_version}"
                    + ("" if src_mm == pip_mm else ": kernels or the program format may differ")
                )
    sdk.cmsis_nn_pinned = pinned_cmsis_nn(sdk.executorch_root)

    nn = env.get("CMSIS_NN_PATH")
    if not nn:
        sdk.problems.append("CMSIS_NN_PATH is not set")
    elif not (Path(nn) / "Include" / "arm_nnfunctions.h").is_file():
        sdk.problems.append(f"CMSIS_NN_PATH={nn} is not a CMSIS-NN checkout")
    else:
        sdk.cmsis_nn_path = Path(nn).resolve()
        sdk.cmsis_nn_commit = _run(["git", "rev-parse", "HEAD"], cwd=sdk.cmsis_nn_path)
        if sdk.cmsis_nn_commit and not sdk.cmsis_nn_commit.startswith(sdk.cmsis_nn_pinned[:12]):
            sdk.warnings.append(
                f"CMSIS-NN is at {sdk.cmsis_nn_commit[:12]}, ExecuTorch pins {sdk.cmsis_nn_pinned[:12]}"
            )

    flatc = env.get("FLATC_EXECUTABLE") or _wheel_flatc() or shutil.which("flatc")
    if flatc and Path(flatc).is_file():
        sdk.flatc = Path(flatc)
        out = _run([str(flatc), "--version"]) or ""
        sdk.flatc_version = out.split()[-1] if out else None
        if sdk.flatc_version and not sdk.flatc_version.startswith("24."):
            sdk.warnings.append(
                f"flatc is {sdk.flatc_version}; program_generated.h needs flatc 24.x ({FLATBUFFERS_TAG})"
            )
    else:
        sdk.problems.append("flatc not found (it ships in the executorch wheel: executorch/data/bin/flatc)")
    return sdk


def require(env: dict[str, str] | None = None) -> Sdk:
    """The SDK, or one SdkError naming what is missing and the exact fix."""
    sdk = find(env)
    if not sdk.ok:
        raise SdkError("firmware SDK incomplete: " + "; ".join(sdk.problems), fix_hint(sdk.pip_version))
    return sdk


def clone(dest: Path, version: str | None = None) -> Sdk:
    """Clone the pinned sources into DEST (needs network): executorch vX, its flatbuffers, CMSIS-NN."""
    version = version or (pip_executorch_version() or "").split("+")[0]
    if not version:
        raise SdkError(
            "cannot tell which ExecuTorch to clone: the executorch wheel is not installed", "pass --version X.Y.Z"
        )
    if shutil.which("git") is None:
        raise SdkError("git is not installed", "install git, or download the sources by hand (see `cmx-gen sdk`)")
    dest = dest.expanduser().resolve()
    dest.mkdir(parents=True, exist_ok=True)
    et, nn = dest / "executorch", dest / "CMSIS-NN"

    def git(*args: str, cwd: Path | None = None) -> None:
        try:
            subprocess.run(["git", *args], cwd=cwd, check=True)
        except subprocess.CalledProcessError as exc:
            raise SdkError(
                f"`git {' '.join(args)}` failed (exit {exc.returncode})",
                "check the network / proxy, then run `cmx-gen sdk --clone` again",
            ) from exc

    if not (et / "version.txt").is_file():
        git("clone", "--depth", "1", "--branch", f"v{version}", EXECUTORCH_GIT, str(et))
    fb = et / "third-party" / "flatbuffers"
    if _flatbuffers_version(et) is None:
        if fb.exists():
            shutil.rmtree(fb)
        git("clone", "--depth", "1", "--branch", FLATBUFFERS_TAG, FLATBUFFERS_GIT, str(fb))
    if not (nn / "Include" / "arm_nnfunctions.h").is_file():
        git("clone", CMSIS_NN_GIT, str(nn))
    git("checkout", "--quiet", pinned_cmsis_nn(et), cwd=nn)
    return find({**os.environ, "EXECUTORCH_ROOT": str(et), "CMSIS_NN_PATH": str(nn)})


def describe(sdk: Sdk) -> list[str]:
    """Lines for `cmx-gen sdk`."""

    def show(value: object) -> str:
        return str(value) if value else "-"

    lines = [
        f"executorch wheel    {show(sdk.pip_version)}",
        f"EXECUTORCH_ROOT     {show(sdk.executorch_root)}  (version.txt {show(sdk.executorch_version)})",
        f"  flatbuffers       {show(sdk.flatbuffers_version)}",
        f"CMSIS_NN_PATH       {show(sdk.cmsis_nn_path)}  (commit {show(sdk.cmsis_nn_commit and sdk.cmsis_nn_commit[:12])}, "
        f"pinned {sdk.cmsis_nn_pinned[:12]})",
        f"flatc               {show(sdk.flatc)}  ({show(sdk.flatc_version)})",
    ]
    for tool in ("arm-none-eabi-gcc", "cmake", "ninja", "qemu-system-arm"):
        path = shutil.which(tool)
        version = (_run([tool, "--version"]) or "").splitlines()[:1] if path else []
        lines.append(f"{tool:<19} {path or '-'}  {version[0] if version else ''}".rstrip())
    lines += [f"warning: {w}" for w in sdk.warnings]
    lines += [f"missing: {p}" for p in sdk.problems]
    lines.append(
        "status: ready to build firmware" if sdk.ok else f"status: incomplete; fix: {fix_hint(sdk.pip_version)}"
    )
    return lines
