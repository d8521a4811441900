"""Render an app folder from a template, the lowering outputs, a board and a placement.

Rendering happens in a staging folder first; only then is the app folder brought up to date,
under two rules that keep a user's work safe:

- **user-owned** files (listed in the template's `cmx_template.yaml`) are created once and never
  touched again;
- **generated** files are rewritten only while they still hold what cmx-gen wrote last time
  (hashes in `.cmx-gen/manifest.json`). A generated file the user edited is a conflict: nothing is
  written and the error lists the files; `force=True` replaces them and keeps a backup in
  `.cmx-gen/backup/`.

Output is deterministic: the same inputs give byte-identical apps (no timestamps, sorted manifest).
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import json
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cmx_gen import __version__
from cmx_gen.app import model_files, project_file, shared_files, slot_files, template_context
from cmx_gen.app import project as project_mod
from cmx_gen.app import txn as app_txn
from cmx_gen.app.kinds import AppKind, app_kind
from cmx_gen.app.template_context import TemplateContext
from cmx_gen.app.txn import MANIFEST, STATE_DIR
from cmx_gen.common.errors import RenderError
from cmx_gen.common.paths import shared_path
from cmx_gen.fit.boards import Board, ModelSlot
from cmx_gen.fit.memory import Placement
from cmx_gen.program.artifacts import Artifacts

BACKUP_DIR = f"{STATE_DIR}/backup"


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class SharedSource(_Spec):
    """A folder or file of cmx-gen's copied into every app of the kind (`from` the repo, `to` the app)."""

    from_: str = Field(alias="from")
    to: str


class TemplateOutput(_Spec):
    """A file rendered from the kind's templates/ folder: once, per item of a list (`for_each`,
    the item named `as`), and only `when` its condition holds."""

    template: str
    to: str
    for_each: str | None = None
    as_: str | None = Field(default=None, alias="as")
    when: str | None = None


class TemplateSpec(_Spec):
    """`templates/<kind>_app/cmx_template.yaml`: shared sources to copy in, user-owned files, and
    outputs made per item of a list or under a condition (`for_each`, `as`, `when`)."""

    shared: list[SharedSource] = []
    user_owned: list[str] = []
    outputs: list[TemplateOutput] = []

    @classmethod
    def load(cls, template_dir: Path) -> TemplateSpec:
        path = template_dir / "cmx_template.yaml"
        try:
            return cls.model_validate(yaml.safe_load(path.read_text()) or {})
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise RenderError(f"{path}: {where}: {first['msg']}", "fix the template's cmx_template.yaml") from exc

    def is_user_owned(self, rel: str) -> bool:
        return any(fnmatch.fnmatchcase(rel, pattern) for pattern in self.user_owned)


@dataclass
class RenderResult:
    app_dir: Path
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    kept_user_files: list[str] = field(default_factory=list)
    backed_up: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    def summary(self) -> str:
        parts = [f"{len(self.created)} created", f"{len(self.updated)} updated", f"{len(self.unchanged)} unchanged"]
        if self.kept_user_files:
            parts.append(f"{len(self.kept_user_files)} user-owned kept")
        if self.backed_up:
            parts.append(f"{len(self.backed_up)} replaced (backups in {BACKUP_DIR}/)")
        if self.removed:
            parts.append(f"{len(self.removed)} removed")
        return ", ".join(parts)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def handle_names(project: project_mod.Project) -> list[str]:
    """The name behind each model's API handle: the app's for an app of one model (as it always
    was), each model's own in an app of several."""
    if not project.several:
        return [project.app_name()]
    return [entry.model_name() for entry in project.models]


def _write_models(
    model_dir: Path, models: dict[str, Artifacts], placement: Placement, pte_section: str, slots: Sequence[ModelSlot]
) -> None:
    """APP/model/: one model's files and the app-wide ones in one folder, or, for several models,
    each model's in model/<name>/ and the ones they share (handles, kernels, arena) in model/;
    each program in `pte_section` (the kind's), or in model_slot.bin with `slots` (placement = "slot")."""

    def report_json(folder: Path, artifacts: Artifacts) -> None:
        (folder / "report.json").write_text(json.dumps(artifacts.report.to_dict(), indent=2) + "\n")

    if len(models) == 1:
        ((name, artifacts),) = models.items()
        write = (
            functools.partial(slot_files.write_slot_model_files, slots=slots)
            if slots
            else model_files.write_model_files
        )
        write(model_dir, artifacts.pte, artifacts.report, artifacts.reference, placement, pte_section, name)
        report_json(model_dir, artifacts)
        return
    shared = (
        (sum(placement.planned_buffer_sizes), placement.temp_pool_bytes) if placement.arena_layout == "shared" else None
    )
    pools = {p.name: p for p in placement.models}
    for name, artifacts in models.items():
        own = model_files.Pools(pools[name].method_pool_bytes, pools[name].temp_pool_bytes, shared=shared is not None)
        model_files.write_files(
            model_dir / name,
            model_files.model_files(
                artifacts.pte,
                artifacts.report,
                artifacts.reference,
                own,
                pte_section,
                name,
                model_files.Symbols.of(name),
            ),
        )
        report_json(model_dir / name, artifacts)
    first = next(iter(models.values()))
    model_files.write_files(
        model_dir, shared_files.app_files({n: a.pte for n, a in models.items()}, first.report, list(models), shared)
    )


