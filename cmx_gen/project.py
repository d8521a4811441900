"""`cmx.toml`, the project file: everything `cmx-gen create` needs, so `regen` can redo it.

Paths inside are relative to the file. `create --config cmx.toml` reads one (command-line
options win); `create` writes one into the app, pointing back at the model, so that
`cmx-gen regen APP` needs no options.

    [model]        source = "model.py:Net"     input_shape = [1, 1, 49, 10]   (optional)
                   input = "x.npz"             (optional, a .pte's check input: see --input)
    [calibration]  file = "cal.npz"            random = false                 (both optional)
    [target]       board = "mps3-an547"        rtos = "baremetal" | "zephyr"
    [output]       dir = "build/app"
    [options]      strict = true               name = "digits"                (both optional)
                   keep_fp32 = ["model.py:15"] (optional: parts left in float, see --keep-fp32)
                   io = "int8"                 (optional: int8 model inputs/outputs, see --io)
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

from cmx_gen.apps import APP_KINDS
from cmx_gen.errors import ModelSourceError

FILE_NAME = "cmx.toml"
IO_KINDS = ("float", "int8")  # the model's inputs/outputs (cmx_gen/int8_io.py)


@dataclass
class Project:
    model: str  # model spec with an absolute (or cwd-relative) path
    board: str
    rtos: str = "baremetal"
    output: str | None = None
    input_shape: str | None = None
    calibration: str | None = None
    random_calibration: bool = False
    given_input: str | None = None  # a .pte's check input ([model] input)
    strict: bool = False
    name: str | None = None
    keep_fp32: list[str] = field(default_factory=list)
    io: str = "float"  # "int8": the program takes and returns int8 (int8_io.py)

    def app_name(self) -> str:
        """CMake/Zephyr project name: from the model, so two renders of one model are identical."""
        if self.name:
            return self.name
        path = Path(self.model.rpartition(":")[0] or self.model)
        stem = path.parent.name if path.stem == "model" else path.stem
        clean = "".join(c if c.isalnum() else "_" for c in stem.lower()).strip("_")
        return clean or "cmx_app"


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


def load(path: Path) -> Project:
    """Read a cmx.toml; a missing key or bad value gives a one-line error naming it."""
    if path.is_dir():
        path = path / FILE_NAME
    if not path.is_file():
        raise ModelSourceError(f"{path} not found", "give the project file (cmx.toml) or an app folder created by cmx-gen create")
    try:
        data: dict[str, Any] = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ModelSourceError(f"{path} is not valid TOML: {exc}", "fix the syntax in that line") from exc
    base = path.parent
    model = data.get("model", {})
    target = data.get("target", {})
    if "source" not in model:
        raise ModelSourceError(f"{path}: [model] source is missing", 'add e.g. source = "model.py:Net"')
    if "board" not in target:
        raise ModelSourceError(f"{path}: [target] board is missing", 'add e.g. board = "mps3-an547" (see cmx-gen boards)')
    rtos = target.get("rtos", "baremetal")
    if rtos not in APP_KINDS:
        raise ModelSourceError(f"{path}: [target] rtos = {rtos!r} is not known", f"use one of {', '.join(APP_KINDS)}")
    io = data.get("options", {}).get("io", "float")
    if io not in IO_KINDS:
        raise ModelSourceError(f"{path}: [options] io = {io!r} is not known", f"use one of {', '.join(IO_KINDS)}")
    shape = model.get("input_shape")
    calibration = data.get("calibration", {})
    options = data.get("options", {})
    return Project(
        model=_resolve(base, model["source"]) or "",
        board=target["board"],
        rtos=rtos,
        output=_resolve(base, data.get("output", {}).get("dir")),
        input_shape=",".join(str(d) for d in shape) if shape else None,
        calibration=_resolve(base, calibration.get("file")),
        given_input=_resolve(base, model.get("input")),
        random_calibration=bool(calibration.get("random", False)),
        strict=bool(options.get("strict", False)),
        name=options.get("name"),
        keep_fp32=[str(p) for p in options.get("keep_fp32", [])],
        io=io,
    )


def dumps(project: Project, base: Path) -> str:
    """The cmx.toml text for `project`, with paths relative to `base` (the folder it goes in)."""
    data: dict[str, Any] = {"model": {"source": _relative(base, project.model)}}
    if project.input_shape:
        data["model"]["input_shape"] = [int(d) for d in project.input_shape.replace("x", ",").split(",")]
    if project.given_input:
        data["model"]["input"] = _relative(base, project.given_input)
    calibration: dict[str, Any] = {"random": project.random_calibration}
    if project.calibration:
        calibration["file"] = _relative(base, project.calibration)
    data["calibration"] = calibration
    data["target"] = {"board": project.board, "rtos": project.rtos}
    data["output"] = {"dir": "."}
    data["options"] = {"strict": project.strict, "name": project.app_name()}
    if project.keep_fp32:
        data["options"]["keep_fp32"] = list(project.keep_fp32)
    if project.io != "float":
        data["options"]["io"] = project.io
    header = "# cmx-gen project file: `cmx-gen regen .` redoes the app from it. Paths are relative to this file.\n"
    return header + tomli_w.dumps(data)
