"""Arm Fixed Virtual Platforms (Corstone-300/320, MPS2), when the model's binary is on PATH.

The board file names the FVP binary and its flags (UARTs, telnet off); this runner adds the
application, semihosting on, and a wall-clock limit. The console and the verdict come from
semihosting, as under QEMU; the FVP reports cycles-accurate timing only with its own options.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from cmx_gen.common.errors import RunError
from cmx_gen.device.runners.base import Runner
from cmx_gen.fit.boards import Board


def cpu_instance(model: str) -> str:
    """The model's CPU instance: where semihosting is set and `--data FILE@ADDRESS` loads a file."""
    return "mps4_board.subsystem.cpu0" if "SSE-320" in model else "cpu0"


class FvpRunner(Runner):
    name = "fvp"

    @classmethod
    def available_for(cls, board: Board) -> bool:
        return board.fvp is not None and shutil.which(board.fvp.model) is not None

    @property
    def executable(self) -> str:  # type: ignore[override]
        return self.board.fvp.model if self.board.fvp else "FVP"

    def command(self, elf: Path, args: str = "") -> list[str]:
        if self.board.fvp is None:
            raise RunError(
                f"board {self.board.id} has no FVP model", "run it under QEMU (--runner qemu) or on the board"
            )
        model = self.board.fvp.model
        # Parameter paths as in executorch backends/arm/scripts/run_fvp.sh; the MPS2 models
        # enable semihosting by default.
        semihosting: list[str] = []
        cpu = cpu_instance(model)
        if "SSE-320" in model or "SSE-300" in model:
            semihosting = ["-C", f"{cpu}.semihosting-enable=1"]
        if args:  # the program's semihosting command line (SYS_GET_CMDLINE)
            semihosting += ["-C", f"{cpu}.semihosting-cmd_line={elf.name} {args}"]
        data = [arg for path, addr in self.images for arg in ("--data", f"{cpu}={path}@0x{addr:08x}")]
        return [model, *self.board.fvp.flags, *semihosting, *data, "--simlimit", str(int(self.timeout)), "-a", str(elf)]

    def install_hint(self) -> str:
        return (
            f"install the Arm FVP {self.executable} (developer.arm.com, Fixed Virtual Platforms) "
            "and put its binary on PATH"
        )