def _stage(
    kind: AppKind,
    ctx: TemplateContext,
    own: Mapping[str, object],
    spec: TemplateSpec,
    models: dict[str, Artifacts],
    placement: Placement,
    slots: Sequence[ModelSlot],
    project_text: str,
    tmp: Path,
) -> Path:
    from cookiecutter.generate import generate_files

    template_dir = kind.template_dir()
    defaults = json.loads((template_dir / "cookiecutter.json").read_text())
    cookie: dict[str, object] = {**defaults, **ctx, **own}
    generate_files(
        repo_dir=str(template_dir), context={"cookiecutter": cookie}, output_dir=str(tmp), overwrite_if_exists=True
    )
    stage = tmp / ctx["app_dir"]
    _render_outputs(template_dir, spec.outputs, cookie, stage)
    for item in spec.shared:
        source, dest = shared_path(item.from_), stage / item.to
        if source.is_dir():
            shutil.copytree(source, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest)
    _write_models(stage / "model", models, placement, kind.pte_section, slots)
    (stage / "model" / "placement.json").write_text(json.dumps(ctx["placement"], indent=2) + "\n")
    (stage / project_mod.FILE_NAME).write_text(project_text)
    return stage


def _render_outputs(
    template_dir: Path, outputs: list[TemplateOutput], cookie: Mapping[str, object], stage: Path
) -> None:
    """cmx_template.yaml `outputs`, rendered with cookiecutter's own Jinja environment (so they
    read like the template's other files) from the kind's templates/ folder."""
    from cookiecutter.environment import StrictEnvironment
    from jinja2 import FileSystemLoader

    env = StrictEnvironment(context={"cookiecutter": cookie}, keep_trailing_newline=True)
    env.loader = FileSystemLoader(str(template_dir / "templates"))
    base = {"cookiecutter": cookie}
    for out in outputs:
        items = env.compile_expression(out.for_each)(**base) if out.for_each else [None]
        for item in items:
            scope = {**base, out.as_ or "item": item} if out.for_each else base
            if out.when and not env.compile_expression(out.when)(**scope):
                continue
            path = stage / env.from_string(out.to).render(**scope)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(env.get_template(out.template).render(**scope))


def _staged_files(stage: Path) -> dict[str, Path]:
    return {p.relative_to(stage).as_posix(): p for p in sorted(stage.rglob("*")) if p.is_file()}


def _load_manifest(app: Path) -> dict[str, dict[str, str]]:
    path = app / MANIFEST
    if not path.is_file():
        return {}
    return json.loads(path.read_text()).get("files", {})


def _backup(app: Path, rel: str) -> str:
    target = app / BACKUP_DIR / rel
    candidate, n = target, 1
    while candidate.exists():
        candidate = target.with_name(f"{target.name}.{n}")
        n += 1
    candidate.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(app / rel, candidate)
    return candidate.relative_to(app).as_posix()


