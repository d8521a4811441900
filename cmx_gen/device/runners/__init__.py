"""Run backends for built firmware, one module each (like Zephyr's runners): qemu, fvp."""

from __future__ import annotations

from cmx_gen.device.runners.base import Result, Runner, parse_result_line
from cmx_gen.device.runners.fvp import FvpRunner
from cmx_gen.device.runners.qemu import QemuRunner

RUNNERS: dict[str, type[Runner]] = {"qemu": QemuRunner, "fvp": FvpRunner}

__all__ = ["RUNNERS", "FvpRunner", "QemuRunner", "Result", "Runner", "parse_result_line"]
