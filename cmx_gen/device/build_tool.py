"""Running a build tool (CMake + Ninja, west) the way every app kind does: ninja's progress every
~10 %, the full output in a log file, and a failure as one line naming what went wrong."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from cmx_gen.common import progress
from cmx_gen.common.errors import BuildError


def stream(cmd: list[str], cwd: Path, log: Path, label: str, env: dict[str, str] | None = None) -> int:
    """Run a build step, print ninja's progress every ~10 %, keep the full log; return steps run."""
    steps = 0
    last_decile = -1
    tail: list[str] = []
    with (
        open(log, "a") as out,
        subprocess.Popen(
            cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace", env=env
        ) as proc,
    ):
        assert proc.stdout is not None
        for line in proc.stdout:
            out.write(line)
            tail = (tail + [line.rstrip()])[-40:]
            m = re.match(r"\[(\d+)/(\d+)\]", line)
            if m:
                done, total = int(m.group(1)), int(m.group(2))
                steps = max(steps, done)
                decile = 10 * done // max(total, 1)
                if decile != last_decile:
                    last_decile = decile
                    progress.say(f"{label}: {done}/{total}")
        code = proc.wait()
    if code != 0:
        raise BuildError(f"{label} failed (exit {code}): {error_summary(tail)}", f"full log: {log}")
    return steps


def error_summary(lines: list[str]) -> str:
    """What went wrong, in one line: the text of the last `CMake Error` (its indented lines; the
    header alone says only where), else the compiler/linker error lines, else the last lines."""
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].startswith("CMake Error"):
            message: list[str] = []
            for line in lines[i + 1 :]:
                if line.strip() and not line.startswith(" "):
                    break
                if not line.strip() and message:
                    break
                message.append(line.strip())
            text = " ".join(m for m in message if m)
            if text:
                return f"{lines[i].strip()} {text}"
    errors = [t for t in lines if "error" in t.lower() or "FAILED" in t] or lines[-5:]
    return " | ".join(errors[-4:])
