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
                   weights = "int4"            (optional: int8 (default) | int4 | auto, the weights of
                                                convolution and linear layers, see --weights)
                   sqnr_target = 20.0          (optional: weights = or precision = "auto"'s output
                                                SQNR in dB, see --sqnr-target)
                   weights_for = ["output=int8"] (optional: per-layer precision, see --weights-for)
                   precision = "int16"         (optional: int8 (default) | int16 | auto, the activations
                                                of convolution, linear and add layers, see --precision)
                   precision_for = ["head=int16"] (optional: per-layer activations, see --precision-for)
                   per_channel_linear = true   (optional: linear layers' weights a scale per output
                                                channel, see --per-channel-linear)
                   delegate = false            (optional: every operator on its own kernel instead of
                                                cmx-gen's CMSIS-NN backend, see --no-delegate)
                   memory = "min"              (optional: fast | balanced (default) | min | fit, what the
                                                backend's memory schedule favours, see --memory)
                   input_memory = "caller"     (optional: pool (default) | caller, where the inputs
                                                live, see --input-memory)
                   stage_weights = "yes"       (optional: auto (default) | yes | no, convolution weights
                                                widened into scratch at each call, see --stage-weights)

Several models in one firmware: one `[[model]]` table per model instead of `[model]`, each with
its own options (`name` is required: it names the model's API handle `cmx_model_<name>`):

    [[model]]      name = "kws"   source = "kws/model.py:DSCNN"
                   input_shape, input, calibration = "cal.npz", random_calibration, keep_fp32, io,
                   weights, weights_for, sqnr_target, precision, precision_for, per_channel_linear
    [[model]]      name = "digits"   source = "digits/model.py:DigitsCNN"
    [options]      separate_arenas = false   (true: models that run at the same time, docs/api.md)
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NotRequired, TypedDict, cast, get_args

from cmx_gen.app import samples
from cmx_gen.app.project_values import check_bool, check_choice, check_memory, number_formats
from cmx_gen.common.errors import ModelSourceError
from cmx_gen.common.goals import (
    DEFAULT_INPUT_MEMORY,
    DEFAULT_MEMORY_GOAL,
    DEFAULT_PLACEMENT,
    DEFAULT_PRECISION,
    DEFAULT_STAGE_WEIGHTS,
    DEFAULT_WEIGHT_BITS,
    INPUT_MEMORIES,
    PLACEMENTS,
    STAGE_WEIGHTS,
    PrecisionSetting,
    WeightSetting,
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
    weights: WeightSetting = DEFAULT_WEIGHT_BITS  # "int4": 4-bit weights (lower/weight_bits.py); "auto"
    weights_for: tuple[str, ...] = ()  # per-layer overrides, "PART=int8" / "PART=int4"
    sqnr_target: float | None = None  # weights = / precision = "auto": the output's SQNR to keep / reach (dB)
    precision: PrecisionSetting = DEFAULT_PRECISION  # "int16": 16-bit activations (lower/activation_bits.py); "auto"
    precision_for: tuple[str, ...] = ()  # per-layer overrides, "PART=int8" / "PART=int16"
    per_channel_linear: bool = False  # linear weights a scale per output channel (lower/linear_per_channel.py)

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
    stage_weights: str = DEFAULT_STAGE_WEIGHTS  # convolution weights widened into scratch (common/goals.py)
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
        weights: WeightSetting = DEFAULT_WEIGHT_BITS,
        weights_for: tuple[str, ...] = (),
        sqnr_target: float | None = None,
        precision: PrecisionSetting = DEFAULT_PRECISION,
        precision_for: tuple[str, ...] = (),
        per_channel_linear: bool = False,
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
            weights=weights,
            weights_for=tuple(weights_for),
            sqnr_target=sqnr_target,
            precision=precision,
            precision_for=tuple(precision_for),
            per_channel_linear=per_channel_linear,
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


def split_spec(value: str) -> tuple[str, str]:
    """`dir/model.py:Net` -> (`dir/model.py`, `:Net`); any other value is a plain path."""
    head, _, attr = value.rpartition(":")
    return (head, f":{attr}") if head.endswith(".py") else (value, "")


def _resolve(base: Path, value: str | None) -> str | None:
    if value is None:
        return None
    file_part, attr = split_spec(value)
    return os.path.normpath(base / file_part) + attr  # an absolute file_part stays absolute


def _resolve_board(base: Path, board: str) -> str:
    """A board file is relative to the project file, like every path in it; a board id is an id."""
    return (_resolve(base, board) or board) if is_board_file(board) else board


def _check_io(path: Path, where: str, io: Any) -> Io:
    if io == "float" or io == "int8":
        return cast(Io, io)
    raise ModelSourceError(f"{path}: {where} io = {io!r} is not known", f"use one of {', '.join(IO_KINDS)}")


def _shape(value: Any) -> str | None:
    return ",".join(str(d) for d in value) if value else None


# The keys a [[model]] table may hold (a misspelt one is refused, not ignored).
MODEL_KEYS = (
    "name",
    "source",
    "input_shape",
    "input",
    "calibration",
    "random_calibration",
    "keep_fp32",
    "io",
    "weights",
    "weights_for",
    "sqnr_target",
    "precision",
    "precision_for",
    "per_channel_linear",
)


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
                **number_formats(path, table, f"[[model]] {name!r}"),
            )
        )
    return entries


class _Shared(TypedDict):
    """The fields of Project that its models share (a one-model [model] also gives `placement`)."""

    board: str
    rtos: str
    output: str | None
    strict: bool
    name: str | None
    delegate: bool
    memory: str
    input_memory: str
    stage_weights: str
    placement: NotRequired[str]


def _shared(path: Path, data: dict[str, Any]) -> _Shared:
    """What the project's models share: [target], [output] and the options of the whole app."""
    base = path.parent
    target = data.get("target", {})
    if "board" not in target:
        raise ModelSourceError(
            f"{path}: [target] board is missing", 'add e.g. board = "mps3-an547" (see cmx-gen boards)'
        )
    options = data.get("options", {})
    return _Shared(
        board=_resolve_board(base, str(target["board"])),
        rtos=target.get("rtos", "baremetal"),
        output=_resolve(base, data.get("output", {}).get("dir")),
        strict=bool(options.get("strict", False)),
        name=options.get("name"),
        delegate=check_bool(path, "[options] delegate", options.get("delegate", True)),
        memory=check_memory(path, options.get("memory", DEFAULT_MEMORY_GOAL)),
        input_memory=check_choice(
            path, "input_memory", options.get("input_memory", DEFAULT_INPUT_MEMORY), INPUT_MEMORIES, "where inputs live"
        ),
        stage_weights=check_choice(
            path,
            "stage_weights",
            options.get("stage_weights", DEFAULT_STAGE_WEIGHTS),
            STAGE_WEIGHTS,
            "whether convolution weights are widened into scratch",
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
            common["name"] = common["name"] or entries[0].name
            return Project(models=(replace(entries[0], name=common["name"]),), **common)
        return Project(models=tuple(entries), separate_arenas=bool(options.get("separate_arenas", False)), **common)
    if "source" not in model:
        raise ModelSourceError(f"{path}: [model] source is missing", 'add e.g. source = "model.py:Net"')
    calibration = data.get("calibration", {})
    common["placement"] = check_choice(
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
        **number_formats(path, options, "[options]"),
        **common,
    )
