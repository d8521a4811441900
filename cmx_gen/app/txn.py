"""Crash-safe updates of an app folder: a killed `create` or `regen` leaves the old app or the new
one, never a mix.

An update is staged inside the app (`.cmx-gen/txn/`, the same file system, so that moving a file
into place is one atomic rename), then committed by renaming its journal into place, then applied.
Whatever opens the app next (render, build, run, flash, validate: `recover`) finds an interrupted
update and finishes it if it was committed, or drops it if it was not. Files are moved, never
written in place, so no file is ever half-written. Safe against a killed process, not against a
power cut: nothing is fsync'ed.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

STATE_DIR = ".cmx-gen"
MANIFEST = f"{STATE_DIR}/manifest.json"
TXN_DIR = f"{STATE_DIR}/txn"
_JOURNAL = "journal.json"
_MANIFEST = "manifest.json"


def commit(app: Path, writes: list[tuple[str, Path]], removes: list[str], manifest: str) -> None:
    """Make `app` hold `writes` (app-relative path, source file), lose `removes`, and record
    `manifest` as its manifest, all or nothing."""
    recover(app)
    txn = app / TXN_DIR
    shutil.rmtree(txn, ignore_errors=True)
    txn.mkdir(parents=True)
    entries = []
    for index, (rel, source) in enumerate(writes):
        staged = txn / f"{index:05d}"
        shutil.copy2(source, staged)
        entries.append([rel, staged.name])
    (txn / _MANIFEST).write_text(manifest)
    pending = txn / f"{_JOURNAL}.tmp"
    pending.write_text(json.dumps({"writes": entries, "removes": removes}))
    os.replace(pending, txn / _JOURNAL)  # the commit point
    _apply(app)


def _apply(app: Path) -> None:
    """Roll a committed update forward; safe to repeat after being killed part-way."""
    txn = app / TXN_DIR
    journal = json.loads((txn / _JOURNAL).read_text())
    for rel, name in journal["writes"]:
        staged = txn / name
        if staged.exists():  # moved already by an earlier, killed attempt otherwise
            dest = app / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staged, dest)
    for rel in journal["removes"]:
        (app / rel).unlink(missing_ok=True)
    if (txn / _MANIFEST).exists():
        os.replace(txn / _MANIFEST, app / MANIFEST)
    shutil.rmtree(txn)


def recover(app: Path) -> str | None:
    """Finish ("finished") or drop ("dropped") an update a killed command left in `app`; None if
    there was none."""
    txn = app / TXN_DIR
    if not txn.is_dir():
        return None
    if (txn / _JOURNAL).is_file():
        _apply(app)
        return "finished"
    shutil.rmtree(txn)
    return "dropped"
