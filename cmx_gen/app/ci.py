"""What a generated app's CI workflow needs to know: the pins (data/ci.yaml) and how its job
installs this very cmx-gen (pip's record of where it came from, PEP 610), so the workflow's
`cmx-gen build` / `run` is the tool that made the app."""

from __future__ import annotations

import json
import subprocess
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import TypedDict

import yaml

from cmx_gen import __version__
from cmx_gen.common.paths import DATA_DIR, ROOT


class Pins(TypedDict):
    """data/ci.yaml: what the generated workflows install and run on."""

    runs_on: str
    python: str
    zephyr_image: str
    flatc_url: str
    torch_index: str
    baremetal_packages: list[str]


class CiContext(Pins):
    """`cookiecutter.ci`: the pins and how the workflow installs this cmx-gen."""

    cmx_gen_pip: str


@cache
def pins() -> Pins:
    found: Pins = yaml.safe_load((DATA_DIR / "ci.yaml").read_text())
    return found


def _git(*args: str) -> str:
    try:
        done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


@cache  # where this process's cmx-gen came from does not change: ask pip and git once, not per render
def pip_requirement() -> str:
    """A pip requirement for this cmx-gen: git+URL@commit where pip installed it from a repository
    (pipx install git+URL) or it runs from a clone with a remote; else cmx-gen==version, which the
    user points at their copy (the workflow says so)."""
    try:
        direct = json.loads(metadata.distribution("cmx-gen").read_text("direct_url.json") or "{}")
    except metadata.PackageNotFoundError:
        direct = {}
    vcs = direct.get("vcs_info", {})
    if vcs.get("vcs") == "git" and direct.get("url"):
        return f"cmx-gen @ git+{direct['url']}@{vcs.get('commit_id', vcs.get('requested_revision', ''))}".rstrip("@")
    if Path(_git("rev-parse", "--show-toplevel") or "/nonexistent").resolve() != ROOT:
        return f"cmx-gen=={__version__}"  # not a clone of cmx-gen (a venv inside some other repository)
    remote = _git("remote", "get-url", "origin")
    commit = _git("rev-parse", "HEAD")
    if remote.startswith("https://") and commit:
        return f"cmx-gen @ git+{remote}@{commit}"
    return f"cmx-gen=={__version__}"


def context() -> CiContext:
    """`cookiecutter.ci` for the workflow templates."""
    return {**pins(), "cmx_gen_pip": pip_requirement()}
