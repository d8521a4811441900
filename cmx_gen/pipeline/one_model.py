"""`run --profile`, `--trace` and `--data` on an app of several models, one model at a time: each of those
images (and the data stream) is one model's, so cmx-gen makes a one-model app of each model in
APP/build-models/<name>/ (the same program: the lowering is cached, the model's options and the board
are the app's) and runs it there."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from cmx_gen.app import project as project_mod
from cmx_gen.app.folder import MODEL_APPS, AppFolder
from cmx_gen.common.errors import RunError
from cmx_gen.pipeline.run_outcome import Outcome


def one_model_app(app: AppFolder, name: str) -> AppFolder:
    """The one-model app of model `name` of `app`, made (or brought up to date) in APP/build-models/<name>/."""
    from cmx_gen.pipeline.generate import generate

    project = project_mod.load(app.path)
    entries = {entry.model_name(): entry for entry in project.models}
    if name not in entries:
        raise RunError(f"{app.path} has no model {name!r}", f"name one of: {', '.join(entries)}")
    folder = app.path / MODEL_APPS / name
    one = replace(
        project, models=(replace(entries[name], name=name),), name=name, output=str(folder), separate_arenas=False
    )
    generate(one, folder)
    return AppFolder(folder)


def each_model(app: AppFolder, run: Callable[[AppFolder], Outcome]) -> Outcome:
    """`run` on the one-model app of each model, in the order the firmware runs them; the worst status."""
    lines: list[str] = []
    status = 0
    for name in app.model_names():
        one = one_model_app(app, name)
        outcome = run(one)
        lines += [f"model      {name} (its one-model app: {one.path})", *outcome.lines]
        status = max(status, outcome.status)
    return Outcome(tuple(lines), status)
