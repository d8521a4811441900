"""`west flash`: a Zephyr app is flashed by its own build folder's runner (the board's `flash:
runner:`), so every board Zephyr can flash is flashable, whatever pyOCD knows of it."""

from __future__ import annotations

from cmx_gen.common.errors import FlashError
from cmx_gen.common.paths import executable
from cmx_gen.device.flash import FlashConfig, Flasher, require_runner


class WestFlasher(Flasher):
    name = "west"

    def commands(self) -> list[list[str]]:
        assert self.config.board.flash is not None
        probe = ["--dev-id", self.config.probe] if self.config.probe else []
        return [
            [executable("west"), "flash", "-d", str(self.config.image), "-r", self.config.board.flash.runner, *probe]
        ]

    def check(self) -> None:
        from cmx_gen.app.kinds.zephyr.build import require_workspace

        require_workspace(self.config.app)
        if not (self.config.image / "zephyr" / "zephyr.elf").is_file():
            raise FlashError(f"no Zephyr build in {self.config.image}", f"run `cmx-gen build {self.config.app}` first")


def plan(config: FlashConfig) -> WestFlasher:
    """`west flash` for a board with a flash runner; the same one-line refusal as bare metal otherwise."""
    require_runner(config.board)
    return WestFlasher(config)
