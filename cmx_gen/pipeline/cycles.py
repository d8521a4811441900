"""`cmx-gen run APP --cycles`: the check image run under QEMU with cmx-gen's TCG plugin, and the
inference's cycles estimated from what ran (device/cycles/): `cyc=` on the result line, then the
estimate's range, its milliseconds at the board's clock and what it assumes (docs/cycles.md)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cmx_gen.app.folder import AppFolder
from cmx_gen.app.kinds import kind_of
from cmx_gen.app.model_slots import simulator_loads
from cmx_gen.common.errors import RunError
from cmx_gen.device.cycles import estimate, listing, plugin, timing
from cmx_gen.device.runners import QemuRunner
from cmx_gen.fit.board_memory import MemoryRegion
from cmx_gen.fit.boards import Board, load_board
from cmx_gen.pipeline.run_outcome import Outcome, RunOptions, verdict

EDGES = ("cmx_measure_begin", "cmx_measure_end")  # the runner's measured region (cmx_runner.cpp)
MARKS = "cmx_profile_marks"  # the profile image's marks (cmx_runner.cpp, cmx_cycles.c)


def run_cycles(app: AppFolder, options: RunOptions) -> Outcome:
    if app.model_names():
        raise RunError("--cycles measures an app of one model", "run it on a one-model app of each model")
    image = app_image(app, options.runner, "build")
    priced = priced_as(app.board(), options.cycles_as)
    measuring = CycleRun(app.board(), image, options.timeout, images=simulator_loads(app), priced_as=priced)
    result = measuring.runner.run(image)
    found = measuring.read().total
    board = measuring.priced
    result.line = f"{result.line} cyc={found.cycles[1]}"
    checked = verdict(app, result)
    at = next(i for i, line in enumerate(checked.lines) if line.endswith(f" cyc={found.cycles[1]}")) + 1
    lines = (
        *checked.lines[:at],
        found.describe(board.core.clock_hz, measuring.assumes()),
        found.where(),
        *checked.lines[at:],
    )
    return Outcome(lines, checked.status)


def app_image(app: AppFolder, runner: str | None, build_dir: str) -> Path:
    """The ELF a cycle estimate runs; a RunError naming why there is none to run under the plugin
    (a core with no timing table, another runner, a board without QEMU, a Zephyr build folder)."""
    board = app.board()
    timing.load(board.core.name)  # before anything slow: a core with no table is one line
    if runner not in (None, "qemu"):
        raise RunError(f"--cycles runs under QEMU, not --runner {runner}", "drop --runner")
    if board.qemu is None:
        raise RunError(f"--cycles runs under QEMU and board {board.id} has no QEMU machine", "pick a QEMU board")
    kind = kind_of(app)
    if not kind.image_is_file:
        raise RunError(
            f"--cycles runs one ELF under cmx-gen's QEMU runner; a {kind.name} app runs from its build folder",
            "create a bare-metal app of the same model (--rtos baremetal) for the estimate",
        )
    image = kind.image(app, build_dir)
    if image is None:
        raise RunError(f"no firmware to run in {app.path / build_dir}", f"run `cmx-gen build {app.path}` first")
    return image


def priced_as(board: Board, board_id: str | None) -> Board | None:
    """`--cycles-as`'s board, or None: one of the same core (the estimate prices the instructions the
    app's core ran)."""
    if board_id is None:
        return None
    priced = load_board(board_id)
    if priced.core.name != board.core.name:
        raise RunError(
            f"--cycles-as prices the same core: {priced.id} has a {priced.core.name}, {board.id} a {board.core.name}",
            f"name a {board.core.name} board",
        )
    return priced


@dataclass(frozen=True)
class Measured:
    total: estimate.Estimate  # the measured region (the inference)
    segments: dict[int, estimate.Estimate]  # with marks: each key's (the profile image's rows)


