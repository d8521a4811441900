"""A shared library of cmx-gen's own C built for this machine on first use, with its C compiler, and
cached by the hash of its sources (and flags): the QEMU cycle plugin, and the kernels' size and
layout functions the plan asks. A library is written beside and renamed into place, so two
processes building it at once each end with a whole one."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from cmx_gen.common.errors import HostCompilerError
from cmx_gen.common.paths import cache_root


def build(name: str, sources: Sequence[Path], flags: Sequence[str], purpose: str) -> Path:
    """`name`.so from `sources` (compiled with `flags`), once per version of them. `purpose` says
    what needs it, for the one-line error when the host has no compiler."""
    digest = hashlib.sha256("\0".join(flags).encode())
    for source in sources:
        digest.update(source.read_bytes())
    for header in sorted({h for s in sources for h in s.parent.glob("*.h")}):
        digest.update(header.read_bytes())
    folder = cache_root() / name / digest.hexdigest()[:16]
    library = folder / f"{name}.so"
    if library.is_file():
        return library
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise HostCompilerError(f"{purpose} builds C for this machine and finds no C compiler", "apt install gcc")
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f"{name}.so.{os.getpid()}.partial"
    done = subprocess.run(
        [compiler, "-O2", "-shared", "-fPIC", *flags, "-o", str(partial), *map(str, sources)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise HostCompilerError(f"{name} did not compile: {done.stderr.strip()[-300:]}", "check the host's gcc")
    partial.replace(library)
    return library
