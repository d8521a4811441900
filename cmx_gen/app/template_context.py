"""The context every app template sees as `cookiecutter.*`, declared: the app's and its models'
names, the board, the placement and the first model's report as the templates read them (their
JSON), the result line's regexes and the CI pins. The app kind adds its own entries beside these
(AppKind.context: the Zephyr app's `zephyr`, the package's `package`)."""

from __future__ import annotations

from typing import TypedDict

from cmx_gen import __version__
from cmx_gen.app import ci, shared_files
from cmx_gen.app.project import Project
from cmx_gen.device import result_line
from cmx_gen.fit.boards import Board
from cmx_gen.fit.memory import Placement
from cmx_gen.fit.placement_json import PlacementJson
from cmx_gen.program.artifacts import Artifacts


class ModelHandle(TypedDict):
    name: str
    handle: str


class TemplateContext(TypedDict):
    app_name: str
    model_handle: str  # the first model's handle symbol
    models: list[ModelHandle]
    app_dir: str
    rtos: str
    board: dict[str, object]  # Board's JSON, with the core's derived facts (_board_json)
    placement: PlacementJson
    model: dict[str, object]  # the first model's report.json (program/report.Report declares it)
    cmx_version: str
    result_line: dict[str, str]
    ci: ci.CiContext
    model_slots: list[dict[str, object]]  # the board's ModelSlots' JSON, for placement = "slot"


def context(project: Project, models: dict[str, Artifacts], board: Board, placement: Placement) -> TemplateContext:
    """The shared context; `models`: each model's lowering, by handle name."""
    artifacts = next(iter(models.values()))
    return {
        "app_name": project.app_name(),
        "model_handle": shared_files.handle_symbol(next(iter(models))),
        "models": [{"name": name, "handle": shared_files.handle_symbol(name)} for name in models],
        "app_dir": "app",
        "rtos": project.rtos,
        "board": _board_json(board),
        "placement": placement.to_dict(),
        "model": artifacts.report.to_dict(),
        "cmx_version": __version__,
        "result_line": result_line.template_context(),
        "ci": ci.context(),
        # placement = "slot": the board's model slots (the templates name them: Zephyr's partitions).
        "model_slots": [s.model_dump() for s in board.model_slots] if project.placement == "slot" else [],
    }


def _board_json(board: Board) -> dict[str, object]:
    """The board with the facts derived from its core, which templates should not recompute
    (boards.py is the one place that knows them)."""
    data = board.model_dump(mode="json")
    data["core"]["gcc_flags"] = board.core.gcc_flags
    data["core"]["isa"] = board.core.isa
    return data
