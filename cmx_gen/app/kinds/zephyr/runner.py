"""Zephyr apps run through Zephyr's own `run` target: `west build -d BUILD -t run` (QEMU and FVP
boards alike; there is no `west flash` runner for FVPs). Needs the user's west workspace."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from cmx_gen.device.runners.base import Result, Runner
from cmx_gen.fit.boards import Board


class WestRunner(Runner):
    name = "west"
    executable = "west"

    @classmethod
    def available_for(cls, board: Board) -> bool:
        return board.zephyr is not None and (board.qemu is not None or board.fvp is not None)

    def command(self, build_dir: Path, args: str = "") -> list[str]:
        """`args` (a semihosting command line) has no meaning for `west build -t run`: samples reach
        a Zephyr app as frames on its console."""
        from cmx_gen.app.kinds.zephyr.build import run_command

        return run_command(build_dir, self.images)

    def run(self, build_dir: Path) -> Result:
        from cmx_gen.app.kinds.zephyr.build import require_workspace

        require_workspace(self.cwd or build_dir.parent)
        return super().run(build_dir)

    def run_app(
        self,
        elf: Path,
        args: str = "",
        on_line: Callable[[str], None] | None = None,
        console_input: bytes | None = None,
    ) -> tuple[str, int | None]:
        """`elf`: the application's build folder (`west build -t run` runs it)."""
        from cmx_gen.app.kinds.zephyr.build import require_workspace

        require_workspace(self.cwd or elf.parent)
        return super().run_app(elf, args, on_line, console_input)

    def install_hint(self) -> str:
        return "pip install west (cmx-gen's set-up installs it in .venv), inside the app's west workspace"
