"""What every run backend shares: the command, a timeout, and parsing the one result line."""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from cmx_gen.common.errors import RunError
from cmx_gen.device import result_line
from cmx_gen.fit.boards import Board


@dataclass
class Result:
    """The firmware's verdict: `cmx-gen: PASS max_abs_err=0 instr=... method=U/A ...`."""

    passed: bool
    line: str
    verdict: str = ""  # PASS | FAIL | RAN (ran, no reference to check against)
    fields: dict[str, str] = field(default_factory=dict)
    exit_code: int | None = None
    output: str = ""
    model_lines: list[str] = field(default_factory=list)  # an app of several: each model's line, before `line`

    def pool(self, name: str) -> tuple[int, int] | None:
        """(used, allocated) bytes of pool `method`, `planned` or `temp`."""
        value = self.fields.get(name)
        if not value or "/" not in value:
            return None
        used, allocated = value.split("/", 1)
        return int(used), int(allocated)

    @property
    def count(self) -> tuple[str, int] | None:
        """("instr" | "cycles", value) per inference."""
        for key in ("instr", "cycles"):
            if key in self.fields:
                return key, int(self.fields[key])
        return None


def parse_result_line(output: str) -> Result | None:
    """The last result line in the console output (an app of several models: the summary, with each
    model's line in `model_lines`), or None if the firmware printed none."""
    found = None
    models: list[str] = []
    for line in output.splitlines():
        m = result_line.result_re().search(line)
        if m:
            fields = dict(item.split("=", 1) for item in m.group(2).split())
            found = Result(passed=m.group(1) == "PASS", line=m.group(0), fields=fields, verdict=m.group(1))
            if "model" in fields:
                models.append(m.group(0))
    if found is not None and "models" in found.fields:
        found.model_lines = models
    return found


def parse_hex_lines(output: str, tag: str) -> dict[int, bytes]:
    """Bytes the runner printed as `cmx-gen: <tag> <i> <offset> <hex>` lines (cmx_runner.cpp
    print_hex), joined per index in offset order."""
    chunks: dict[int, dict[int, bytes]] = {}
    for m in result_line.diagnostic_re(tag).finditer(output):
        chunks.setdefault(int(m.group(1)), {})[int(m.group(2))] = bytes.fromhex(m.group(3))
    return {i: b"".join(part for _, part in sorted(parts.items())) for i, parts in chunks.items()}


def parse_outputs(output: str) -> dict[int, bytes]:
    """The output bytes an image built with -D CMX_DUMP_OUTPUTS=ON prints after its result line."""
    return parse_hex_lines(output, "out")


class Runner:
    """One way to run an ELF. Subclasses give `name`, `executable`, `available_for` and `command`."""

    name = "base"
    executable = ""

    def __init__(self, board: Board, timeout: float = 120.0, cwd: Path | None = None) -> None:
        self.board = board
        self.timeout = timeout
        self.cwd = cwd  # where the command runs (west needs its workspace)
        # Files loaded at an address beside the image (a model slot's image: placement = "slot").
        self.images: list[tuple[Path, int]] = []

    @classmethod
    def available_for(cls, board: Board) -> bool:
        raise NotImplementedError

    def command(self, elf: Path, args: str = "") -> list[str]:
        """The command that runs `elf`; `args` is the program's semihosting command line
        (`cmx-input=PATH` for `run --data`)."""
        raise NotImplementedError

    # After the result line an image that exits (semihosting) does so at once; one built to run
    # stand-alone (-D CMX_SEMIHOSTING=OFF) sleeps for ever and is stopped after this many seconds.
    settle_seconds = 2.0

    def run(self, elf: Path) -> Result:
        cmd = self.command(elf)
        if shutil.which(cmd[0]) is None:
            raise RunError(f"{cmd[0]} not found on PATH", self.install_hint())
        output, exit_code = self._run_until(cmd, result_line.result_re())
        result = parse_result_line(output)
        if result is None:
            raise RunError(
                f"the firmware printed no result line (exit {exit_code}); output: {output.strip()[-300:]!r}",
                "rebuild with `cmx-gen build APP --clean`; a hang or fault before main() prints nothing",
            )
        result.exit_code = exit_code
        result.output = output
        return result

    def run_app(
        self,
        elf: Path,
        args: str = "",
        on_line: Callable[[str], None] | None = None,
        console_input: bytes | None = None,
    ) -> tuple[str, int | None]:
        """Run the user's application image until it exits or prints its `done` line; the console
        output and the exit code (None when it was stopped). `on_line` sees each line as it comes;
        `console_input` goes to the image's console (its UART on QEMU's stdio), as a host sends it."""
        cmd = self.command(elf, args)
        if shutil.which(cmd[0]) is None:
            raise RunError(f"{cmd[0]} not found on PATH", self.install_hint())
        return self._run_until(cmd, result_line.app_end_re(), on_line, console_input)

    def _run_until(
        self,
        cmd: list[str],
        stop: re.Pattern[str],
        on_line: Callable[[str], None] | None = None,
        console_input: bytes | None = None,
    ) -> tuple[str, int | None]:
        """Run `cmd` until it exits, or until `settle_seconds` after it printed a line matching
        `stop` (then it is stopped and the exit code is None); a run that reaches `timeout` is an error."""
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL if console_input is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            cwd=self.cwd,
        )
        if console_input is not None:
            _feed(proc, console_input)
        lines, seen, reader = _read_lines(proc, stop, on_line)
        try:
            stopped, timed_out = self._wait(proc, seen)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            reader.join(timeout=5)
        output = "".join(lines)
        if timed_out:
            raise RunError(
                f"{self.name} did not finish within {self.timeout:.0f} s; last output: {output.strip()[-200:]!r}",
                "raise --timeout, or check the firmware with `--dry-run` and a debugger",
            )
        return output, None if stopped else proc.returncode

    def _wait(self, proc: subprocess.Popen[str], seen: threading.Event) -> tuple[bool, bool]:
        """(stopped, timed out): after the stop line the firmware has `settle_seconds` to exit by
        itself before it is stopped; without it, `timeout` bounds the run."""
        deadline = time.monotonic() + self.timeout
        while proc.poll() is None:
            if seen.wait(timeout=0.1):
                try:
                    proc.wait(timeout=self.settle_seconds)
                except subprocess.TimeoutExpired:
                    return True, False
                return False, False
            if time.monotonic() > deadline:
                return False, True
        return False, False

    def install_hint(self) -> str:
        return f"install {self.executable}"


def _feed(proc: subprocess.Popen[str], console_input: bytes) -> None:
    """Write the console input from a thread: the pipe holds 64 KiB, QEMU's UART takes the rest as
    the firmware reads."""

    def feed() -> None:
        try:
            proc.stdin.buffer.write(console_input)  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
        except (BrokenPipeError, ValueError, OSError):
            pass

    threading.Thread(target=feed, daemon=True).start()


def _read_lines(
    proc: subprocess.Popen[str], stop: re.Pattern[str], on_line: Callable[[str], None] | None
) -> tuple[list[str], threading.Event, threading.Thread]:
    """Collect the output lines from a thread, each passed on to `on_line`, and set the event at a
    line matching `stop`: the caller waits on the event, with a deadline, not on the pipe."""
    lines: list[str] = []
    seen = threading.Event()

    def pump() -> None:
        for line in proc.stdout:  # type: ignore[union-attr]
            lines.append(line)
            if on_line is not None:
                on_line(line)
            if stop.search(line):
                seen.set()

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    return lines, seen, reader
