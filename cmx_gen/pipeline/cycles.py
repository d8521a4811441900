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
from cmx_gen.fit.boards import Board
from cmx_gen.pipeline.run_outcome import Outcome, RunOptions, verdict

EDGES = ("cmx_measure_begin", "cmx_measure_end")  # the runner's measured region (cmx_runner.cpp)
MARKS = "cmx_profile_marks"  # the profile image's marks (cmx_runner.cpp, cmx_cycles.c)


def run_cycles(app: AppFolder, options: RunOptions) -> Outcome:
    if app.model_names():
        raise RunError("--cycles measures an app of one model", "run it on a one-model app of each model")
    image = app_image(app, options.runner, "build")
    measuring = CycleRun(app.board(), image, options.timeout, images=simulator_loads(app))
    result = measuring.runner.run(image)
    found = measuring.read().total
    board = measuring.board
    result.line = f"{result.line} cyc={found.cycles[1]}"
    checked = verdict(app, result)
    at = next(i for i, line in enumerate(checked.lines) if line.endswith(f" cyc={found.cycles[1]}")) + 1
    lines = (
        *checked.lines[:at],
        found.describe(board.core.clock_hz, _waits(board)),
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


@dataclass(frozen=True)
class Measured:
    total: estimate.Estimate  # the measured region (the inference)
    segments: dict[int, estimate.Estimate]  # with marks: each key's (the profile image's rows)


class CycleRun:
    """`image` under QEMU with cmx-gen's plugin between the runner's measure edges (and, with
    `marks`, cut at the profile image's cmx_profile_mark calls); then what it counted, priced."""

    def __init__(
        self, board: Board, image: Path, timeout: float, marks: bool = False, images: Sequence[tuple[Path, int]] = ()
    ) -> None:
        self.board = board
        self.table = timing.load(self.board.core.name)
        self.image = image
        symbols = _symbols(image, (*EDGES, MARKS) if marks else EDGES)
        self.out = image.parent / "cycles.txt"
        self.out.unlink(missing_ok=True)
        self.regions = list(self.board.memory)
        mark_range = (symbols[MARKS][0], symbols[MARKS][0] + symbols[MARKS][1]) if marks else None
        spec = plugin.argument(
            plugin.build(),
            symbols[EDGES[0]][0],
            symbols[EDGES[1]][0],
            self.out,
            [(r.base, r.end) for r in self.regions],
            mark_range,
        )
        self.runner = QemuRunner(self.board, timeout, plugin=spec)
        self.runner.images = list(images)  # a slot app's model (model_slots.simulator_loads)

    def read(self) -> Measured:
        counts = plugin.read(self.out, [r.name for r in self.regions])
        code = listing.Listing(self.image, self.table.disassemble_as)
        waits = {r.name: r.wait_states for r in self.regions}
        memo: estimate.Memo = {}  # each block priced once, for the whole and for its segments
        total = estimate.estimate(counts, code, self.table, waits, memo)
        return Measured(total, estimate.by_segment(counts, code, self.table, waits, memo))

    def assumes(self) -> str:
        """What the figures assume of the board's memories."""
        return _waits(self.board)


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


def _waits(board: Board) -> str:
    """What the estimate assumes of the board's memories."""
    waiting = [f"{r.name} {r.wait_states}" for r in board.memory if r.wait_states]
    if not waiting:
        return "zero wait states on every memory (the board file gives none), instruction fetch included"
    return f"data wait states {', '.join(waiting)} (board file), instruction fetch without wait states"
