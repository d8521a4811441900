"""QEMU (system mode) for boards with a QEMU machine.

`-icount shift=0` makes every instruction take 1 ns of virtual time, so the firmware's SysTick
reading becomes an exact, repeatable instruction count; semihosting carries the exit status
(SYS_EXIT_EXTENDED -> QEMU's exit code) and the console, unless the app was built with
`-D CMX_CONSOLE=uart`: the board's first UART is on QEMU's stdout too, so both kinds of image
print their result line here.
"""

from __future__ import annotations

from pathlib import Path

from cmx_gen.common.errors import RunError
from cmx_gen.device.runners.base import Runner
from cmx_gen.fit.boards import Board


class QemuRunner(Runner):
    name = "qemu"
    executable = "qemu-system-arm"

    def __init__(self, board: Board, timeout: float = 120.0, cwd: Path | None = None, plugin: str = "") -> None:
        super().__init__(board, timeout, cwd)
        self.plugin = plugin  # a TCG plugin and its arguments, QEMU's `-plugin` value (device/cycles/)

    @classmethod
    def available_for(cls, board: Board) -> bool:
        return board.qemu is not None

    def command(self, elf: Path, args: str = "") -> list[str]:
        if self.board.qemu is None:
            raise RunError(
                f"board {self.board.id} has no QEMU machine", "run it on the FVP (--runner fvp) or the board"
            )
        return [
            self.executable,
            "-M",
            self.board.qemu.machine,
            "-cpu",
            self.board.qemu.cpu,
            "-nographic",
            "-monitor",
            "none",
            "-serial",
            "stdio",
            "-semihosting-config",
            "enable=on,target=native",
            "-icount",
            "shift=0",
            "-kernel",
            str(elf),
            *[arg for path, addr in self.images for arg in ("-device", f"loader,file={path},addr=0x{addr:08x}")],
            *(["-append", args] if args else []),
            *(["-plugin", self.plugin] if self.plugin else []),  # the semihosting command line (SYS_GET_CMDLINE)
        ]

    def install_hint(self) -> str:
        return "install QEMU >= 7.2 (Debian/Ubuntu: apt install qemu-system-arm)"
