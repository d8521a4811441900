"""`cmx-gen check`: the report to check (read from a report.json, a `lower -o` folder or an app, or made
by lowering a model for the board's core) and where its program goes on the board."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from cmx_gen.common.errors import FitError, ModelSourceError
from cmx_gen.common.goals import DEFAULT_MEMORY_GOAL, DEFAULT_STAGE_WEIGHTS, goals_to_try, stage_trials
from cmx_gen.fit.boards import load_board
from cmx_gen.fit.memory import Placement, plan
from cmx_gen.program.report import Report

if TYPE_CHECKING:
    from cmx_gen.lower.facts import LowerOptions
    from cmx_gen.model.source import ModelSource


def find_report(path: str | Path) -> Path:
    """The report.json for a path: the file itself, `<folder>/report.json` (what `lower -o` wrote),
    or `<app>/model/report.json` (an app `create` rendered: "does it still fit another board?")."""
    p = Path(path)
    if p.is_dir():
        for candidate in (p / "report.json", p / "model" / "report.json"):
            if candidate.is_file():
                return candidate
        raise ModelSourceError(f"{path} has no report.json", f"lower the model first: cmx-gen lower MODEL -o {path}")
    if p.is_file() and p.suffix == ".json":
        return p
    if p.exists():
        raise ModelSourceError(
            f"{path} is not a lowering report", f"lower it first (cmx-gen lower {path} -o DIR) and check DIR"
        )
    raise ModelSourceError(f"{path} does not exist", "pass report.json or the folder `cmx-gen lower -o DIR` wrote")


def load_report(path: str | Path) -> Report:
    from cmx_gen.program.report import load_json

    return load_json(find_report(path))


def check_report(report: Report, board_id: str) -> Placement:
    """Placement of a lowered program on a board; raises FitError / TargetError / BoardError."""
    return plan(report, load_board(board_id))


def is_model_source(spec: str) -> bool:
    return spec.endswith(".pt2") or (":" in spec and spec.rpartition(":")[0].endswith(".py"))


def lowered_report(
    spec: str,
    board_id: str,
    source: Callable[[], ModelSource],
    options: Callable[[str | None, bool], LowerOptions],
    memory: str | None = None,
    stage_weights: str = DEFAULT_STAGE_WEIGHTS,
) -> Report:
    """The report to check: read it, or lower the model (`source()`, with `options(goal, staged)`)
    for the board's core first; with `memory` fit, goal by goal until one fits; with `stage_weights`
    auto where the board's flash waits, staged first, then unstaged (as create does)."""
    if not is_model_source(spec):
        return load_report(spec)
    from cmx_gen.pipeline.lower import produce

    board = load_board(board_id)
    model = source()
    goals: tuple[str | None, ...] = tuple(goals_to_try(memory)) if memory else (None,)
    # the first trial whose program fits, else the last one's refusal
    trials = [
        (goal, staged)
        for goal in goals
        for staged in stage_trials(stage_weights, board.flash_waits, goal or DEFAULT_MEMORY_GOAL)
    ]
    for at, (goal, staged) in enumerate(trials):
        result, _ = produce(model, board.core.lower_target, options(goal, staged))
        if at == len(trials) - 1:
            break
        try:
            check_report(result.report, board_id)
            break
        except FitError:
            continue
    return result.report
