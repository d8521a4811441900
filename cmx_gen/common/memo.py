"""Disk memos for pure, slow steps of rendering, and the fingerprint of cmx-gen's own code.

Rendering must not import torch (it takes seconds): this module and what it imports do not.
The lowering cache (program/cache.py) keys on the same fingerprint.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Callable
from typing import Any

from cmx_gen.common.paths import PACKAGE, cache_root


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    digest = hashlib.sha256()
    package = PACKAGE
    for path in sorted([*package.rglob("*.py"), *package.rglob("*.yaml")]):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


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
