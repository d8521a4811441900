"""Build and run a generated Zephyr app through west, the way Zephyr users do.

Zephyr itself is not part of cmx-gen: these run inside the user's west workspace (`west init -l
APP && west update`, see the app's README). Outside one they stop with that instruction.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from cmx_gen.common import progress
from cmx_gen.common.errors import BuildError, SdkError
from cmx_gen.common.paths import executable
from cmx_gen.device.build_tool import stream
from cmx_gen.fit.boards import Board


def west() -> str:
    """west from PATH, else the one installed beside this Python (cmx-gen depends on it)."""
    return executable("west")


def build_command(app: Path, board: Board, build_dir: Path, extra: list[str] | None = None) -> list[str]:
    """`west build`; `extra` goes to CMake after `--` (e.g. -DCONFIG_CMX_PROFILE=y)."""
    assert board.zephyr is not None
    return [
        west(),
        "build",
        "-b",
        board.zephyr.target,
        "-d",
        str(build_dir),
        str(app),
        *(["--", *extra] if extra else []),
    ]


def run_command(build_dir: Path, images: Sequence[tuple[Path, int]] = ()) -> list[str]:
    """QEMU and FVP targets run through Zephyr's own `run` target (there is no west flash runner for FVPs).
    `images`: model slot images to load beside the firmware (placement = "slot"), given to the app's
    CMakeLists.txt as CMX_SLOT_IMAGES (CMake options make west re-run CMake; nothing is recompiled)."""
    slots = ["--", "-DCMX_SLOT_IMAGES=" + ";".join(f"{path}@0x{addr:08x}" for path, addr in images)] if images else []
    return [west(), "build", "-d", str(build_dir), "-t", "run", *slots]


def _in_workspace(app: Path) -> bool:
    if os.environ.get("ZEPHYR_BASE"):
        return True
    return any((parent / ".west").is_dir() for parent in [app.resolve(), *app.resolve().parents])


def require_workspace(app: Path) -> None:
    if not Path(west()).is_file() and shutil.which("west") is None:
        raise SdkError("west not found", "pip install west (cmx-gen's set-up installs it in .venv)")
    if not _in_workspace(app):
        raise SdkError(
            f"{app} is a Zephyr app but no west workspace holds it (no .west above it, ZEPHYR_BASE unset)",
            f"cd {app} && west init -l . && west update (see its README), then run cmx-gen build again",
        )


def build(
    app: Path, board: Board, build_dir: Path | None = None, clean: bool = False, extra: list[str] | None = None
) -> Path:
    """`west build` the app; returns zephyr.elf."""
    require_workspace(app)
    app = app.resolve()  # west runs with cwd=app: relative paths would point inside it twice
    build_dir = (build_dir or app / "build").resolve()
    if clean and build_dir.exists():
        shutil.rmtree(build_dir)
    build_dir.mkdir(parents=True, exist_ok=True)
    progress.say(f"west build for {board.zephyr.target if board.zephyr else board.id}")
    stream(build_command(app, board, build_dir, extra), app, build_dir / "cmx-build.log", "west build")
    elf = build_dir / "zephyr" / "zephyr.elf"
    if not elf.is_file():
        raise BuildError(f"west build made no {elf}", f"see {build_dir / 'cmx-build.log'}")
    return elf
