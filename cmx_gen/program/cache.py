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
from cmx_gen.model.export import Exported, export
from cmx_gen.model.source import ModelSource
from cmx_gen.program import artifacts


def cache_dir() -> Path:
    return cache_root() / "lower"


def key(exported: Exported, core: str, options: LowerOptions = LowerOptions()) -> str:
    """Everything that decides the program: model spec, exported graph and weights, example and
    calibration data, target core, lowering options, executorch's and cmx-gen's code."""
    from importlib.metadata import version

    source = exported.source
    digest = hashlib.sha256(code_fingerprint().encode())
    parts = (source.spec_identity, exported.graph_sha256, core, json.dumps(options.to_dict(), sort_keys=True),
             version("executorch"), version("torch"), __version__, source.calibration_source)
    for part in parts:
        digest.update(str(part).encode() + b"\0")
    for sample in [source.example_inputs or (), *source.calibration]:
        for tensor in sample:
            digest.update(str(tuple(tensor.shape)).encode() + str(tensor.dtype).encode())
            digest.update(tensor.contiguous().numpy().tobytes())
    return digest.hexdigest()[:32]


def produce(source: ModelSource, core: str, use_cache: bool = True,
            options: LowerOptions = LowerOptions()) -> tuple[artifacts.Artifacts, bool]:
    """Lower `source` for `core`, or read the cached result. Returns (artifacts, from_cache)."""
    if source.kind in ("pte", "bpte"):
        return artifacts.analyse_pte(source, core), False
    exported = export(source)
    if not use_cache:
        return artifacts.lower_model(exported, core, options), False
    entry = cache_dir() / key(exported, core, options)
    if (entry / artifacts.REPORT_JSON).is_file():
        return artifacts.read(entry), True
    result = artifacts.lower_model(exported, core, options)
    entry.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=entry.parent))
    result.write(staging)
    try:
        staging.rename(entry)  # atomic: a concurrent run never sees half an entry
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
    return result, False
