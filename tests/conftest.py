"""Shared fixtures: lowering is the slow step, so each small model is lowered once per session."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest

from cmx_gen import cli

# The tests get a lowering cache of their own: they neither read nor fill the user's.
os.environ.setdefault("CMX_GEN_CACHE", tempfile.mkdtemp(prefix="cmx-gen-test-cache-"))

ROOT = Path(__file__).resolve().parent.parent
SMALL = ROOT / "tests" / "models" / "small.py"


def second_bmm_line() -> str:
    """`small.py:N`: the Attention model's line whose bmm upstream's pass fails on."""
    lines = SMALL.read_text().splitlines()
    return f"small.py:{next(i for i, text in enumerate(lines, 1) if 'ATTENTION_SECOND_BMM' in text)}"


def run_cli(*argv: str) -> int:
    return cli.main([str(a) for a in argv])


@pytest.fixture(scope="session")
def lowered_dir(tmp_path_factory):
    """Lower a test model once; returns a function name -> output folder."""
    cache: dict[tuple, Path] = {}

    def get(name: str, *extra: str, target: str = "cortex-m55") -> Path:
        key = (name, extra, target)
        if key not in cache:
            out = tmp_path_factory.mktemp(name.replace(":", "_"))
            code = run_cli("lower", f"{SMALL}:{name}", "--target", target, "-o", out, *extra)
            assert code == 0, f"lowering {name} failed with {code}"
            cache[key] = out
        return cache[key]

    return get


def read_report(folder: Path) -> dict:
    return json.loads((folder / "report.json").read_text())
