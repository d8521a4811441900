"""Progress lines for long steps (lowering, calibration, builds), on stderr so stdout stays parseable."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

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


class Bar:
    """`cmx-gen: <what> [#####.....] n/total` on stderr: redrawn in place on a terminal, a line per
    tenth elsewhere (CI logs)."""

    def __init__(self, what: str, total: int, width: int = 30) -> None:
        self.what, self.total, self.width, self.done = what, max(total, 1), width, 0
        self._tty = sys.stderr.isatty()
        self._shown = -1

    def update(self, n: int = 1) -> None:
        self.done = min(self.done + n, self.total)
        tenth = self.done * 10 // self.total
        if _quiet or (not self._tty and tenth == self._shown):
            return
        self._shown = tenth
        filled = self.done * self.width // self.total
        text = f"cmx-gen: {self.what} [{'#' * filled}{'.' * (self.width - filled)}] {self.done}/{self.total}"
        print(("\r" + text) if self._tty else text, end="" if self._tty else "\n", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self._tty and not _quiet and self._shown >= 0:
            print(file=sys.stderr, flush=True)
