"""`cmx.toml`, the project file: everything `cmx-gen create` needs, so `regen` can redo it.

Paths inside are relative to the file. `create --config cmx.toml` reads one (command-line
options win); `create` writes one into the app, pointing back at the model, so that
`cmx-gen regen APP` needs no options.

    [model]        source = "model.py:Net"     input_shape = [1, 1, 49, 10]   (optional)
                   placement = "slot"          (optional: linked (default) | slot, see --placement)
                   input = "x.npz"             (optional, a .pte's check input: see --input)
    [calibration]  file = "cal.npz"            random = false                 (both optional)
    [target]       board = "mps3-an547"        rtos = "baremetal" | "zephyr"
    [output]       dir = "build/app"
    [options]      strict = true               name = "digits"                (both optional)
                   keep_fp32 = ["model.py:15"] (optional: parts left in float, see --keep-fp32)
                   io = "int8"                 (optional: int8 model inputs/outputs, see --io)
                   delegate = false            (optional: every operator on its own kernel instead of
                                                cmx-gen's CMSIS-NN backend, see --no-delegate)
                   memory = "min"              (optional: fast | balanced (default) | min | fit, what the
                                                backend's memory schedule favours, see --memory)
                   input_memory = "caller"     (optional: pool (default) | caller, where the inputs
                                                live, see --input-memory)

Several models in one firmware: one `[[model]]` table per model instead of `[model]`, each with
its own options (`name` is required: it names the model's API handle `cmx_model_<name>`):

    [[model]]      name = "kws"   source = "kws/model.py:DSCNN"
                   input_shape, input, calibration = "cal.npz", random_calibration, keep_fp32, io
    [[model]]      name = "digits"   source = "digits/model.py:DigitsCNN"
    [options]      separate_arenas = false   (true: models that run at the same time, docs/api.md)
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast, get_args

import tomli_w

from cmx_gen.app import samples
from cmx_gen.common.errors import ModelSourceError
from cmx_gen.common.goals import (
    DEFAULT_INPUT_MEMORY,
    DEFAULT_MEMORY_GOAL,
    DEFAULT_PLACEMENT,
    FIT,
    INPUT_MEMORIES,
    MEMORY_GOALS,
    PLACEMENTS,
)
from cmx_gen.fit.boards import is_board_file
from cmx_gen.lower.facts import Io

FILE_NAME = "cmx.toml"
IO_KINDS: tuple[str, ...] = get_args(Io)


@dataclass(frozen=True)
class ModelEntry:
    """One model of the project: its source and the options its lowering takes."""

    source: str  # model spec with an absolute (or cwd-relative) path
    name: str | None = None
    input_shape: str | None = None
    calibration: str | None = None
    random_calibration: bool = False
    given_input: str | None = None  # a .pte's check input
    keep_fp32: tuple[str, ...] = ()
    io: Io = "float"  # "int8": the program takes and returns int8 (int8_io.py)

    def model_name(self) -> str:
        """The model's name: given, else from its file (`samples/digits/model.py` -> `digits`), so
        two renders of one model are identical."""
        if self.name:
            return self.name
        path = Path(self.source.rpartition(":")[0] or self.source)
        stem = path.parent.name if path.stem == "model" else path.stem
        clean = "".join(c if c.isalnum() else "_" for c in stem.lower()).strip("_")
        return clean or "cmx_app"


@dataclass(frozen=True)
class Project:
    """The project: its models (one, from `[model]`, or several, from `[[model]]` tables), in the order
    the firmware runs them, one board and app kind, and the options all its models share."""

    models: tuple[ModelEntry, ...]
    board: str = ""
    rtos: str = "baremetal"
    output: str | None = None
    strict: bool = False
    name: str | None = None
    separate_arenas: bool = False  # several models: each keeps its own planned and temp pools
    delegate: bool = True  # cmx-gen's CMSIS-NN backend runs the int8 subgraphs (False: per operator)
    memory: str = DEFAULT_MEMORY_GOAL  # what the backend's schedule favours (common/goals.py)
    input_memory: str = DEFAULT_INPUT_MEMORY  # where the programs' inputs live (common/goals.py)
    placement: str = DEFAULT_PLACEMENT  # the program linked into the image, or in a model slot (goals.py)

    def __post_init__(self) -> None:
        object.__setattr__(self, "models", tuple(self.models))  # a list given is kept as a tuple

    @classmethod
    def single(
        cls,
        model: str,
        *,
        input_shape: str | None = None,
        calibration: str | None = None,
        random_calibration: bool = False,
        given_input: str | None = None,
        keep_fp32: tuple[str, ...] = (),
        io: Io = "float",
        **shared: Any,
    ) -> Project:
        """A project of one model: the model's options, then the project's (`shared`); the model takes
        the project's name."""
        entry = ModelEntry(
            source=model,
            name=shared.get("name"),
            input_shape=input_shape,
            calibration=calibration,
            random_calibration=random_calibration,
            given_input=given_input,
            keep_fp32=tuple(keep_fp32),
            io=io,
        )
        return cls(models=(entry,), **shared)

    @property
    def several(self) -> bool:
        """More than one model: the app holds model/<name>/ per model (docs/architecture.md)."""
        return len(self.models) > 1

    def app_name(self) -> str:
        """CMake/Zephyr project name: from the model(s), so two renders of one project are identical."""
        if self.name:
            return self.name
        return "_".join(entry.model_name() for entry in self.models)


