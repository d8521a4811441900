"""What every way of running an app shares: the options `cmx-gen run` was given, what a run found (lines
and an exit status: 0 PASS, 1 FAIL), which image runs and with what, and the verdict kept for the HTML page."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cmx_gen.app.folder import AppFolder
from cmx_gen.app.kinds import kind_of
from cmx_gen.common.errors import RunError
from cmx_gen.device import result_line
from cmx_gen.device.runners import Result, Runner


@dataclass(frozen=True)
class RunOptions:
    """What `cmx-gen run` was asked for (its flags, checked against each other by `run`)."""

    runner: str | None = None  # qemu | fvp | west; None: the board's default
    elf: Path | None = None
    timeout: float = 120.0
    dry_run: bool = False
    serial: str | None = None  # a flashed board's console
    baud: int = 115200
    profile: bool = False
    trace: bool = False
    cycles: bool = False  # the cycle estimate under QEMU (cycles.py)
    cycles_as: str | None = None  # a board id whose clock and memories price it (same core)
    json: Path | None = None  # with profile: the rows as JSON
    user_app: bool = False
    data: Path | None = None
    labels: Path | None = None
    model: str | None = None  # --data on an app of several models: which model the data set is for


@dataclass(frozen=True)
class Outcome:
    lines: tuple[str, ...]
    status: int


def verdict(app: AppFolder, result: Result) -> Outcome:
    """The verdict's lines; 0 for PASS, and for RAN (it ran; the note says nothing was checked). The
    line is kept for the HTML report, which is written again with it."""
    if result.line:
        record(app, "check", result.line)
    slots = tuple(m.group(0) for m in result_line.diagnostic_re("slot").finditer(result.output))
    return Outcome(
        slots + tuple(app.verdict(result.line, result.model_lines)),
        0 if result.passed or result.verdict == "RAN" else 1,
    )


def record(app: AppFolder, run: str, line: str) -> None:
    """The page's "Last result": this run's line and kind (build/last_result.txt), the page written again."""
    from cmx_gen.app import html_report

    html_report.record_result(app.path, run, line)
    html_report.write(app.path)


def image_and_runner(app: AppFolder, options: RunOptions, build_dir: str) -> tuple[Path, Runner]:
    """What runs (an ELF, or a build folder the kind's runner takes) and what runs it."""
    kind = kind_of(app)
    runner = kind.runner(app, options.timeout, options.runner)
    if options.elf and build_dir == "build":
        return options.elf, runner
    image = kind.image(app, build_dir)
    if image is None and not options.dry_run:
        raise RunError(f"no firmware to run in {app.path / build_dir}", f"run `cmx-gen build {app.path}` first")
    return image or app.path / build_dir / "<app>.elf", runner
