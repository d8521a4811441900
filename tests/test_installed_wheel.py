"""cmx-gen installed as a user installs it (a wheel in a virtualenv of its own, not the clone's
editable copy), run in a folder with no clone: it lists boards, copies the digits sample and
creates its app; with the SDK it builds and runs that app to PASS.

The new virtualenv gets its dependencies (torch, executorch, ...) from the test's own environment
through a .pth line, since installing them again would take gigabytes; cmx-gen itself comes only
from the wheel (the test checks where it imports from)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest
from conftest import FIRMWARE

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _tracked_copy(dest: Path) -> Path:
    """The clone's tracked files as they are in the working tree (what a wheel is built from)."""
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True, check=True).stdout
    for rel in filter(None, listed.decode().split("\0")):
        src = REPO / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("installed")
    source = _tracked_copy(root / "src")
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(source),
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(root / "dist"),
        ],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    wheel = next((root / "dist").glob("cmx_gen-*.whl"))
    env_dir = root / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (site / "cmx_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q", str(wheel)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    work = root / "work"
    work.mkdir()
    return {"root": root, "python": python, "cli": env_dir / "bin" / "cmx-gen", "work": work, "site": site}


def _run(installed: dict[str, Path], *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["CMX_GEN_CACHE"] = str(installed["root"] / "cache")
    return subprocess.run(
        [str(installed["cli"]), *args], cwd=installed["work"], env=env, capture_output=True, text=True, timeout=timeout
    )


def test_the_wheel_holds_what_the_tool_reads(installed: dict[str, Path]) -> None:
    where = subprocess.run(
        [
            str(installed["python"]),
            "-c",
            "import cmx_gen, cmx_gen.common.paths as p; "
            "print(cmx_gen.__file__); print(p.TEMPLATES_DIR); print(p.KERNELS_DIR)",
        ],
        cwd=installed["work"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert all(Path(w).is_relative_to(installed["site"]) for w in where), where
    for folder in ("templates", "boards", "kernels", "samples"):
        tracked = subprocess.run(
            ["git", "-C", str(REPO), "ls-files", folder], capture_output=True, text=True, check=True
        ).stdout.split()
        shipped = installed["site"] / "cmx_gen" / "_share"
        missing = [t for t in tracked if not (shipped / t).is_file() and not Path(t).name.startswith(".")]
        assert not missing, f"not in the wheel: {missing[:5]}"
    # Every module and data file of the package (a folder without __init__.py is left out by the build).
    package = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "cmx_gen"], capture_output=True, text=True, check=True
    ).stdout.split()
    missing = [t for t in package if not (installed["site"] / t).is_file()]
    assert not missing, f"not in the wheel: {missing[:5]}"


def test_boards_and_create_from_an_installed_copy(installed: dict[str, Path]) -> None:
    boards = _run(installed, "boards")
    assert boards.returncode == 0, boards.stderr
    assert "mps3-an547" in boards.stdout and "rpi-pico2" in boards.stdout

    missing = _run(installed, "create", "--config", "samples/digits/cmx.toml")
    assert missing.returncode == 2 and "cmx-gen samples digits" in missing.stderr, missing.stderr

    copied = _run(installed, "samples", "digits")
    assert copied.returncode == 0, copied.stderr
    created = _run(installed, "create", "--config", "samples/digits/cmx.toml")
    assert created.returncode == 0, created.stderr[-3000:]
    app = installed["work"] / "samples/digits/build/app"
    assert (app / "cmx/kernels/CMakeLists.txt").is_file() and (app / "user/main.c").is_file()
    assert (app / ".github/workflows/cmx-app.yml").is_file(), "the app's CI workflow (a dot-folder in the wheel)"
    # The app stands alone: nothing in it points back into the clone the wheel was built from.
    pointing_back = [
        str(p.relative_to(app)) for p in app.rglob("*") if p.is_file() and str(REPO).encode() in p.read_bytes()
    ]
    assert not pointing_back, pointing_back


@pytest.mark.parametrize("board", [pytest.param("mps3-an547", marks=FIRMWARE)])
def test_build_and_run_pass_from_an_installed_copy(installed: dict[str, Path], board: str) -> None:
    app = installed["work"] / "samples/digits/build/app"
    if not app.is_dir():
        assert _run(installed, "samples", "digits").returncode in (0, 2)
        assert _run(installed, "create", "--config", "samples/digits/cmx.toml").returncode == 0
    built = _run(installed, "build", str(app))
    assert built.returncode == 0, built.stderr[-3000:]
    ran = _run(installed, "run", str(app))
    assert ran.returncode == 0 and "cmx-gen: PASS" in ran.stdout, ran.stdout[-2000:] + ran.stderr[-2000:]
