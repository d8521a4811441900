"""The latency a board will see, before anything is built: each backend layer's work (report.json:
the MACs of a convolution, depthwise or linear layer, else the elements of its largest input), outputs
and kernel calls (a layer run patch by patch: its halos counted, a call a patch), at its kind's
estimated cycles per unit of work, per output and per call on the board's core
(data/kernel_cycles.yaml, which bench/kernel_cycles.py fits to `run --profile`'s cycles column), at
the board's clock.

It counts what it has figures for and names what it leaves out (operators outside the backend, a
kind not measured); `cmx-gen run APP --cycles` measures the whole inference on the built app."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, TypedDict

import yaml

from cmx_gen.common.paths import DATA_DIR
from cmx_gen.fit.boards import Board
from cmx_gen.lower.delegate.plan import on_softmax_table
from cmx_gen.program.report import DelegatedLayer, Report


@cache
def _figures() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((DATA_DIR / "kernel_cycles.yaml").read_text())
    return data


class EstimatedJson(TypedDict):
    """A Latency as `check --json` prints it, estimated."""

    estimated: Literal[True]
    cycles: int
    ms: float
    clock_hz: int
    layers: int
    basis: str
    not_counted: list[str]


class NotEstimatedJson(TypedDict):
    estimated: Literal[False]
    why_not: str


@dataclass(frozen=True)
class Latency:
    """The estimate for one program on one board, or why there is none (`why_not`)."""

    cycles: int = 0  # of the layers counted
    clock_hz: int = 1
    counted: int = 0  # backend layers priced
    left_out: tuple[str, ...] = ()  # what the figure does not count
    basis: str = ""  # whose figures: the core's, or the core it borrows from
    why_not: str = ""

    @property
    def ms(self) -> float:
        return self.cycles / self.clock_hz * 1e3

    def line(self) -> str:
        """`latency    ...` as check and create print it."""
        if self.why_not:
            return f"latency    not estimated: {self.why_not}"
        left = f"; not counted: {', '.join(self.left_out)}" if self.left_out else ""
        return (
            f"latency    ~{self.ms:,.2f} ms at {self.clock_hz / 1e6:g} MHz: {self.cycles:,} cycles estimated before "
            f"building ({self.counted} backend layers at {self.basis} kernel figures, data/kernel_cycles.yaml, "
            "fitted without wait states"
            f"{left}); `cmx-gen run APP --cycles` measures it"
        )

    def to_dict(self) -> EstimatedJson | NotEstimatedJson:
        if self.why_not:
            return {"estimated": False, "why_not": self.why_not}
        return {
            "estimated": True,
            "cycles": self.cycles,
            "ms": round(self.ms, 3),
            "clock_hz": self.clock_hz,
            "layers": self.counted,
            "basis": self.basis,
            "not_counted": list(self.left_out),
        }


def estimate(report: Report, board: Board) -> Latency:
    """The latency of `report`'s program on `board`."""
    core = board.core.name
    figures = _figures().get(core)
    if figures is None:
        known = ", ".join(k for k in _figures() if k != "schema")
        return Latency(why_not=f"no kernel cycle figures for {core} yet (cmx-gen has them for {known})")
    basis = f"{core}'s"
    if "borrows" in figures:
        basis = f"{figures['borrows']}'s ({core}: {figures['note']})"
        figures = _figures()[figures["borrows"]]
    kinds: dict[str, dict[str, float]] = figures["kinds"]
    cycles = 0.0
    counted = 0
    missing: dict[str, int] = {}
    for layer in report.delegated_layers:
        fitted = kinds.get(_priced_as(layer))
        if fitted is None or not layer.work:
            missing[layer.kind or layer.op] = missing.get(layer.kind or layer.op, 0) + 1
            continue
        outputs = layer.outputs or (math.prod(layer.shape) if layer.shape else 1)
        cycles += (
            fitted.get("per_work", 0.0) * layer.work
            + fitted.get("per_output", 0.0) * outputs
            + fitted.get("per_layer", 0.0) * layer.calls
        )
        counted += 1
    left = [f"{n} {kind} layer{'s' if n > 1 else ''}" for kind, n in sorted(missing.items())]
    outside = [i for i in report.instructions if i.op != "<DelegateCall>"]
    if outside:
        left.append(f"{len(outside)} operator{'s' if len(outside) > 1 else ''} outside the backend")
    if not counted:
        return Latency(why_not="no layer of the program runs in cmx-gen's backend on a kernel with figures")
    if board.flash_waits:  # the figures are fitted on memories without wait states
        waits = board.region(board.boot_region).wait_states
        left.append(
            f"{board.boot_region}'s {waits} wait states (`run --cycles-as {board.id}` on a QEMU app prices them)"
        )
    return Latency(int(cycles), board.core.clock_hz, counted, tuple(left), basis)


def _priced_as(layer: DelegatedLayer) -> str:
    """The figures a layer is priced with: its kind's, a softmax on cmx_softmax_s8's table its own."""
    return "softmax_table" if on_softmax_table(layer.kind, layer.work) else layer.kind