def _split(value: str) -> tuple[str, str]:
    """`dir/model.py:Net` -> (`dir/model.py`, `:Net`); any other value is a plain path."""
    head, _, attr = value.rpartition(":")
    return (head, f":{attr}") if head.endswith(".py") else (value, "")


def _resolve(base: Path, value: str | None) -> str | None:
    if value is None:
        return None
    file_part, attr = _split(value)
    return os.path.normpath(base / file_part) + attr  # an absolute file_part stays absolute


def _relative(base: Path, value: str | None) -> str | None:
    if value is None:
        return None
    file_part, attr = _split(value)
    return os.path.relpath(Path(file_part).resolve(), base.resolve()) + attr


def _resolve_board(base: Path, board: str) -> str:
    """A board file is relative to the project file, like every path in it; a board id is an id."""
    return (_resolve(base, board) or board) if is_board_file(board) else board


def _target(project: Project, base: Path) -> dict[str, str]:
    board = (_relative(base, project.board) or project.board) if is_board_file(project.board) else project.board
    return {"board": board, "rtos": project.rtos}


def _check_io(path: Path, where: str, io: Any) -> Io:
    if io == "float" or io == "int8":
        return cast(Io, io)
    raise ModelSourceError(f"{path}: {where} io = {io!r} is not known", f"use one of {', '.join(IO_KINDS)}")


def _shape(value: Any) -> str | None:
    return ",".join(str(d) for d in value) if value else None


# The keys a [[model]] table may hold (a misspelt one is refused, not ignored).
MODEL_KEYS = ("name", "source", "input_shape", "input", "calibration", "random_calibration", "keep_fp32", "io")


