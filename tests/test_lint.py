"""ruff holds the code to its rules ([tool.ruff] in pyproject.toml) from the test command, so `.ci/run`
fails on an unused import or an undefined name like on a failing test (issue 35)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cmx_gen.common.paths import executable

ROOT = Path(__file__).resolve().parents[1]


def _ruff(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([executable("ruff"), "check", "--no-cache", "--output-format", "concise", *args],
                          cwd=cwd, capture_output=True, text=True)


def test_the_code_passes_ruff() -> None:
    done = _ruff("cmx_gen", "bench", "tests", "setup.py")
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_fails_an_unused_import(tmp_path: Path) -> None:
    """The check can fail: the repository's rules applied to a file with an unused import."""
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    (tmp_path / "bad.py").write_text("import os\n")
    done = _ruff("bad.py", cwd=tmp_path)
    assert done.returncode == 1 and "F401" in done.stdout
