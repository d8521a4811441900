"""The Zephyr app: a west/Twister application, built and run with west in the user's workspace
(build.py, runner.py), flashed with `west flash` (flasher.py), checked offline (checks/, one module a check); context.py
maps the board and placement onto Zephyr's devicetree and Kconfig for the template."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cmx_gen.app.kinds.base import AppKind, Built
from cmx_gen.fit.boards import ModelSlot

if TYPE_CHECKING:
    from cmx_gen.app.folder import AppFolder
    from cmx_gen.app.kinds.zephyr.context_types import ZephyrContext
    from cmx_gen.app.template_context import TemplateContext
    from cmx_gen.device.flash import FlashConfig, Flasher
    from cmx_gen.device.runners.base import Runner
    from cmx_gen.fit.boards import Board
    from cmx_gen.fit.memory import Placement
    from cmx_gen.program.report import Report

# The diagnostic images (`run --profile / --trace`): a Kconfig option of the app.
DIAGNOSTIC_OPTIONS = {"profile": "CONFIG_CMX_PROFILE", "trace": "CONFIG_CMX_TRACE"}


# `cmx-gen build` makes the check in build/ and the user's application (src/main.c) in build-app/.
CHECK_OPTION = "-DCONFIG_CMX_CHECK=y"
APP_BUILD_DIR = "build-app"


def _config(diagnostic: str | None) -> list[str]:
    return [CHECK_OPTION] + ([f"-D{DIAGNOSTIC_OPTIONS[diagnostic]}=y"] if diagnostic else [])


class ZephyrApp(AppKind):
    name = "zephyr"
    template = "zephyr_app"
    description = "west/Twister application with the ExecuTorch Zephyr module"
    image_is_file = False  # west flashes and runs a build folder
    model_slots = True  # the slots are the overlay's partitions; `west build -t run` loads their images

    def check_board(self, board: Board) -> None:
        from cmx_gen.app.kinds.zephyr.layout import LAYOUT_FILE, zephyr_layout, zephyr_layout_problems
        from cmx_gen.common.errors import BoardError, RenderError
        from cmx_gen.common.paths import ROOT

        if board.zephyr is None:
            raise RenderError(
                f"board {board.id} has no Zephyr board target in the cmx-gen board database",
                "use --rtos baremetal for it, or add zephyr: target: to its board file",
            )
        if zephyr_layout(board) is None:
            raise RenderError(
                f"no Zephyr layout data for board target '{board.zephyr.file_name}' ({board.id}): cmx-gen cannot map "
                "its memory onto Zephyr's devicetree",
                "add an entry for it to cmx_gen/data/zephyr/boards.yaml (labels from the board's DTS), or use --rtos baremetal",
            )
        problems = zephyr_layout_problems(board)
        if problems:
            raise BoardError(
                f"board {board.id}: " + "; ".join(problems),
                f"fix the field(s) named in its board file, or the board's entry in {LAYOUT_FILE.relative_to(ROOT)} "
                "(labels from the board's DTS); a board without a Zephyr app drops `zephyr:`",
            )

    def context(
        self, ctx: TemplateContext, report: Report, placement: Placement, board: Board
    ) -> Mapping[str, ZephyrContext]:
        from cmx_gen.app.kinds.zephyr import context

        slots = tuple(ModelSlot.model_validate(s) for s in ctx.get("model_slots", ()))
        return {"zephyr": context.template_context(board, placement, report, slots)}

    def build(
        self,
        app: AppFolder,
        build_dir: Path | None = None,
        clean: bool = False,
        jobs: int | None = None,
        defines: list[str] | None = None,
        diagnostic: str | None = None,
    ) -> Built:
        from cmx_gen.app.kinds.zephyr import build as zephyr_build

        extra = [f"-D{d}" for d in defines or []]
        elf = zephyr_build.build(app.path, app.board(), build_dir, clean, extra=extra + _config(diagnostic))
        lines = [f"elf        {elf} (the check)"]
        if build_dir is None and diagnostic is None:
            user = zephyr_build.build(
                app.path, app.board(), app.path.resolve() / APP_BUILD_DIR, clean, extra=[*extra, "-DCONFIG_CMX_CHECK=n"]
            )
            lines.append(f"elf        {user} (your application, src/main.c)")
        return Built(elf.parent.parent, lines)

    def diagnostic_build_command(self, app: AppFolder, build_dir: Path, diagnostic: str) -> list[str] | None:
        from cmx_gen.app.kinds.zephyr import build as zephyr_build

        return zephyr_build.build_command(app.path.resolve(), app.board(), build_dir, _config(diagnostic))

    def image(self, app: AppFolder, build_dir: str = "build") -> Path | None:
        return app.path.resolve() / build_dir  # west runs a build folder, not an ELF

    def app_image(self, app: AppFolder) -> Path | None:
        return app.path.resolve() / APP_BUILD_DIR

    def runner(self, app: AppFolder, timeout: float, name: str | None = None) -> Runner:
        from cmx_gen.app.kinds.zephyr.runner import WestRunner
        from cmx_gen.app.model_slots import simulator_loads

        runner = WestRunner(app.board(), timeout, cwd=app.path.resolve())
        runner.images = simulator_loads(app)
        return runner

    def flasher(self, config: FlashConfig) -> Flasher:
        from cmx_gen.app.kinds.zephyr.flasher import plan

        return plan(config)

    def checks(self) -> dict[str, Callable[[Path], Any]]:
        from cmx_gen.app.kinds.zephyr.checks import CHECKS

        return CHECKS

    def not_checked(self) -> list[str]:
        from cmx_gen.app.kinds.zephyr.checks import NOT_CHECKED

        return NOT_CHECKED
