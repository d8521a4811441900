"""The cmx.toml that `create` writes into the app (project.py reads it): its tables declared, each
key as the reader takes it; a default is not written, so default projects read as before."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NotRequired, TypedDict

import tomli_w

from cmx_gen.app.project import ModelEntry, Project, split_spec
from cmx_gen.common.goals import (
    DEFAULT_INPUT_MEMORY,
    DEFAULT_MEMORY_GOAL,
    DEFAULT_PLACEMENT,
    DEFAULT_PRECISION,
    DEFAULT_STAGE_WEIGHTS,
    DEFAULT_WEIGHT_BITS,
)
from cmx_gen.fit.boards import is_board_file


class _LoweringOptions(TypedDict, total=False):
    """A model's lowering options, each only when it is not the default: in its [[model]] table, or
    under [options] for the one model."""

    keep_fp32: list[str]
    io: str
    weights: str
    weights_for: list[str]
    sqnr_target: float
    precision: str
    precision_for: list[str]
    per_channel_linear: bool


class _EntryTable(_LoweringOptions):
    """A [[model]] table."""

    name: str
    source: str | None
    input_shape: NotRequired[list[int]]
    input: NotRequired[str | None]
    calibration: NotRequired[str | None]
    random_calibration: NotRequired[bool]


class _ModelTable(TypedDict):
    """The one-model [model] table."""

    source: str | None
    input_shape: NotRequired[list[int]]
    input: NotRequired[str | None]
    placement: NotRequired[str]


class _Calibration(TypedDict):
    random: bool
    file: NotRequired[str | None]


class _Target(TypedDict):
    board: str
    rtos: str


class _BackendOptions(TypedDict, total=False):
    """The backend's options, each only when it is not the default."""

    delegate: bool
    memory: str
    input_memory: str
    stage_weights: str


class _Options(_BackendOptions, _LoweringOptions):
    strict: bool
    name: str
    separate_arenas: NotRequired[bool]


def _relative(base: Path, value: str | None) -> str | None:
    if value is None:
        return None
    file_part, attr = split_spec(value)
    return os.path.relpath(Path(file_part).resolve(), base.resolve()) + attr


def _target(project: Project, base: Path) -> _Target:
    board = (_relative(base, project.board) or project.board) if is_board_file(project.board) else project.board
    return {"board": board, "rtos": project.rtos}


def _entry_table(entry: ModelEntry, base: Path) -> _EntryTable:
    table: _EntryTable = {"name": entry.model_name(), "source": _relative(base, entry.source)}
    if entry.input_shape:
        table["input_shape"] = [int(d) for d in entry.input_shape.replace("x", ",").split(",")]
    if entry.given_input:
        table["input"] = _relative(base, entry.given_input)
    if entry.calibration:
        table["calibration"] = _relative(base, entry.calibration)
    if entry.random_calibration:
        table["random_calibration"] = True
    table.update(_lowering_options(entry))
    return table


def _lowering_options(entry: ModelEntry) -> _LoweringOptions:
    options: _LoweringOptions = {}
    if entry.keep_fp32:
        options["keep_fp32"] = list(entry.keep_fp32)
    if entry.io != "float":
        options["io"] = entry.io
    if entry.weights != DEFAULT_WEIGHT_BITS:
        options["weights"] = entry.weights
    if entry.weights_for:
        options["weights_for"] = list(entry.weights_for)
    if entry.sqnr_target is not None:
        options["sqnr_target"] = entry.sqnr_target
    if entry.precision != DEFAULT_PRECISION:
        options["precision"] = entry.precision
    if entry.precision_for:
        options["precision_for"] = list(entry.precision_for)
    if entry.per_channel_linear:
        options["per_channel_linear"] = True
    return options


def dumps(project: Project, base: Path) -> str:
    """The cmx.toml text for `project`, with paths relative to `base` (the folder it goes in)."""
    header = "# cmx-gen project file: `cmx-gen regen .` redoes the app from it. Paths are relative to this file.\n"
    if project.several:  # [[model]] tables written out, one block each (tomli_w would inline them)
        tables = "".join(f"[[model]]\n{tomli_w.dumps(_entry_table(e, base))}\n" for e in project.models)
        rest = {
            "target": _target(project, base),
            "output": {"dir": "."},
            "options": _Options(
                strict=project.strict,
                name=project.app_name(),
                separate_arenas=project.separate_arenas,
                **_backend_options(project),
            ),
        }
        return header + tables + tomli_w.dumps(rest)
    (model,) = project.models
    table: _ModelTable = {"source": _relative(base, model.source)}
    if model.input_shape:
        table["input_shape"] = [int(d) for d in model.input_shape.replace("x", ",").split(",")]
    if model.given_input:
        table["input"] = _relative(base, model.given_input)
    if project.placement != DEFAULT_PLACEMENT:
        table["placement"] = project.placement
    calibration: _Calibration = {"random": model.random_calibration}
    if model.calibration:
        calibration["file"] = _relative(base, model.calibration)
    options: _Options = {"strict": project.strict, "name": project.app_name()}
    options.update(_lowering_options(model))
    options.update(_backend_options(project))
    data = {
        "model": table,
        "calibration": calibration,
        "target": _target(project, base),
        "output": {"dir": "."},
        "options": options,
    }
    return header + tomli_w.dumps(data)


def _backend_options(project: Project) -> _BackendOptions:
    """`delegate = false`, `memory`, `input_memory` and `stage_weights` when set; defaults are not
    written, so default projects read as before."""
    options: _BackendOptions = {}
    if not project.delegate:
        options["delegate"] = False
    if project.memory != DEFAULT_MEMORY_GOAL:
        options["memory"] = project.memory
    if project.input_memory != DEFAULT_INPUT_MEMORY:
        options["input_memory"] = project.input_memory
    if project.stage_weights != DEFAULT_STAGE_WEIGHTS:
        options["stage_weights"] = project.stage_weights
    return options
