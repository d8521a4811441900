"""A board's console on a serial port (pyserial): the result line of an image running on hardware.

Opened before the board starts (`cmx-gen flash APP --serial PORT` opens it, flashes, and the reset
that follows prints the line into it), or waited on while the user resets the board (`cmx-gen run
APP --serial PORT`). The verdict is parsed as under QEMU; a board counts cycles, not instructions.
"""

from __future__ import annotations

import errno
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from cmx_gen.common.errors import RunError
from cmx_gen.device import result_line
from cmx_gen.device.runners.base import Result, parse_result_line


class SerialConsole:
    name = "serial"

    def __init__(self, port: str, baud: int = 115200, timeout: float = 60.0, settle_seconds: float = 0.5) -> None:
        self.port = port
        self.baud = baud
        self.timeout = timeout
        self.settle_seconds = settle_seconds  # lines after the result line (a profile) keep coming briefly
        self._serial: Any = None

    @contextmanager
    def open(self) -> Iterator[SerialConsole]:
        try:
            import serial
        except ImportError as exc:
            raise RunError("pyserial is not installed", "pip install pyserial (cmx-gen's set-up installs it)") from exc
        try:
            self._serial = serial.Serial(self.port, self.baud, timeout=0.1)
        except serial.SerialException as exc:
            raise _open_error(self.port, exc) from exc
        try:
            yield self
        finally:
            self._serial.close()
            self._serial = None

    def read_result(self) -> Result:
        """Lines until the result line (then `settle_seconds` more), or a RunError at the timeout."""
        assert self._serial is not None, "open() first"
        text, seen_at = "", None
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            chunk = self._serial.read(4096)
            if chunk:
                text += chunk.decode("utf-8", errors="replace").replace("\r\n", "\n")
                if seen_at is None and result_line.result_re().search(text):
                    seen_at = time.monotonic()
            if seen_at is not None and time.monotonic() - seen_at >= self.settle_seconds:
                break
        result = parse_result_line(text)
        if result is None:
            raise RunError(
                f"no cmx-gen result line on {self.port} within {self.timeout:.0f} s; read: {text.strip()[-200:]!r}",
                f"check the baud rate ({self.baud}) and that the image prints on this UART "
                "(bare metal: -D CMX_CONSOLE=uart; Zephyr: its console), then reset the board",
            )
        result.output = text
        return result

    def run(self) -> Result:
        with self.open():
            return self.read_result()


def _open_error(port: str, exc: Exception) -> RunError:
    code = getattr(exc, "errno", None)
    if code == errno.EACCES:
        return RunError(
            f"cannot open {port}: permission denied",
            "add your user to the port's group (Debian/Ubuntu: sudo usermod -aG dialout $USER, then log in again)",
        )
    if code == errno.ENOENT:
        return RunError(
            f"cannot open {port}: no such port", "plug the board in; `ls /dev/ttyACM* /dev/ttyUSB*` lists its console"
        )
    if code == errno.EBUSY:
        return RunError(
            f"cannot open {port}: it is in use", "close the other terminal program (screen, minicom, picocom) first"
        )
    return RunError(f"cannot open {port}: {exc}", "check the port name and that the board is connected")