def _entries(path: Path, base: Path, tables: list[Any]) -> list[ModelEntry]:
    """The [[model]] tables: each names its model and source; names are unique C identifiers."""
    entries: list[ModelEntry] = []
    for i, table in enumerate(tables, 1):
        if not isinstance(table, dict):
            raise ModelSourceError(
                f"{path}: [[model]] #{i} is not a table", 'write it as [[model]] name = "kws" source = "..."'
            )
        unknown = sorted(set(table) - set(MODEL_KEYS))
        if unknown:
            raise ModelSourceError(
                f"{path}: [[model]] #{i} has unknown key(s) {', '.join(unknown)}", f"use only {', '.join(MODEL_KEYS)}"
            )
        for key in ("name", "source"):
            if key not in table:
                raise ModelSourceError(
                    f"{path}: [[model]] #{i} has no {key}",
                    'give every model a name and a source, e.g. name = "kws" source = "kws.py:Net"',
                )
        name = str(table["name"])
        if not name.isidentifier() or not name.isascii():
            raise ModelSourceError(
                f"{path}: [[model]] name {name!r} is not a C identifier",
                "use letters, digits and _ (it names the handle cmx_model_<name>)",
            )
        if any(e.name == name for e in entries):
            raise ModelSourceError(f"{path}: two [[model]] tables are named {name!r}", "give each model its own name")
        entries.append(
            ModelEntry(
                source=_resolve(base, str(table["source"])) or "",
                name=name,
                input_shape=_shape(table.get("input_shape")),
                calibration=_resolve(base, table.get("calibration")),
                random_calibration=bool(table.get("random_calibration", False)),
                given_input=_resolve(base, table.get("input")),
                keep_fp32=tuple(str(p) for p in table.get("keep_fp32", [])),
                io=_check_io(path, f"[[model]] {name!r}", table.get("io", "float")),
            )
        )
    return entries