def sync(stage: Path, app: Path, spec: TemplateSpec, force: bool = False) -> RenderResult:
    """Bring `app` up to date with `stage` without losing user edits (see module docstring), all
    or nothing (app/txn.py)."""
    app_txn.recover(app)
    old = _load_manifest(app)
    staged = _staged_files(stage)
    result = RenderResult(app_dir=app)
    plan: list[tuple[str, Path, str]] = []  # (rel, source, action)
    conflicts: list[str] = []
    for rel, source in staged.items():
        dest = app / rel
        new = source.read_bytes()
        if spec.is_user_owned(rel):
            if dest.exists():
                result.kept_user_files.append(rel)
            else:
                plan.append((rel, source, "create"))
            continue
        if not dest.exists():
            plan.append((rel, source, "create"))
            continue
        current = dest.read_bytes()
        if current == new:
            result.unchanged.append(rel)
        elif rel in old and old[rel]["sha256"] == _sha(current):
            plan.append((rel, source, "update"))
        else:
            conflicts.append(rel)
            plan.append((rel, source, "replace"))
    stale = [rel for rel, entry in old.items() if rel not in staged and entry.get("owner") == "generated"]
    if conflicts and not force:
        shown = ", ".join(conflicts[:8]) + (f" and {len(conflicts) - 8} more" if len(conflicts) > 8 else "")
        raise RenderError(
            f"{len(conflicts)} generated file(s) in {app} were edited or not made by cmx-gen: {shown}",
            "move your changes to a user-owned file, or re-run with --force to replace them (backups go to "
            f"{app / BACKUP_DIR})",
        )

    for rel, _source, action in plan:
        if action == "replace":  # a copy: harmless if the update is then dropped
            result.backed_up.append(_backup(app, rel))
        (result.created if action == "create" else result.updated).append(rel)
    for rel in stale:
        dest = app / rel
        if dest.is_file() and _sha(dest.read_bytes()) == old[rel]["sha256"]:
            result.removed.append(rel)

    manifest = {
        rel: {"sha256": _sha(path.read_bytes()), "owner": "user" if spec.is_user_owned(rel) else "generated"}
        for rel, path in staged.items()
    }
    app_txn.commit(
        app,
        [(rel, source) for rel, source, _ in plan],
        result.removed,
        json.dumps({"cmx_gen_version": __version__, "files": manifest}, indent=1, sort_keys=True) + "\n",
    )
    return result


def _for_app(artifacts: Artifacts, model: str) -> Artifacts:
    """The report as the app records it, the same for the same inputs: no timings, and the model
    named by file and class only (a cached lowering may come from a run that used another path;
    cmx.toml holds the path)."""
    file_part, _, attr = model.rpartition(":") if ":" in model else (model, "", "")
    report = artifacts.report.for_app(Path(file_part).name + (f":{attr}" if attr else ""))
    return Artifacts(artifacts.pte, report, artifacts.reference)


def check_destination(app: Path, force: bool = False) -> None:
    """Before any slow step: the app folder must be new, empty, or an app cmx-gen made, so that
    rendering never mixes its files into someone else's folder (with --force it may)."""
    if app.exists() and not app.is_dir():
        raise RenderError(f"{app} is a file, not a folder", "give -o a new or empty folder (or an app cmx-gen created)")
    if app.is_dir():
        app_txn.recover(app)  # a first `create` killed before it committed leaves only its state folder
    if not app.is_dir() or (app / MANIFEST).is_file() or force:
        return
    entries = sorted(p.name for p in app.iterdir() if not (p.name == STATE_DIR and not any(p.iterdir())))
    if entries:
        shown = ", ".join(entries[:3]) + (", ..." if len(entries) > 3 else "")
        raise RenderError(
            f"{app} is a non-empty folder cmx-gen did not create ({len(entries)} entries: {shown})",
            "give -o a new or empty folder, or pass --force to render into it (files it replaces are backed up)",
        )


def render_app(
    project: project_mod.Project,
    artifacts: Sequence[Artifacts],
    board: Board,
    placement: Placement,
    app: Path,
    force: bool = False,
) -> RenderResult:
    """Render the `project.rtos` template into `app` (created if missing); `artifacts`: the lowering
    of each of the project's models, in its order."""
    kind = app_kind(project.rtos)
    kind.check_board(board)  # generate() asked before lowering; a direct caller is asked here
    template_dir = kind.template_dir()
    if not (template_dir / "cookiecutter.json").is_file():
        raise RenderError(
            f"no template for app kind {project.rtos!r} in {template_dir}",
            "give the kind a cookiecutter template (cookiecutter.json, cmx_template.yaml)",
        )
    lowered = list(artifacts)
    if any(not a.reference for a in lowered):
        raise RenderError(
            "the app needs reference outputs to check itself, and an analysed .pte has none",
            "give the model source (.py or .pt2) instead of the .pte",
        )
    spec = TemplateSpec.load(template_dir)
    models = {
        name: _for_app(a, entry.source)
        for name, a, entry in zip(handle_names(project), lowered, project.models, strict=True)
    }
    ctx = template_context.context(project, models, board, placement)
    # what the kind's own template needs beyond the shared context (opaque here: it goes to the template)
    own = kind.context(ctx, next(iter(models.values())).report, placement, board)
    app.mkdir(parents=True, exist_ok=True)
    slots = board.model_slots if project.placement == "slot" else []
    with tempfile.TemporaryDirectory(prefix="cmx-render-") as tmp:
        stage = _stage(kind, ctx, own, spec, models, placement, slots, project_file.dumps(project, app), Path(tmp))
        return sync(stage, app, spec, force=force)
