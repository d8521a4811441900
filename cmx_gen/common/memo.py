"""Disk memos for pure, slow steps of rendering, and the fingerprint of cmx-gen's own code.

Rendering must not import torch (it takes seconds): this module and what it imports do not.
The lowering cache (program/cache.py) keys on the same fingerprint.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from cmx_gen.common.paths import KERNELS_DIR, PACKAGE, cache_root


def fingerprinted_files() -> list[Path]:
    """What decides a lowering and a rendering besides the model: cmx-gen's Python and data, and the
    kernels' sources, whose constants the plan reads (lower/delegate/kernel_facts.py: a scratch size,
    a band, a group)."""
    return sorted([*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.yaml"), *(KERNELS_DIR / "nn").rglob("*.[ch]")])


def files_digest(named: Iterable[tuple[str, Path]]) -> str:
    """A digest of files by the name each is given and its bytes (a file renamed or moved changes it)."""
    digest = hashlib.sha256()
    for name, path in named:
        digest.update(name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _fingerprint_name(path: Path) -> str:
    """A fingerprinted file's name: from the package, or from kernels/."""
    if path.is_relative_to(PACKAGE):
        return path.relative_to(PACKAGE).as_posix()
    return (Path("kernels") / path.relative_to(KERNELS_DIR)).as_posix()


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    return files_digest((_fingerprint_name(path), path) for path in fingerprinted_files())


def memo_json(kind: str, parts: tuple[str, ...], compute: Callable[[], Any]) -> Any:
    """Disk memo for pure, slow steps of rendering (kernel registration codegen, allocator replay).

    Keyed on `parts` and cmx-gen's code, like the lowering cache, so `regen` with nothing
    changed does not run torchgen or re-parse the program again.
    """
    digest = hashlib.sha256(code_fingerprint().encode())
    for part in parts:
        digest.update(part.encode() + b"\0")
    path = cache_root() / kind / f"{digest.hexdigest()[:32]}.json"
    if path.is_file():
        return json.loads(path.read_text())
    value = compute()
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_suffix(f".{os.getpid()}.tmp")
    staging.write_text(json.dumps(value))
    staging.replace(path)
    return value
