"""The bare-metal app: CMake + Ninja with an arm-none-eabi toolchain file, run under QEMU or an FVP
(device/runners/), flashed with pyOCD or the vendor's tool (device/flash.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from cmx_gen.app.kinds.base import AppKind, Built, Console

if TYPE_CHECKING:
    from cmx_gen.app.folder import AppFolder
    from cmx_gen.device.runners.base import Runner
    from cmx_gen.fit.boards import Board

# The diagnostic images (`run --profile / --trace`): a CMake option of the app.
DIAGNOSTIC_OPTIONS = {"profile": "CMX_PROFILE", "trace": "CMX_TRACE"}


class BareMetalApp(AppKind):
    name = "baremetal"
    template = "baremetal_app"
    description = "CMake project: startup, linker script, semihosting or UART console"
    host_samples = True  # semihosting, or its UART under QEMU
    model_slots = True  # the slot image beside the ELF: QEMU -device loader, the FVP --data, pyOCD

    def created_notes(self, board: Board) -> list[str]:
        if board.qemu or board.fvp:
            return []
        return [
            "note       the bare-metal console is semihosting: on this board it prints only with a debugger "
            "attached (see the app's README)"
        ]

    def streams_by_semihosting(self, image: Path) -> bool:
        """Unless the image was configured with -D CMX_SEMIHOSTING=OFF (its build folder's CMakeCache.txt)."""
        cache = image.parent / "CMakeCache.txt"
        text = cache.read_text(errors="replace") if cache.is_file() else ""
        return "CMX_SEMIHOSTING:BOOL=OFF" not in text

    def build(
        self,
        app: AppFolder,
        build_dir: Path | None = None,
        clean: bool = False,
        jobs: int | None = None,
        defines: list[str] | None = None,
        diagnostic: str | None = None,
    ) -> Built:
        from cmx_gen.app.kinds.baremetal import build

        extra = [f"{DIAGNOSTIC_OPTIONS[diagnostic]}=ON"] if diagnostic else []
        result = build.build(app.path, build_dir, clean, jobs, defines=[*(defines or []), *extra] or None)
        return Built(
            result.elf,
            [
                f"elf        {result.elf}",
                f"build      {result.seconds:.1f} s, {result.compiled} step(s)",
                f".text      {result.text_bytes:,} bytes",
                result.table(),
            ],
        )

    def console(self, board: Board) -> Console:
        return "uart" if board.uart is not None else "semihosting"

    def image(self, app: AppFolder, build_dir: str = "build") -> Path | None:
        return _elf(app, build_dir)

    def app_image(self, app: AppFolder) -> Path | None:
        return _elf(app, "build", user_app=True)

    def runner(self, app: AppFolder, timeout: float, name: str | None = None) -> Runner:
        from cmx_gen.app.model_slots import simulator_loads
        from cmx_gen.common.errors import RunError
        from cmx_gen.device.runners import RUNNERS

        board = app.board()
        chosen = RUNNERS.get(name or "") or next((c for c in RUNNERS.values() if c.available_for(board)), None)
        if chosen is not None:
            runner = chosen(board, timeout)
            runner.images = simulator_loads(app)
            return runner
        raise RunError(
            f"no simulator for board {board.id}: it has no QEMU machine and no FVP on PATH",
            "flash it (`cmx-gen flash APP`) and read its console with `cmx-gen run APP --serial PORT`",
        )


def _elf(app: AppFolder, build_dir: str, user_app: bool = False) -> Path | None:
    """The check image in APP/<build_dir> (or, with `user_app`, the user's application,
    `<name>_app.elf`), if built."""
    from cmx_gen.app.kinds.baremetal.build import find_elf
    from cmx_gen.common.errors import BuildError

    try:
        return find_elf(app.path / build_dir, user_app)
    except BuildError:
        return None
