"""Progress lines for long steps (lowering, calibration, builds), on stderr so stdout stays parseable."""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from typing import Iterator

_quiet = False


def set_quiet(quiet: bool) -> None:
    global _quiet
    _quiet = quiet


def say(message: str) -> None:
    if not _quiet:
        print(f"cmx-gen: {message}", file=sys.stderr, flush=True)


@contextmanager
def step(message: str) -> Iterator[None]:
    """Print `message ...` then `done in N s` around a long step."""
    say(f"{message} ...")
    start = time.monotonic()
    yield
    say(f"{message}: done in {time.monotonic() - start:.1f} s")
