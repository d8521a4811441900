"""The tools that hold the code to its rules run from the test command, so `.ci/run` fails on them
like on a failing test (issue 35): ruff's lint rules and its formatting ([tool.ruff] in
pyproject.toml), and mypy ([tool.mypy]: strict on lower/, program/ and the report's record base).
Each check is also shown to fail on a file that breaks it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cmx_gen.common.paths import executable

ROOT = Path(__file__).resolve().parents[1]
CODE = ("cmx_gen", "bench", "tests", "setup.py")


def _ruff(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([executable("ruff"), *args, "--no-cache"], cwd=cwd, capture_output=True, text=True)


def _mypy(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
    )


def _scratch(tmp_path: Path, name: str, text: str) -> Path:
    """A copy of the repository's tool settings beside one file."""
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    (tmp_path / name).write_text(text)
    return tmp_path / name


def test_the_code_passes_ruff() -> None:
    done = _ruff("check", "--output-format", "concise", *CODE)
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_fails_an_unused_import(tmp_path: Path) -> None:
    _scratch(tmp_path, "bad.py", "import os\n")
    done = _ruff("check", "--output-format", "concise", "bad.py", cwd=tmp_path)
    assert done.returncode == 1 and "F401" in done.stdout


def test_the_code_is_formatted() -> None:
    done = _ruff("format", "--check", *CODE)
    assert done.returncode == 0, f"run `ruff format` on these:\n{done.stdout}{done.stderr}"


def test_format_check_fails_an_unformatted_file(tmp_path: Path) -> None:
    _scratch(tmp_path, "messy.py", "x = {  'a':1 }\n")
    done = _ruff("format", "--check", "messy.py", cwd=tmp_path)
    assert done.returncode == 1 and "messy.py" in done.stdout


def test_the_code_passes_mypy() -> None:
    done = _mypy()
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_is_strict_on_the_lowering(tmp_path: Path) -> None:
    """An untyped join in lower/ fails (strict there), the same function in app/ passes (not strict)."""
    join = "def join(records):\n    return records\n"
    for package in ("cmx_gen", "cmx_gen/lower", "cmx_gen/app"):
        (tmp_path / package).mkdir(exist_ok=True)
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "cmx_gen/lower/scratch.py").write_text(join)
    (tmp_path / "cmx_gen/app/scratch.py").write_text(join)
    strict = _mypy("--cache-dir", str(tmp_path / ".mypy"), "cmx_gen/lower/scratch.py", cwd=tmp_path)
    assert strict.returncode == 1 and "no-untyped-def" in strict.stdout, strict.stdout
    loose = _mypy("--cache-dir", str(tmp_path / ".mypy"), "cmx_gen/app/scratch.py", cwd=tmp_path)
    assert loose.returncode == 0, loose.stdout
