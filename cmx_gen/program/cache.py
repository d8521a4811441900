"""Lowering cache: `create`/`regen` with nothing changed must not lower again.

The key covers everything the `.pte` depends on: which model was named (file and attribute), its
exported graph with weights and constants (so two classes in one file never share an entry), the
example inputs, the calibration tensors, the target core, the lowering options, the torch and
executorch versions and cmx-gen's own code (a changed report or lowering step must not be served
from an old entry). Entries are
lowering output folders (see artifacts.py) under `$CMX_GEN_CACHE` (default
`~/.cache/cmx-gen/lower`).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from pathlib import Path

from cmx_gen import __version__
from cmx_gen.common.memo import code_fingerprint
from cmx_gen.common.paths import cache_root
from cmx_gen.lower.lowering import LowerOptions
from cmx_gen.model.export import Exported
from cmx_gen.program import artifacts


def cache_dir() -> Path:
    return cache_root() / "lower"


def key(exported: Exported, core: str, options: LowerOptions = LowerOptions()) -> str:
    """Everything that decides the program: model spec, exported graph and weights, example and
    calibration data, target core, lowering options, executorch's and cmx-gen's code."""
    from importlib.metadata import version

    source = exported.source
    digest = hashlib.sha256(code_fingerprint().encode())
    parts = (
        source.spec_identity,
        exported.graph_sha256,
        core,
        json.dumps(options.to_dict(), sort_keys=True),
        version("executorch"),
        version("torch"),
        __version__,
        source.calibration_source,
    )
    for part in parts:
        digest.update(str(part).encode() + b"\0")
    for sample in [source.example_inputs or (), *source.calibration]:
        for tensor in sample:
            digest.update(str(tuple(tensor.shape)).encode() + str(tensor.dtype).encode())
            digest.update(tensor.contiguous().numpy().tobytes())
    return digest.hexdigest()[:32]


def lookup(exported: Exported, core: str, options: LowerOptions) -> tuple[Path, artifacts.Artifacts | None]:
    """The cache entry for this lowering, and what it holds (None: nothing yet)."""
    entry = cache_dir() / key(exported, core, options)
    return entry, artifacts.read(entry) if (entry / artifacts.REPORT_JSON).is_file() else None


def store(entry: Path, result: artifacts.Artifacts) -> None:
    """Keep a lowering under its key; atomic: a concurrent run never sees half an entry."""
    entry.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=entry.parent))
    result.write(staging)
    try:
        staging.rename(entry)
    except OSError:  # another run stored it first
        shutil.rmtree(staging, ignore_errors=True)
