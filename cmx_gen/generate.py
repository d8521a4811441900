"""The whole `create` pipeline for one project: load, lower (cached), fit, render.

`cmx-gen create` and `cmx-gen regen` are thin layers over `generate()`.
"""

from __future__ import annotations

import shlex

from dataclasses import dataclass
from pathlib import Path

from cmx_gen import cache, html_report, memory, model_source, progress
from cmx_gen.apps import app_kind
from cmx_gen.artifacts import Artifacts
from cmx_gen.boards import Board, load_board
from cmx_gen.errors import ModelSourceError
from cmx_gen.lowering import LowerOptions
from cmx_gen.report import check_strict
from cmx_gen.project import Project
from cmx_gen.render import RenderResult, check_destination, render_app


@dataclass
class Generated:
    board: Board
    artifacts: Artifacts
    from_cache: bool
    placement: memory.Placement
    render: RenderResult
    page: Path | None = None  # the HTML report (html_report.py)

    def summary(self, app: Path) -> str:
        """What `create` and `regen` print: the lowering table, the placement, what was written."""
        from cmx_gen.report import table

        lines = [table(self.artifacts.report), "",
                 f"board      {self.board.id} ({self.board.name}, {self.board.core.name}, {self.board.core.isa})",
                 self.placement.to_text(), "", f"app        {app}: {self.render.summary()}"]
        if self.page:
            lines.append(f"report     {self.page}  (cmx-gen report {shlex.quote(str(app))} --open)")
        if self.render.backed_up:
            lines.append("backups    " + ", ".join(self.render.backed_up))
        quoted = shlex.quote(str(app))
        lines.append(f"next       cmx-gen build {quoted} && cmx-gen run {quoted} && cmx-gen run {quoted} --app")
        if self.render.app_dir.joinpath("linker.ld").is_file() and not (self.board.qemu or self.board.fvp):
            lines.append("note       the bare-metal console is semihosting: on this board it prints only with a debugger "
                         "attached (see the app's README)")
        return "\n".join(lines)


def generate(project: Project, app: Path, force: bool = False, use_cache: bool = True) -> Generated:
    """Lower for the board's core, refuse what does not fit, render the app into `app`."""
    board = load_board(project.board)  # first: an unknown board or a bad -o fails before the slow steps
    app_kind(project.rtos).check_board(board)
    check_destination(app, force)
    source = model_source.load(
        project.model,
        input_shape=project.input_shape,
        calibration=project.calibration,
        random_calibration=project.random_calibration,
        given_input=project.given_input,
    )
    # A core without the options its name implies (e.g. an M33 without DSP) gets a program
    # lowered for a core of its real ISA.
    core = board.core.lower_target
    options = LowerOptions(keep_fp32=tuple(project.keep_fp32), io=project.io)
    result, hit = cache.produce(source, core, use_cache=use_cache, options=options)
    if hit:
        progress.say(f"lowering for {core}: unchanged, reused the cached program")
    if project.strict:
        check_strict(result.report)
    placement = memory.plan(result.report, board)
    with progress.step(f"rendering the {project.rtos} app into {app}"):
        rendered = render_app(project, result, board, placement, app, force=force)
    return Generated(board, result, hit, placement, rendered, html_report.write(app))
