"""An app folder made by `cmx-gen create`: its layout in one place, and its kind from cmx.toml.

cmx.toml                  the project (board, rtos, model, options): `regen` redoes the app from it
model/report.json         the lowering report (docs/report.md)
model/placement.json      where everything goes on the board
model/<name>/             an app of several models: each model's report, program and reference
build/*.elf               the bare-metal image (`cmx-gen build`); build/zephyr/zephyr.elf for Zephyr
build-profile/, build-trace/   the diagnostic images (`cmx-gen run --profile / --trace`)
build-models/<name>/      an app of several models: a one-model app of each, for those images and `run --data`
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from cmx_gen.app import txn as app_txn
from cmx_gen.common.errors import AppError, RunError
from cmx_gen.fit.boards import Board, is_board_file, load_board

MODEL_APPS = "build-models"  # an app of several models: each model's one-model app (pipeline/one_model.py)

if TYPE_CHECKING:
    from cmx_gen.fit.memory import Placement
    from cmx_gen.program.report import Report


class AppFolder:
    def __init__(self, path: Path) -> None:
        """Open an app; an update a killed `create`/`regen` left is finished or dropped first, so
        that what is built and run is one whole app (app/txn.py)."""
        self.path = Path(path)
        if self.path.is_dir():
            app_txn.recover(self.path)

    @property
    def kind(self) -> str:
        """The app kind cmx.toml names (`rtos`): every app `create` renders has one."""
        from cmx_gen.app import project as project_mod

        project = self.path / project_mod.FILE_NAME
        if not project.is_file():
            what = "does not exist" if not self.path.exists() else f"has no {project_mod.FILE_NAME}"
            raise AppError(
                f"{self.path} {what}: it is not an app `cmx-gen create` made",
                "pass the folder given to `cmx-gen create ... -o APP`",
            )
        return project_mod.load(project).rtos

    def board(self) -> Board:
        """The board it was rendered for: model/placement.json names it; a board of a file of the
        user's is found again through cmx.toml, which keeps its path."""
        from cmx_gen.app import project as project_mod

        placement = self.path / "model" / "placement.json"
        rendered = json.loads(placement.read_text())["board_id"] if placement.is_file() else None
        project = self.path / project_mod.FILE_NAME
        spec = project_mod.load(project).board if project.is_file() else None
        if spec is not None and (rendered is None or is_board_file(spec)):
            board = load_board(spec)
            if rendered is not None and board.id != rendered:
                raise RunError(
                    f"{self.path} was made for board {rendered}; its {project_mod.FILE_NAME} names {spec} ({board.id})",
                    f"run `cmx-gen regen {self.path}` to remake it for {board.id}",
                )
            return board
        if rendered is not None:
            return load_board(rendered)
        raise RunError(
            f"{self.path} does not say which board it is for (no model/placement.json or cmx.toml)",
            "pass an app folder made by `cmx-gen create`",
        )

    def model_names(self) -> list[str]:
        """An app of several models: their names, in the order they run (model/placement.json);
        empty for an app of one."""
        placement = self.path / "model" / "placement.json"
        if not placement.is_file():
            return []
        return [m["name"] for m in json.loads(placement.read_text()).get("models", [])]

    def model_dir(self, name: str | None = None) -> Path:
        """Where a model's report, program and reference are: model/ (one model), model/<name>/."""
        return self.path / "model" / name if name else self.path / "model"

    def report(self, name: str | None = None) -> Report:
        """The lowering report of the app's model (of model `name` in an app of several)."""
        from cmx_gen.program.report import load_json

        names = self.model_names()
        if names and name is None:
            raise AppError(
                f"{self.path} holds {len(names)} models ({', '.join(names)}) and this step takes one",
                "make a one-model app of the model you want to look at (the program is the same)",
            )
        return load_json(self.model_dir(name) / "report.json")

    def placement(self) -> Placement:
        from cmx_gen.fit.memory import Placement

        return Placement.from_dict(json.loads((self.path / "model" / "placement.json").read_text()))

    def reference_outputs(self, name: str | None = None) -> dict[int, bytes]:
        """The check's expected output bytes by output index (model[/<name>]/reference_output_<i>.bin)."""
        return {
            int(p.stem.rsplit("_", 1)[1]): p.read_bytes()
            for p in sorted(self.model_dir(name).glob("reference_output_*.bin"))
        }

    def verdict(self, line: str, model_lines: list[str] | None = None) -> list[str]:
        """The result line (each model's first in an app of several), then how far ExecuTorch's
        Python reference is from the checked one."""
        from cmx_gen.program.report_text import reference_note

        names: list[str | None] = [*self.model_names()] or [None]
        notes = []
        for name in names:
            if (self.model_dir(name) / "report.json").is_file():
                note = reference_note(self.report(name))
                if note:
                    notes.append(f"note: {name + ': ' if name else ''}{note}")
        return [*(model_lines or []), line, *notes]
