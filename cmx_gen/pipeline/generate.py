"""The whole `create` pipeline for one project (one model or several): load, lower (cached), fit, render.

`cmx-gen create` and `cmx-gen regen` are thin layers over `generate()`.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from cmx_gen.app import html_report
from cmx_gen.app.kinds import APP_KINDS, app_kind
from cmx_gen.app.project import ModelEntry, Project
from cmx_gen.app.render import RenderResult, check_destination, render_app
from cmx_gen.app.slot_files import SLOT_FILE, WEIGHTS_FILE
from cmx_gen.common import progress
from cmx_gen.common.errors import BoardError, FitError, ModelSourceError
from cmx_gen.common.goals import goals_to_try, stage_trials
from cmx_gen.fit import memory
from cmx_gen.fit.boards import Board, ModelSlot, load_board, load_boards
from cmx_gen.lower.lowering import LowerOptions
from cmx_gen.model import source as model_source
from cmx_gen.pipeline.lower import produce
from cmx_gen.program.artifacts import Artifacts
from cmx_gen.program.report import check_strict


@dataclass
class Generated:
    board: Board
    artifacts: Artifacts  # the first (or only) model's lowering
    from_cache: bool
    placement: memory.Placement
    render: RenderResult
    page: Path | None = None  # the HTML report (html_report.py)
    models: dict[str, Artifacts] = field(default_factory=dict)  # every model's lowering, by name
    rtos: str = "baremetal"  # the app's kind
    slots: tuple[ModelSlot, ...] = ()  # placement = "slot": the board's model slots

    def _slot_lines(self, app: Path) -> list[str]:
        if not self.slots:
            return []
        image = app / "model" / SLOT_FILE
        where = ", ".join(f"{s.name} 0x{s.base:08x} ({s.size:,} bytes)" for s in self.slots)
        quoted = shlex.quote(str(app))
        lines = [f"slots      {image} ({image.stat().st_size:,} bytes) runs from a model slot: {where}"]
        weights = app / "model" / WEIGHTS_FILE
        if weights.is_file():
            areas = ", ".join(
                f"{s.name} 0x{s.weights.base:08x} ({s.weights.size:,} bytes)" for s in self.slots if s.weights
            )
            lines.append(f"weights    {weights} ({weights.stat().st_size:,} bytes) apart, read in place from: {areas}")
        return lines + [f"update     after retraining: cmx-gen regen {quoted} && cmx-gen model-image {quoted} --slot b"]

    def _latency(self) -> list[str]:
        """The latency line, one per model of an app of several."""
        from cmx_gen.fit.latency import estimate

        if len(self.models) <= 1:
            return [estimate(self.artifacts.report, self.board).line()]
        return [
            estimate(a.report, self.board).line().replace("latency    ", f"latency    {name}: ", 1)
            for name, a in self.models.items()
        ]

    def summary(self, app: Path) -> str:
        """What `create` and `regen` print: the lowering table(s), the placement, what was written."""
        from cmx_gen.program.report_text import table

        tables = (
            [f"model      {name}\n{table(a.report)}" for name, a in self.models.items()]
            if len(self.models) > 1
            else [table(self.artifacts.report)]
        )
        lines = [
            "\n\n".join(tables),
            "",
            f"board      {self.board.id} ({self.board.name}, {self.board.core.name}, {self.board.core.isa})",
            self.placement.to_text(),
            "",
            *self._latency(),
            f"{app_kind(self.rtos).noun:<10} {app}: {self.render.summary()}",
        ]
        if self.page:
            lines.append(f"report     {self.page}  (cmx-gen report {shlex.quote(str(app))} --open)")
        if self.render.backed_up:
            lines.append("backups    " + ", ".join(self.render.backed_up))
        lines += self._slot_lines(app)
        lines += app_kind(self.rtos).next_steps(app)
        lines += app_kind(self.rtos).created_notes(self.board)
        return "\n".join(lines)


def _lower(
    entry: ModelEntry, project: Project, board: Board, use_cache: bool, memory: str, staged: bool
) -> tuple[Artifacts, bool]:
    """One model, lowered for the board's core (cached on everything that decides its program). A core
    without the options its name implies (an M33 without DSP) gets a program lowered for a core of its
    real ISA."""
    core = board.core.lower_target
    source = model_source.load(
        entry.source,
        input_shape=entry.input_shape,
        calibration=entry.calibration,
        random_calibration=entry.random_calibration,
        given_input=entry.given_input,
    )
    options = LowerOptions(
        keep_fp32=tuple(entry.keep_fp32),
        io=entry.io,
        weights=entry.weights,
        weights_for=tuple(entry.weights_for),
        sqnr_target=entry.sqnr_target,
        precision=entry.precision,
        precision_for=tuple(entry.precision_for),
        per_channel_linear=entry.per_channel_linear,
        delegate=project.delegate,
        memory=memory,
        input_memory=project.input_memory,
        stage_weights=staged,
    )
    result, hit = produce(source, core, options, use_cache=use_cache)
    if hit:
        progress.say(f"lowering {entry.model_name()} for {core}: unchanged, reused the cached program")
    if project.strict:
        check_strict(result.report)
    return result, hit


def _place(project: Project, results: list[Artifacts], board: Board) -> memory.Placement:
    """Where the program(s) go on the board, or FitError."""
    layout: Literal["shared", "separate"] = "separate" if project.separate_arenas else "shared"
    reports = {e.model_name(): r.report for e, r in zip(project.models, results)}
    return memory.place(reports, board, layout, in_slot=project.placement == "slot")


def _slot_board(project: Project, board: Board) -> Board:
    """The board as a firmware with model slots sees it, or a one-line refusal of what cannot have them."""
    if not board.model_slots:
        with_slots = [b.id for b in load_boards() if b.model_slots]
        raise BoardError(
            f'placement = "slot": board {board.id} declares no model slots',
            f"add model_slots to its board file (docs/boards.md), or use a board that has them: {', '.join(with_slots)}",
        )
    if project.several:
        raise ModelSourceError(
            'placement = "slot" keeps one model a firmware', 'make one app per model, or keep placement = "linked"'
        )
    if not app_kind(project.rtos).model_slots:
        with_slots = [name for name, kind in APP_KINDS.items() if kind.model_slots]
        raise ModelSourceError(
            f'placement = "slot" is built for the {" and ".join(with_slots)} apps; the {project.rtos} app links its model',
            f'use --rtos {" or --rtos ".join(with_slots)}, or keep placement = "linked"',
        )
    return board.with_slots_reserved()


def generate(project: Project, app: Path, force: bool = False, use_cache: bool = True) -> Generated:
    """Lower each model for the board's core, refuse what does not fit, render the app into `app`."""
    board = load_board(project.board)  # first: an unknown board or a bad -o fails before the slow steps
    app_kind(project.rtos).check_board(board)
    if project.placement == "slot":
        board = _slot_board(project, board)
    check_destination(app, force)
    goals = goals_to_try(project.memory)
    trials = [
        (goal, staged) for goal in goals for staged in stage_trials(project.stage_weights, board.flash_waits, goal)
    ]
    for at, (goal, staged) in enumerate(trials):
        lowered = [_lower(entry, project, board, use_cache, goal, staged) for entry in project.models]
        results = [result for result, _ in lowered]
        try:
            placement = _place(project, results, board)
        except FitError as exc:
            if at == len(trials) - 1:
                raise
            if trials[at + 1][0] == goal:
                progress.say(
                    f"stage_weights = auto: the weights staged in scratch do not fit {board.id} ({exc.problem}); "
                    "reading them from flash instead"
                )
            else:
                progress.say(
                    f"memory = fit: the {goal!r} schedule does not fit {board.id} ({exc.problem}); "
                    f"trying {trials[at + 1][0]!r}"
                )
            continue
        if len(goals) > 1:
            progress.say(f"memory = fit: took the {goal!r} schedule, the first that fits {board.id}")
        break
    with progress.step(f"rendering the {project.rtos} app into {app}"):
        rendered = render_app(project, results, board, placement, app, force=force)
    page = html_report.write(app)
    return Generated(
        board,
        results[0],
        all(hit for _, hit in lowered),
        placement,
        rendered,
        page,
        models={e.model_name(): r for e, r in zip(project.models, results)},
        rtos=project.rtos,
        slots=tuple(board.model_slots) if project.placement == "slot" else (),
    )
