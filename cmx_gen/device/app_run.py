"""What the user's application image printed (`cmx-gen run --app` / `--data`), read back typed.

The application (templates/baremetal_app/.../user/main.c over cmx/app/cmx_app.c) prints one `call`
line per inference, each output's bytes as `out` lines where it dumps them, and a `done` line
(data/result_line.yaml, `application`). This module parses that into `Call`s and answers the
questions the application issue asks of a run: are calls 2..N equal in count, do the pools stay
where call 1 left them, does call 0 equal the check's reference bytes.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field

from cmx_gen.device import result_line

POOLS = ("method", "planned", "temp")


@dataclass(frozen=True)
class Call:
    """One inference of the application."""

    index: int
    source: str  # "reference" | "host"
    counter: str  # "instr" | "cycles"
    count: int
    pools: dict[str, tuple[int, int]]  # used/allocated bytes after the call
    shown: str  # the printed output: `top=...` or `min=... max=... mean=...`
    outputs: dict[int, bytes] = field(default_factory=dict)  # raw bytes, where the app printed them
    model: str = ""  # an app of several models: whose call this was (`model=` on the line)


@dataclass(frozen=True)
class AppRun:
    calls: list[Call]
    done: int | None  # the `done calls=N` count; None when the app stopped without it
    error: str | None  # the FAIL line the app stopped on
    exit_code: int | None
    output: str
    stack: tuple[int, int] | None = None  # used/size bytes from the `done` line, where the platform measures it
    own: list[str] = field(default_factory=list)  # every other line: the application's own (cmx_app_puts)

    def of_model(self, name: str) -> AppRun:
        """The calls of one model of an app of several (how the run ended is the whole run's)."""
        return AppRun(
            [c for c in self.calls if c.model == name], self.done, self.error, self.exit_code, self.output, self.stack
        )

    def counts(self, first: int = 0) -> list[int]:
        return [c.count for c in self.calls[first:]]

    def spread(self) -> float | None:
        """(max - min) / min of the counts of calls 2..N (index 1 on), in percent."""
        later = self.counts(1)
        if not later or min(later) == 0:
            return None
        return 100.0 * (max(later) - min(later)) / min(later)

    def pools_move_after(self, call: int = 0) -> list[str]:
        """Pools whose high-water mark changed after call `call` (index 0 = the first call)."""
        if len(self.calls) <= call:
            return []
        base = self.calls[call].pools
        return sorted({name for c in self.calls[call + 1 :] for name in POOLS if c.pools.get(name) != base.get(name)})

    def stats(self, first: int = 0) -> tuple[int, float, int] | None:
        """min, median, max of the counts from call `first` on."""
        counts = self.counts(first)
        return (min(counts), statistics.median(counts), max(counts)) if counts else None


def parse(output: str, exit_code: int | None = None) -> AppRun:
    calls: list[Call] = []
    done: int | None = None
    stack: tuple[int, int] | None = None
    error: str | None = None
    own: list[str] = []
    hex_re = result_line.diagnostic_re("out")
    for line in output.splitlines():
        m = result_line.call_re().search(line)
        if m:
            fields = dict(item.split("=", 1) for item in m.group(3).split())
            model = fields.pop("model", "")
            counter = next((k for k in ("instr", "cycles") if k in fields), "count")
            pools = {}
            for name in POOLS:
                used, _, allocated = fields.get(name, "0/0").partition("/")
                pools[name] = (int(used), int(allocated or 0))
            shown = " ".join(f"{k}={v}" for k, v in fields.items() if k not in (*POOLS, "instr", "cycles"))
            calls.append(
                Call(int(m.group(1)), m.group(2), counter, int(fields.get(counter, 0)), pools, shown, {}, model)
            )
            continue
        m = hex_re.search(line)
        if m and calls:
            chunks = calls[-1].outputs
            index, offset, data = int(m.group(1)), int(m.group(2)), bytes.fromhex(m.group(3))
            if len(chunks.get(index, b"")) == offset:
                chunks[index] = chunks.get(index, b"") + data
            continue
        m = result_line.app_end_re().search(line)
        if m:
            if m.group(1) is not None:
                done = int(m.group(1))
                s = re.search(r" stack=(\d+)/(\d+)", line)
                stack = (int(s.group(1)), int(s.group(2))) if s else None
            else:
                error = line[m.start() :].strip()
            continue
        if line.strip() and not line.startswith("cmx-gen: "):
            own.append(line.rstrip())
    return AppRun(calls, done, error, exit_code, output, stack, own)
