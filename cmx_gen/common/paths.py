"""Where cmx-gen's own data lives. In a clone, boards/, templates/, kernels/ and samples/ sit beside
the package; an installed copy (a wheel, pipx) carries them inside it, as cmx_gen/_share/<name>
(setup.py maps them there), so the tool works from any folder without the clone."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent
ROOT = PACKAGE.parent
SHARED = ("boards", "templates", "kernels", "samples")  # setup.py ships these in the wheel


def _shared(name: str) -> Path:
    installed = PACKAGE / "_share" / name
    return installed if installed.is_dir() else ROOT / name


BOARDS_DIR = _shared("boards")
TEMPLATES_DIR = _shared("templates")
KERNELS_DIR = _shared("kernels")
SAMPLES_DIR = _shared("samples")
DATA_DIR = PACKAGE / "data"


def shared_path(relative: str) -> Path:
    """A path under one of the SHARED folders, spelled as in the clone ("templates/common/api")."""
    head, _, rest = relative.partition("/")
    if head not in SHARED:
        raise ValueError(f"{relative}: not under one of {SHARED}")
    return _shared(head) / rest if rest else _shared(head)


def executable(name: str) -> str:
    """A console script cmx-gen depends on (west, pyocd): from PATH, else the one installed beside
    this Python (the venv's bin/ need not be on PATH); the bare name when neither exists."""
    sibling = Path(sys.executable).parent / name
    return shutil.which(name) or (str(sibling) if sibling.is_file() else name)


def cache_root() -> Path:
    """cmx-gen's caches: lowering results (lower/), shared kernel-library builds (runtime/), memos."""
    return Path(os.environ.get("CMX_GEN_CACHE") or Path.home() / ".cache" / "cmx-gen")
