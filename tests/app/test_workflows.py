"""The CI workflows: each generated app's (bare metal and Zephyr, made once and then the user's)
and cmx-gen's own pass actionlint, say what they run, and pin what data/ci.yaml pins."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, run_cli

from cmx_gen.app import ci
from cmx_gen.common.paths import executable

DIGITS = ROOT / "samples" / "digits" / "cmx.toml"
WORKFLOW = Path(".github/workflows/cmx-app.yml")


def actionlint(*files: Path) -> subprocess.CompletedProcess[str]:
    tool = executable("actionlint")
    assert Path(tool).is_file() or tool != "actionlint", "actionlint is a test dependency (pyproject.toml [test])"
    return subprocess.run([tool, "-no-color", *map(str, files)], capture_output=True, text=True)


@pytest.fixture(scope="module")
def apps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("workflow_apps")
    made = {
        "baremetal": ("--board", "mps3-an547"),
        "zephyr": ("--rtos", "zephyr", "--board", "mps3-an547"),
        "baremetal-board": ("--board", "rpi-pico2"),
    }
    for name, extra in made.items():
        assert run_cli("create", "--config", DIGITS, *extra, "-o", root / name) == 0
    return {name: root / name for name in made}


@pytest.mark.parametrize("name", ["baremetal", "zephyr", "baremetal-board"])
def test_each_app_gets_a_workflow_actionlint_passes(apps: dict[str, Path], name: str) -> None:
    workflow = apps[name] / WORKFLOW
    done = actionlint(workflow)
    assert done.returncode == 0, done.stdout + done.stderr
    jobs = yaml.safe_load(workflow.read_text())["jobs"]
    steps = [step.get("run", "") for job in jobs.values() for step in job["steps"]]
    text = workflow.read_text()
    if name == "zephyr":
        assert jobs["zephyr"]["container"] == ci.pins()["zephyr_image"]
        assert any("west init -l" in s for s in steps) and any("west update" in s for s in steps)
        assert any("west twister" in s and "-p mps3/corstone300/an547" in s and "--build-only" not in s for s in steps)
    else:
        assert any("cmx-gen sdk --clone" in s for s in steps) and any(s.startswith("cmx-gen build") for s in steps)
        runs = any(s.startswith("cmx-gen run") for s in steps)
        assert runs == (name == "baremetal"), "a board without QEMU is built, not run"
    assert "regen` never touches it" in text
    readme = (apps[name] / "README.md").read_text()
    assert "## CI" in readme and str(WORKFLOW) in readme


def test_actionlint_fails_a_broken_workflow(apps: dict[str, Path], tmp_path: Path) -> None:
    """The check can fail: a mistyped input of a real action is caught."""
    broken = tmp_path / "broken.yml"
    broken.write_text((apps["baremetal"] / WORKFLOW).read_text().replace("python-version:", "pyhton-version:"))
    done = actionlint(broken)
    assert done.returncode == 1 and "pyhton-version" in done.stdout


def test_the_workflow_is_the_users_regen_keeps_their_edit(apps: dict[str, Path]) -> None:
    workflow = apps["baremetal"] / WORKFLOW
    edited = workflow.read_text().replace("APP_PATH: .", "APP_PATH: firmware/app")
    workflow.write_text(edited)
    assert run_cli("regen", apps["baremetal"]) == 0
    assert workflow.read_text() == edited


def test_cmx_gens_own_workflows_pass_actionlint_and_pin_as_the_apps() -> None:
    files = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
    assert files, "cmx-gen's own CI workflow"
    done = actionlint(*files)
    assert done.returncode == 0, done.stdout + done.stderr
    text = "\n".join(f.read_text() for f in files)
    for key in ("zephyr_image", "flatc_url", "torch_index"):
        assert str(ci.pins()[key]) in text, f"data/ci.yaml's {key} differs from .github/workflows"
    readme = (ROOT / "README.md").read_text()
    assert ".github/workflows/ci.yml" in readme and "cmx-app.yml" in readme
    # The README's two commands are what the first job runs.
    runs = [s.get("run", "") for s in yaml.safe_load(files[0].read_text())["jobs"]["readme"]["steps"]]
    for command in (
        "./scripts/setup.sh && .venv/bin/cmx-gen create --config samples/digits/cmx.toml",
        "./scripts/setup.sh && .venv/bin/python -m pytest",
    ):
        assert command in readme and command in runs
