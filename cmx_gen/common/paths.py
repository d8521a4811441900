"""Where cmx-gen's own data lives: boards, templates, kernels and samples sit beside the package."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent
ROOT = PACKAGE.parent
BOARDS_DIR = ROOT / "boards"
TEMPLATES_DIR = ROOT / "templates"
KERNELS_DIR = ROOT / "kernels"
SAMPLES_DIR = ROOT / "samples"
DATA_DIR = PACKAGE / "data"


def executable(name: str) -> str:
    """A console script cmx-gen depends on (west, pyocd): from PATH, else the one installed beside
    this Python (the venv's bin/ need not be on PATH); the bare name when neither exists."""
    sibling = Path(sys.executable).parent / name
    return shutil.which(name) or (str(sibling) if sibling.is_file() else name)


def cache_root() -> Path:
    """cmx-gen's caches: lowering results (lower/), shared kernel-library builds (runtime/), memos."""
    return Path(os.environ.get("CMX_GEN_CACHE") or Path.home() / ".cache" / "cmx-gen")
