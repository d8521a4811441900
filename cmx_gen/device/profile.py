"""The on-target profile: counter ticks per instruction, named by module path, grouped by op kind.

A firmware built with CMX_PROFILE prints `cmx-gen: prof <instruction> <count>` after its result
line (templates/common/runner/cmx_runner.cpp, ExecuTorch's EventTracer hooks). Each instruction
counts from the end of the one before, so the rows include the runtime's dispatch and add up to
the inference; report.json `instructions` names each row (instructions.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NotRequired, TypedDict

from cmx_gen.common.errors import RunError
from cmx_gen.device import result_line
from cmx_gen.device.runners.base import Result
from cmx_gen.lower.delegate.plan import layer_label
from cmx_gen.program.report import DelegatedLayer, Instruction


class RowJson(TypedDict):
    """A Row as profile.json holds it."""

    index: int
    op: str
    module: str
    source: str
    count: int
    share: float
    kernel: int | None
    calls: str
    layer: int | None
    cycles: int | None


class CyclesJson(TypedDict):
    """The estimate beside the counter: its sum and what it assumes, or why there is none."""

    estimated: int | None
    sum: NotRequired[int]
    assumes: NotRequired[str]
    why_not: NotRequired[str]


class KindJson(TypedDict):
    kind: str
    count: int
    cycles: NotRequired[int]
    share: float


class ProfileJson(TypedDict):
    """A Profile as profile.json holds it (the HTML page reads it back)."""

    counter: str
    total: int
    sum: int
    cycles: NotRequired[CyclesJson]
    rows: list[RowJson]
    by_kind: list[KindJson]


@dataclass
class Row:
    index: int
    op: str
    module: str
    source: str
    count: int
    share: float  # of the whole-inference count, in %
    kernel: int | None = None  # a backend layer: its kernel call alone (the rest is the backend's own cost)
    calls: str = ""  # a backend layer: the function it calls and whose it is, `cmx_conv_row_s8 (cmx-gen)`
    layer: int | None = None  # a backend layer: its debug id
    cycles: int | None = None  # estimated (with_cycles): what ran between its marks, priced

    def to_dict(self) -> RowJson:
        return RowJson(
            index=self.index,
            op=self.op,
            module=self.module,
            source=self.source,
            count=self.count,
            share=self.share,
            kernel=self.kernel,
            calls=self.calls,
            layer=self.layer,
            cycles=self.cycles,
        )


@dataclass
class Profile:
    counter: str  # "instr" (QEMU -icount) or "cycles"
    total: int  # the result line's whole-inference count (same image)
    rows: list[Row]
    cycles: int | None = None  # the inference's estimated cycles (with_cycles), beside `total`
    cycles_note: str = ""  # what the estimate assumes, or why there is none

    def backend_overhead(self) -> float | None:
        """Mean counts per backend layer outside its kernel call (the profiling hooks included)."""
        layers = [row for row in self.rows if row.kernel is not None]
        return sum(row.count - (row.kernel or 0) for row in layers) / len(layers) if layers else None

    @property
    def summed(self) -> int:
        return sum(row.count for row in self.rows)

    def by_kind(self) -> list[tuple[str, int, int | None, float]]:
        """(kind, count, estimated cycles or None, % of the whole), largest first: what to optimise.
        The share is of the cycles where they are estimated, else of the counter."""
        kinds: dict[str, tuple[int, int]] = {}
        for row in self.rows:
            kind = row.calls or op_kind(row.op)
            count, cycles = kinds.get(kind, (0, 0))
            kinds[kind] = (count + row.count, cycles + (row.cycles or 0))
        estimated = self.cycles is not None
        whole = (self.cycles if estimated else self.total) or 0
        found = [
            (
                k,
                count,
                cycles if estimated else None,
                100.0 * (cycles if estimated else count) / whole if whole else 0.0,
            )
            for k, (count, cycles) in kinds.items()
        ]
        return sorted(found, key=lambda item: -item[3])

    def to_dict(self) -> ProfileJson:
        rows = [row.to_dict() for row in self.rows]
        kinds = [_kind(k, c, cyc, s) for k, c, cyc, s in self.by_kind()]
        cycles = self._cycles()
        if cycles is None:
            return {"counter": self.counter, "total": self.total, "sum": self.summed, "rows": rows, "by_kind": kinds}
        return {
            "counter": self.counter,
            "total": self.total,
            "sum": self.summed,
            "cycles": cycles,
            "rows": rows,
            "by_kind": kinds,
        }

    def _cycles(self) -> CyclesJson | None:
        """The estimate beside the counter, or why there is none; None when there is no word of it."""
        if self.cycles is not None:
            return {
                "estimated": self.cycles,
                "sum": sum(row.cycles or 0 for row in self.rows),
                "assumes": self.cycles_note,
            }
        return {"estimated": None, "why_not": self.cycles_note} if self.cycles_note else None


def _kind(kind: str, count: int, cycles: int | None, share: float) -> KindJson:
    """One op kind's row of by_kind: its estimated cycles only where they are estimated."""
    if cycles is None:
        return {"kind": kind, "count": count, "share": round(share, 2)}
    return {"kind": kind, "count": count, "cycles": cycles, "share": round(share, 2)}


NO_KEY = -2  # no mark has it (the plugin's -1: what ran after the last mark)


