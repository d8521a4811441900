"""The on-target profile: counter ticks per instruction, named by module path, grouped by op kind.

A firmware built with CMX_PROFILE prints `cmx-gen: prof <instruction> <count>` after its result
line (templates/common/runner/cmx_runner.cpp, ExecuTorch's EventTracer hooks). Each instruction
counts from the end of the one before, so the rows include the runtime's dispatch and add up to
the inference; report.json `instructions` names each row (instructions.py).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from cmx_gen.common.errors import RunError
from cmx_gen.device import result_line
from cmx_gen.device.runners.base import Result
from cmx_gen.lower.delegate.plan import kernel_label
from cmx_gen.program.report import DelegatedLayer, Instruction


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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Profile:
    counter: str  # "instr" (QEMU -icount) or "cycles"
    total: int  # the result line's whole-inference count (same image)
    rows: list[Row]

    def backend_overhead(self) -> float | None:
        """Mean counts per backend layer outside its kernel call (the profiling hooks included)."""
        layers = [row for row in self.rows if row.kernel is not None]
        return sum(row.count - (row.kernel or 0) for row in layers) / len(layers) if layers else None

    @property
    def summed(self) -> int:
        return sum(row.count for row in self.rows)

    def by_kind(self) -> list[tuple[str, int, float]]:
        """(kind, count, % of total), largest first: what to optimise."""
        kinds: dict[str, int] = {}
        for row in self.rows:
            kind = row.calls or op_kind(row.op)
            kinds[kind] = kinds.get(kind, 0) + row.count
        return sorted(
            ((k, c, 100.0 * c / self.total if self.total else 0.0) for k, c in kinds.items()), key=lambda item: -item[1]
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "counter": self.counter,
            "total": self.total,
            "sum": self.summed,
            "rows": [row.to_dict() for row in self.rows],
            "by_kind": [{"kind": k, "count": c, "share": round(s, 2)} for k, c, s in self.by_kind()],
        }


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
                    calls=kernel_label(layer.kind) if layer.kind else "",
                )
            )
    return Profile(counter=counter, total=total, rows=rows)


def table(profile: Profile) -> str:
    """One row per executed instruction, a sum line against the whole inference, then by kind."""
    op_width = max([len(r.op) for r in profile.rows] + [8])
    mod_width = max([len(r.module) for r in profile.rows] + [6])
    calls_width = max([len(r.calls) for r in profile.rows] + [6])
    lines = [
        f"{'#':>3}  {'operator':<{op_width}}  {'module':<{mod_width}}  {'kernel':<{calls_width}}  "
        f"{profile.counter:>11}  {'share':>6}  line"
    ]
    for r in profile.rows:
        line = r.source.split(" ", 1)[0]  # model.py:17 (the code is in report.json)
        lines.append(
            f"{r.index:>3}  {r.op:<{op_width}}  {r.module:<{mod_width}}  {r.calls:<{calls_width}}  "
            f"{r.count:>11,}  {r.share:>5.1f}%  {line}"
        )
    gap = 100.0 * profile.summed / profile.total if profile.total else 0.0
    lines.append(
        f"{'':>3}  {'sum':<{op_width}}  {'':<{mod_width}}  {'':<{calls_width}}  "
        f"{profile.summed:>11,}  {gap:>5.1f}%"
        f"  of {profile.total:,} {profile.counter} for the whole inference (result line)"
    )
    lines.append("by kind    " + ", ".join(f"{k} {s:.1f} %" for k, _, s in profile.by_kind()))
    overhead = profile.backend_overhead()
    if overhead is not None:
        lines.append(
            f"backend    {overhead:,.0f} {profile.counter} per layer around its kernel call "
            "(the profiling hooks included: an upper bound)"
        )
    return "\n".join(lines)
