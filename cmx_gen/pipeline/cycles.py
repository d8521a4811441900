"""`cmx-gen run APP --cycles`: the check image run under QEMU with cmx-gen's TCG plugin, and the
inference's cycles estimated from what ran (device/cycles/): `cyc=` on the result line, then the
estimate's range, its milliseconds at the board's clock and what it assumes (docs/cycles.md)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from cmx_gen.app.folder import AppFolder
from cmx_gen.app.kinds import kind_of
from cmx_gen.common.errors import RunError
from cmx_gen.device.cycles import listing, plugin, timing
from cmx_gen.device.runners import QemuRunner
from cmx_gen.fit.boards import Board
from cmx_gen.pipeline.run_outcome import Outcome, RunOptions, verdict

EDGES = ("cmx_measure_begin", "cmx_measure_end")  # the runner's measured region (cmx_runner.cpp)


def run_cycles(app: AppFolder, options: RunOptions) -> Outcome:
    board = app.board()
    table = timing.load(board.core.name)  # before anything slow: a core with no table is one line
    if app.model_names():
        raise RunError("--cycles measures an app of one model", "run it on a one-model app of each model")
    if options.runner not in (None, "qemu"):
        raise RunError(f"--cycles runs under QEMU, not --runner {options.runner}", "drop --runner")
    if board.qemu is None:
        raise RunError(f"--cycles runs under QEMU and board {board.id} has no QEMU machine", "pick a QEMU board")
    kind = kind_of(app)
    if not kind.image_is_file:
        raise RunError(
            f"--cycles runs one ELF under cmx-gen's QEMU runner; a {kind.name} app runs from its build folder",
            "create a bare-metal app of the same model (--rtos baremetal) for the estimate",
        )
    image = kind.image(app, "build")
    if image is None:
        raise RunError(f"no firmware to run in {app.path / 'build'}", f"run `cmx-gen build {app.path}` first")
    begin, end = _edges(image)
    out = image.parent / "cycles.txt"
    out.unlink(missing_ok=True)
    regions = list(board.memory)
    spec = plugin.argument(plugin.build(), begin, end, out, [(r.base, r.end) for r in regions])
    result = QemuRunner(board, options.timeout, plugin=spec).run(image)
    counts = plugin.read(out, [r.name for r in regions])
    found = timing.estimate(counts, listing.Listing(image), table, {r.name: r.wait_states for r in regions})
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


def _edges(image: Path) -> tuple[int, int]:
    """The addresses of the measured region's two edge functions in `image`."""
    nm = shutil.which("arm-none-eabi-nm")
    if nm is None:
        raise RunError("arm-none-eabi-nm not found", "install the Arm GNU toolchain (arm-none-eabi-gcc)")
    symbols = {}
    for line in subprocess.run([nm, str(image)], capture_output=True, text=True).stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] in EDGES:
            symbols[parts[2]] = int(parts[0], 16)
    if len(symbols) != 2:
        raise RunError(
            f"{image.name} has no {' / '.join(EDGES)}: it was built by a cmx-gen without --cycles",
            "regenerate and rebuild it: `cmx-gen regen APP && cmx-gen build APP`",
        )
    return symbols[EDGES[0]], symbols[EDGES[1]]


def _waits(board: Board) -> str:
    """What the estimate assumes of the board's memories."""
    waiting = [f"{r.name} {r.wait_states}" for r in board.memory if r.wait_states]
    if not waiting:
        return "zero wait states on every memory (the board file gives none), instruction fetch included"
    return f"data wait states {', '.join(waiting)} (board file), instruction fetch without wait states"
