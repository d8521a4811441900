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

import torch

from cmx_gen import __version__

from cmx_gen.program import artifacts
from cmx_gen.lower.lowering import LowerOptions
from cmx_gen.common.memo import code_fingerprint
from cmx_gen.common.paths import cache_root
from cmx_gen.model.source import ModelSource


def cache_dir() -> Path:
    return cache_root() / "lower"


def graph_fingerprint(source: ModelSource) -> str:
    """sha256 of the exported graph: its code, signature, weights, buffers and constants.

    Two models from one file with equal weights (a subclass adding a weightless pool) differ
    here, where a hash of the files and the state dict cannot tell them apart.
    """
    from cmx_gen.lower.lowering import export

    if source.graph_sha256:  # the cache key and the report both need it: hash the weights once
        return source.graph_sha256
    program = export(source)
    digest = hashlib.sha256()
    digest.update(program.graph_module.code.encode())
    digest.update(str(program.graph_signature).encode())
    for name, value in sorted([*program.state_dict.items(), *program.constants.items()]):
        digest.update(name.encode() + b"\0")
        if isinstance(value, torch.Tensor):
            digest.update(str((tuple(value.shape), value.dtype)).encode())
            digest.update(value.detach().contiguous().cpu().reshape(-1).view(torch.uint8).numpy().tobytes())
        else:
            digest.update(repr(value).encode())
    source.graph_sha256 = digest.hexdigest()
    return source.graph_sha256


def key(source: ModelSource, core: str, options: LowerOptions = LowerOptions()) -> str:
    """Everything that decides the program: model spec, exported graph and weights, example and
    calibration data, target core, lowering options, executorch's and cmx-gen's code."""
    from importlib.metadata import version

    digest = hashlib.sha256(code_fingerprint().encode())
    parts = (source.spec_identity, graph_fingerprint(source), core, json.dumps(options.to_dict(), sort_keys=True),
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
    if source.kind in ("pte", "bpte") or not use_cache:
        return artifacts.produce(source, core, options), False
    entry = cache_dir() / key(source, core, options)
    if (entry / artifacts.REPORT_JSON).is_file():
        return artifacts.read(entry), True
    result = artifacts.produce(source, core, options)
    entry.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=entry.parent))
    result.write(staging)
    try:
        staging.rename(entry)  # atomic: a concurrent run never sees half an entry
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
    return result, False