def _shared(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    """What the project's models share: [target], [output] and the options of the whole app."""
    base = path.parent
    target = data.get("target", {})
    if "board" not in target:
        raise ModelSourceError(
            f"{path}: [target] board is missing", 'add e.g. board = "mps3-an547" (see cmx-gen boards)'
        )
    options = data.get("options", {})
    return dict(
        board=_resolve_board(base, str(target["board"])),
        rtos=target.get("rtos", "baremetal"),
        output=_resolve(base, data.get("output", {}).get("dir")),
        strict=bool(options.get("strict", False)),
        name=options.get("name"),
        delegate=_check_bool(path, "[options] delegate", options.get("delegate", True)),
        memory=_check_memory(path, options.get("memory", DEFAULT_MEMORY_GOAL)),
        input_memory=_check_choice(
            path, "input_memory", options.get("input_memory", DEFAULT_INPUT_MEMORY), INPUT_MEMORIES, "where inputs live"
        ),
    )


def load(path: Path) -> Project:
    """Read a cmx.toml; a missing key or bad value gives a one-line error naming it."""
    if path.is_dir():
        path = path / FILE_NAME
    if not path.is_file():
        raise ModelSourceError(
            f"{path} not found",
            samples.hint_for_missing(path)
            or "give the project file (cmx.toml) or an app folder created by cmx-gen create",
        )
    try:
        data: dict[str, Any] = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ModelSourceError(f"{path} is not valid TOML: {exc}", "fix the syntax in that line") from exc
    base = path.parent
    model = data.get("model", {})
    options = data.get("options", {})
    common = _shared(path, data)
    if isinstance(model, list):  # [[model]] tables: one or several models
        if not model:
            raise ModelSourceError(
                f"{path}: no [[model]] table", 'add one: [[model]] name = "kws" source = "model.py:Net"'
            )
        entries = _entries(path, base, model)
        if len(entries) == 1:  # one model is the one-model app, whichever form names it
            name = common["name"] or entries[0].name
            return Project(models=(replace(entries[0], name=name),), **{**common, "name": name})
        return Project(models=tuple(entries), separate_arenas=bool(options.get("separate_arenas", False)), **common)
    if "source" not in model:
        raise ModelSourceError(f"{path}: [model] source is missing", 'add e.g. source = "model.py:Net"')
    calibration = data.get("calibration", {})
    common["placement"] = _check_choice(
        path, "placement", model.get("placement", DEFAULT_PLACEMENT), PLACEMENTS, "a placement", table="[model]"
    )
    return Project.single(
        _resolve(base, model["source"]) or "",
        input_shape=_shape(model.get("input_shape")),
        calibration=_resolve(base, calibration.get("file")),
        given_input=_resolve(base, model.get("input")),
        random_calibration=bool(calibration.get("random", False)),
        keep_fp32=tuple(str(p) for p in options.get("keep_fp32", [])),
        io=_check_io(path, "[options]", options.get("io", "float")),
        **common,
    )


def _entry_table(entry: ModelEntry, base: Path) -> dict[str, Any]:
    table: dict[str, Any] = {"name": entry.model_name(), "source": _relative(base, entry.source)}
    if entry.input_shape:
        table["input_shape"] = [int(d) for d in entry.input_shape.replace("x", ",").split(",")]
    if entry.given_input:
        table["input"] = _relative(base, entry.given_input)
    if entry.calibration:
        table["calibration"] = _relative(base, entry.calibration)
    if entry.random_calibration:
        table["random_calibration"] = True
    if entry.keep_fp32:
        table["keep_fp32"] = list(entry.keep_fp32)
    if entry.io != "float":
        table["io"] = entry.io
    return table


def dumps(project: Project, base: Path) -> str:
    """The cmx.toml text for `project`, with paths relative to `base` (the folder it goes in)."""
    header = "# cmx-gen project file: `cmx-gen regen .` redoes the app from it. Paths are relative to this file.\n"
    if project.several:  # [[model]] tables written out, one block each (tomli_w would inline them)
        tables = "".join(f"[[model]]\n{tomli_w.dumps(_entry_table(e, base))}\n" for e in project.models)
        rest = {
            "target": _target(project, base),
            "output": {"dir": "."},
            "options": {
                "strict": project.strict,
                "name": project.app_name(),
                "separate_arenas": project.separate_arenas,
                **_backend_options(project),
            },
        }
        return header + tables + tomli_w.dumps(rest)
    (model,) = project.models
    data: dict[str, Any] = {"model": {"source": _relative(base, model.source)}}
    if model.input_shape:
        data["model"]["input_shape"] = [int(d) for d in model.input_shape.replace("x", ",").split(",")]
    if model.given_input:
        data["model"]["input"] = _relative(base, model.given_input)
    if project.placement != DEFAULT_PLACEMENT:
        data["model"]["placement"] = project.placement
    calibration: dict[str, Any] = {"random": model.random_calibration}
    if model.calibration:
        calibration["file"] = _relative(base, model.calibration)
    data["calibration"] = calibration
    data["target"] = _target(project, base)
    data["output"] = {"dir": "."}
    data["options"] = {"strict": project.strict, "name": project.app_name()}
    if model.keep_fp32:
        data["options"]["keep_fp32"] = list(model.keep_fp32)
    if model.io != "float":
        data["options"]["io"] = model.io
    data["options"].update(_backend_options(project))
    return header + tomli_w.dumps(data)


def _backend_options(project: Project) -> dict[str, Any]:
    """`delegate = false`, `memory` and `input_memory` when set; defaults are not written, so default
    projects read as before."""
    return {
        **({} if project.delegate else {"delegate": False}),
        **({} if project.memory == DEFAULT_MEMORY_GOAL else {"memory": project.memory}),
        **({} if project.input_memory == DEFAULT_INPUT_MEMORY else {"input_memory": project.input_memory}),
    }


def _check_memory(path: Path, value: Any) -> str:
    return _check_choice(path, "memory", value, (*MEMORY_GOALS, FIT), "a memory goal")


def _check_choice(
    path: Path, key: str, value: Any, choices: tuple[str, ...], what: str, table: str = "[options]"
) -> str:
    if value not in choices:
        raise ModelSourceError(
            f"{path}: {table} {key} = {value!r} is not {what}",
            f"write {key} = one of {', '.join(repr(c) for c in choices)}",
        )
    return str(value)


def _check_bool(path: Path, where: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ModelSourceError(
            f"{path}: {where} = {value!r} is not true or false", f"write {where.split()[-1]} = false"
        )
    return value