def with_cycles(
    profile: Profile, result: Result, instructions: int, total: int, segments: dict[int, int], note: str
) -> Profile:
    """`profile` with each row's estimated cycles: `segments` maps a mark's key to its cycles (the
    runner's keys: instruction h is h, the backend layer in slot s is `instructions` (the program's,
    CMX_NUM_INSTRUCTIONS) + s, in the order of its `prof_layer` lines). The rows' cycles add up as
    their counts do: a delegate's row keeps what its layers do not."""
    slots = [int(m.group(1)) for m in result_line.diagnostic_re("prof_layer").finditer(result.output)]
    layer_key = {debug: instructions + slot for slot, debug in enumerate(slots)}

    def key(row: Row) -> int:
        """Its mark's key; a layer without a `prof_layer` line (a full table) has none."""
        return row.index if row.layer is None else layer_key.get(row.layer, NO_KEY)

    rows = [replace(row, cycles=segments.get(key(row), 0)) for row in profile.rows]
    share = lambda n: 100.0 * n / total if total else 0.0  # noqa: E731
    rows = [replace(row, share=share(row.cycles or 0)) for row in rows]
    return replace(profile, rows=rows, cycles=total, cycles_note=note)


def op_kind(op: str) -> str:
    """`cortex_m::quantized_conv2d.out` -> `conv2d`; `aten::add.out` -> `add`."""
    name = op.split("::")[-1].split(".")[0]
    return name.removeprefix("quantized_") or op


def parse(result: Result, instructions: list[Instruction], delegated: list[DelegatedLayer] | None = None) -> Profile:
    """The profile of a CMX_PROFILE image's output, rows in execution order. A delegate call of
    cmx-gen's backend is followed by one row per layer it runs (`prof_layer` lines); its own row
    keeps what the backend spends around them, so the rows still add up to the inference."""
    counts = {int(m.group(1)): int(m.group(2)) for m in result_line.diagnostic_re("prof").finditer(result.output)}
    if not counts:
        raise RunError(
            "the firmware printed no profile (no `cmx-gen: prof` lines)",
            "rebuild the profile image: delete APP/build-profile and run `cmx-gen run APP --profile` again",
        )
    counted = result.count
    if counted is None:
        raise RunError("the result line has no instr= or cycles= figure", "the platform layer has no counter")
    counter, total = counted
    layer_counts = {
        int(m.group(1)): int(m.group(2)) for m in result_line.diagnostic_re("prof_layer").finditer(result.output)
    }
    kernel_counts = {
        int(m.group(1)): int(m.group(2)) for m in result_line.diagnostic_re("prof_kernel").finditer(result.output)
    }
    share = lambda count: 100.0 * count / total if total else 0.0  # noqa: E731
    rows = []
    calls = 0
    for row in instructions:
        count = counts.get(row.index, 0)
        inside = []
        if row.op == "<DelegateCall>":
            inside = [layer for layer in delegated or () if layer.delegate == calls]
            calls += 1
            count -= sum(layer_counts.get(layer.debug, 0) for layer in inside)
        op = "cmx backend (loop)" if row.op == "<DelegateCall>" and delegated else row.op
        rows.append(Row(index=row.index, op=op, module=row.module, source=row.source, count=count, share=share(count)))
        for layer in inside:
            n = layer_counts.get(layer.debug, 0)
            rows.append(
                Row(
                    index=row.index,
                    op=f"cmx {layer.op}",
                    module=layer.module,
                    source=layer.source,
                    count=n,
                    share=share(n),
                    kernel=kernel_counts.get(layer.debug),
                    calls=layer_label(layer.kind, layer.work) if layer.kind else "",
                    layer=layer.debug,
                )
            )
    return Profile(counter=counter, total=total, rows=rows)


def table(profile: Profile) -> str:
    """One row per executed instruction, a sum line against the whole inference, then by kind."""
    op_width = max([len(r.op) for r in profile.rows] + [8])
    mod_width = max([len(r.module) for r in profile.rows] + [6])
    calls_width = max([len(r.calls) for r in profile.rows] + [6])
    cycles = profile.cycles is not None
    cyc = lambda n: f"{n or 0:>11,}  " if cycles else ""  # noqa: E731
    lines = [
        f"{'#':>3}  {'operator':<{op_width}}  {'module':<{mod_width}}  {'kernel':<{calls_width}}  "
        + (f"{'cycles':>11}  " if cycles else "")
        + f"{profile.counter:>11}  {'share':>6}  line"
    ]
    for r in profile.rows:
        line = r.source.split(" ", 1)[0]  # model.py:17 (the code is in report.json)
        lines.append(
            f"{r.index:>3}  {r.op:<{op_width}}  {r.module:<{mod_width}}  {r.calls:<{calls_width}}  "
            f"{cyc(r.cycles)}{r.count:>11,}  {r.share:>5.1f}%  {line}"
        )
    summed_cycles = sum(r.cycles or 0 for r in profile.rows)
    whole = profile.cycles if cycles else profile.total
    gap = 100.0 * (summed_cycles if cycles else profile.summed) / whole if whole else 0.0
    of = f"of {profile.cycles:,} cycles (estimated), " if cycles else "of "
    lines.append(
        f"{'':>3}  {'sum':<{op_width}}  {'':<{mod_width}}  {'':<{calls_width}}  "
        f"{cyc(summed_cycles)}{profile.summed:>11,}  {gap:>5.1f}%"
        f"  {of}{profile.total:,} {profile.counter} for the whole inference (result line)"
    )
    if profile.cycles_note:
        lines.append(f"cycles     {profile.cycles_note}")
    lines.append(
        ("by kind    " if not cycles else "by kind    (cycles) ")
        + ", ".join(f"{k} {s:.1f} %" for k, _, _, s in profile.by_kind())
    )
    overhead = profile.backend_overhead()
    if overhead is not None:
        lines.append(
            f"backend    {overhead:,.0f} {profile.counter} per layer around its kernel call "
            "(the profiling hooks included: an upper bound)"
        )
    return "\n".join(lines)
