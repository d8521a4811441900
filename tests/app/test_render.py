"""Rendering, regeneration and the never-clobber rules, on the real digits sample and templates."""

from __future__ import annotations

import filecmp
from pathlib import Path

from conftest import ROOT, run_cli

from cmx_gen.app import project as project_mod
from cmx_gen.pipeline.generate import generate

DIGITS = ROOT / "samples" / "digits" / "cmx.toml"


def tree(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def test_two_renders_are_byte_identical_and_second_is_cached(tmp_path):
    project = project_mod.load(DIGITS)
    first = generate(project, tmp_path / "a" / "app")
    second = generate(project, tmp_path / "b" / "app")
    assert second.from_cache, "the same model, inputs and target must reuse the cached lowering"
    names = tree(tmp_path / "a" / "app")
    assert names == tree(tmp_path / "b" / "app")
    match, mismatch, errors = filecmp.cmpfiles(tmp_path / "a" / "app", tmp_path / "b" / "app", names, shallow=False)
    assert mismatch == [] and errors == []
    assert "model/model.pte" in names and "cmx.toml" in names and ".cmx-gen/manifest.json" in names
    assert first.render.created and not second.render.updated


def test_edited_generated_file_is_not_overwritten_without_force(tmp_path, capsys):
    app = tmp_path / "app"
    assert run_cli("create", "--config", DIGITS, "-o", app) == 0
    linker = app / "linker.ld"
    edited = linker.read_text() + "\n/* my change */\n"
    linker.write_text(edited)

    assert run_cli("regen", app) == 2
    err = capsys.readouterr().err
    assert "linker.ld" in err and "--force" in err
    assert linker.read_text() == edited, "a refused regen must not touch the file"

    assert run_cli("regen", app, "--force") == 0
    assert "my change" not in linker.read_text()
    backup = app / ".cmx-gen" / "backup" / "linker.ld"
    assert backup.read_text() == edited


def test_user_owned_file_is_never_touched(tmp_path):
    app = tmp_path / "app"
    assert run_cli("create", "--config", DIGITS, "-o", app) == 0
    user = app / "user" / "user.cmake"
    assert user.is_file()
    user.write_text("# mine\n")
    assert run_cli("regen", app) == 0
    assert user.read_text() == "# mine\n"
    assert run_cli("regen", app, "--force") == 0
    assert user.read_text() == "# mine\n", "--force replaces generated files only"


def test_regen_refreshes_stale_generated_files(tmp_path):
    """A generated file cmx-gen wrote and nobody edited is rewritten when its inputs change."""
    app = tmp_path / "app"
    assert run_cli("create", "--config", DIGITS, "-o", app) == 0
    toml = app / "cmx.toml"
    # Point the project at another board of the same core: the linker script must follow.
    toml.write_text(toml.read_text().replace('board = "mps3-an547"', 'board = "corstone300-fvp"'))
    before = (app / "linker.ld").read_text()
    # cmx.toml is the input of regen: rewritten from itself, an edit to it is no conflict.
    assert run_cli("regen", app) == 0
    assert (app / "linker.ld").read_text() != before


def test_files_not_made_by_cmx_gen_are_conflicts(tmp_path, capsys):
    app = tmp_path / "app"
    app.mkdir()
    (app / "CMakeLists.txt").write_text("project(mine)\n")
    assert run_cli("create", "--config", DIGITS, "-o", app) == 2
    assert "CMakeLists.txt" in capsys.readouterr().err
    assert (app / "CMakeLists.txt").read_text() == "project(mine)\n"


def test_app_readme_shows_this_models_result_line_and_ownership(tmp_path):
    """The README's example result line carries this model's predicted pools (not another
    sample's), and its Files table lists user/ as the user's."""
    import json
    import re

    project = project_mod.load(DIGITS)
    done = generate(project, tmp_path / "app")
    readme = (tmp_path / "app" / "README.md").read_text()
    line = re.search(r"^cmx-gen: PASS .*$", readme, re.M).group(0)
    placement = json.loads((tmp_path / "app" / "model" / "placement.json").read_text())
    method = done.artifacts.report.memory.method_allocator_bytes
    planned = sum(placement["planned_buffer_sizes"])
    assert f"method={method}/{placement['method_pool_bytes']}" in line
    assert f"planned={planned}/{planned}" in line and f"stack=S/{placement['stack_bytes']}" in line
    assert "1811781" not in readme, "no figures of another model"
    assert re.search(r"^\| `user/main.c` \|.*never touches it", readme, re.M)
    assert re.search(r"^\| `user/user.cmake` \|.*never touches it", readme, re.M)
    # platform/ is generated: regen refuses to overwrite an edit, as render.py does
    assert re.search(r"^\| `platform/` \|.*`cmx-gen regen` stops rather than overwrite your edits", readme, re.M)
    # what the README offers to run exists on this board: flash refuses QEMU-only boards, so it says so
    assert "cmx-gen run . --profile" in readme and "no flash runner" in readme


_KILLED_SYNC = """
import os, signal, sys
from pathlib import Path
from cmx_gen.app import render
calls, kill_at = [0], int(sys.argv[3])
real_replace = os.replace
def replace(src, dst):  # SIGKILL this process at the kill_at-th rename of the update
    calls[0] += 1
    if calls[0] == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)
    real_replace(src, dst)
os.replace = replace
render.sync(Path(sys.argv[1]), Path(sys.argv[2]), render.TemplateSpec(shared=[], user_owned=["user/*"]))
"""


def _stage(folder: Path, version: str, files: list[str]) -> Path:
    for rel in files:
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(f"{rel} {version}\n")
    return folder


def test_an_update_killed_at_any_rename_leaves_the_old_app_or_the_new_one(tmp_path):
    """SIGKILL inside the update (before, at and after its commit point): the next command that opens
    the app sees all of the old app or all of the new one, and the user's file as they left it."""
    import subprocess
    import sys

    from cmx_gen.app import render
    from cmx_gen.app.folder import AppFolder

    spec = render.TemplateSpec(shared=[], user_owned=["user/*"])
    old_files, new_files = ["a.c", "b.c", "gone.c", "user/main.c"], ["a.c", "b.c", "c.c", "user/main.c"]
    new = _stage(tmp_path / "new", "new", new_files)
    seen = set()
    for kill_at in range(1, 6):  # 1: the journal's rename (nothing committed); 2-4: the 3 files; 5: the manifest
        app = tmp_path / f"app{kill_at}"
        render.sync(_stage(tmp_path / f"old{kill_at}", "old", old_files), app, spec)
        (app / "user" / "main.c").write_text("my edits\n")
        child = subprocess.run([sys.executable, "-c", _KILLED_SYNC, str(new), str(app), str(kill_at)])
        assert child.returncode == -9, "the child must have been killed inside the update"
        AppFolder(app)  # opening it settles the interrupted update
        state = "new" if (app / "c.c").exists() else "old"
        seen.add(state)
        files = new_files if state == "new" else old_files
        for rel in files[:-1]:
            assert (app / rel).read_text() == f"{rel} {state}\n", (
                f"kill at rename {kill_at}: {rel} is not the {state} app's"
            )
        assert sorted(
            p.relative_to(app).as_posix() for p in app.rglob("*") if p.is_file() and ".cmx-gen" not in p.parts
        ) == sorted(files)
        assert (app / "user" / "main.c").read_text() == "my edits\n"
        assert render.sync(new, app, spec).summary().startswith("0 created" if state == "new" else "1 created")
    assert seen == {"old", "new"}