class CycleRun:
    """`image` under QEMU with cmx-gen's plugin between the runner's measure edges (and, with
    `marks`, cut at the profile image's cmx_profile_mark calls); then what it counted, priced. With
    `priced_as`, a board of the same core whose clock and memories price it: the image runs on
    `board`'s QEMU machine, each of its memories taken for the priced board's of the same kind."""

    def __init__(
        self,
        board: Board,
        image: Path,
        timeout: float,
        marks: bool = False,
        images: Sequence[tuple[Path, int]] = (),
        priced_as: Board | None = None,
    ) -> None:
        self.board = board
        self.priced = priced_as or board
        self.table = timing.load(self.board.core.name)
        self.image = image
        symbols = _symbols(image, (*EDGES, MARKS) if marks else EDGES)
        self.out = image.parent / "cycles.txt"
        self.out.unlink(missing_ok=True)
        self.regions = list(self.board.memory)
        self.stand_ins = {r.name: _same_kind(r, self.priced) for r in self.regions}
        self.waits = {
            name: estimate.Waits(m.wait_states, m.accelerator) if m else estimate.Waits()
            for name, m in self.stand_ins.items()
        }
        caches = {i: a for i, r in enumerate(self.regions) if (a := self.waits[r.name].accelerator) is not None}
        mark_range = (symbols[MARKS][0], symbols[MARKS][0] + symbols[MARKS][1]) if marks else None
        spec = plugin.argument(
            plugin.build(),
            symbols[EDGES[0]][0],
            symbols[EDGES[1]][0],
            self.out,
            [(r.base, r.end) for r in self.regions],
            mark_range,
            caches,
        )
        self.runner = QemuRunner(self.board, timeout, plugin=spec)
        self.runner.images = list(images)  # a slot app's model (model_slots.simulator_loads)

    def read(self) -> Measured:
        counts = plugin.read(self.out, [r.name for r in self.regions])
        code = listing.Listing(self.image, self.table.disassemble_as)
        memo: estimate.Memo = {}  # each block priced once, for the whole and for its segments
        total = estimate.estimate(counts, code, self.table, self.waits, memo)
        return Measured(total, estimate.by_segment(counts, code, self.table, self.waits, memo))

    def assumes(self) -> str:
        """What the figures assume of the board's memories."""
        parts = []
        for region in self.regions:
            m = self.stand_ins[region.name]
            if m is None or not m.wait_states:
                continue
            name = region.name if m is region else f"{region.name} as {self.priced.id}'s {m.name}"
            if m.accelerator is None:
                parts.append(f"{name} {m.wait_states} on each data access")
                continue
            a = m.accelerator
            parts.append(
                f"{name} {m.wait_states} on each line its accelerator misses ({a.lines} instruction and "
                f"{a.data_lines} data lines of {a.line_bytes} bytes, least recently used out, "
                f"{'the next line read ahead' if a.prefetch else 'no prefetch'})"
            )
        where = "" if self.priced is self.board else f"at {self.priced.id}'s clock; "
        if not parts:
            return f"{where}zero wait states on every memory (the board file gives none), instruction fetch included"
        fetch = "" if any(self.waits[r.name].accelerator for r in self.regions) else ", instruction fetch without"
        return f"{where}wait states: {'; '.join(parts)} (board file){fetch}"


def _same_kind(region: MemoryRegion, priced: Board) -> MemoryRegion | None:
    """The priced board's memory that stands in for `region`: itself on its own board, else the
    first of the same kind (flash for flash: where the code and the weights are read)."""
    if region in priced.memory:
        return region
    return next((m for m in priced.memory if m.kind == region.kind), None)


def _symbols(image: Path, names: tuple[str, ...]) -> dict[str, tuple[int, int]]:
    """The address and size of each of `names` in `image`'s symbol table."""
    nm = shutil.which("arm-none-eabi-nm")
    if nm is None:
        raise RunError("arm-none-eabi-nm not found", "install the Arm GNU toolchain (arm-none-eabi-gcc)")
    symbols = {}
    for line in subprocess.run([nm, "-S", str(image)], capture_output=True, text=True).stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[-1] in names:
            symbols[parts[-1]] = (int(parts[0], 16), int(parts[1], 16) if len(parts) == 4 else 0)
    missing = [name for name in names if name not in symbols]
    if missing:
        raise RunError(
            f"{image.name} has no {' / '.join(missing)}: it was built by an older cmx-gen",
            "regenerate and rebuild it: `cmx-gen regen APP && cmx-gen build APP`",
        )
    return symbols
