"""`cmx-gen validate` on a Zephyr module package: what can be checked without a Zephyr tree.

- module:  zephyr/module.yml as Zephyr reads it (keys, name, the CMake folder and Kconfig it names)
- kconfig: its Kconfig in the stub of Zephyr's Kconfig tree (the Zephyr app's checks), enabled the
           way the README says (CONFIG_CPP, CONFIG_STD_CPP17, CONFIG_CMX_MODEL) on the board the
           package was made for: it parses and every value sticks
- compile: the model API and each model's sources through arm-none-eabi-g++/gcc against the
           ExecuTorch headers (the Zephyr app's compile check)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from cmx_gen.app.kinds.zephyr.checks.compile import check_compile
from cmx_gen.app.kinds.zephyr.checks.kconfig import check_module_kconfig
from cmx_gen.app.kinds.zephyr.checks.modules import check_module
from cmx_gen.app.kinds.zephyr.checks.result import CheckResult

# What README.md tells a user to put in prj.conf.
ENABLE = ["CONFIG_CPP=y", "CONFIG_STD_CPP17=y", "CONFIG_CMX_MODEL=y"]


def _kconfig(package: Path) -> CheckResult:
    from cmx_gen.app.folder import AppFolder
    from cmx_gen.app.kinds.zephyr.layout import zephyr_boards

    board = AppFolder(package).board()
    info = zephyr_boards().get(board.zephyr.file_name, {}) if board.zephyr else {}
    return check_module_kconfig(package, ENABLE, list(info.get("soc_selects", [])))


CHECKS: dict[str, Callable[[Path], Any]] = {"module": check_module, "kconfig": _kconfig, "compile": check_compile}

NOT_CHECKED = [
    "Zephyr's CMake configure and build of an application that enables the module (needs a Zephyr "
    "tree; tests/app/kinds/package configure and compile one against cmx-gen's stand-in)",
    "Kconfig symbols beyond the curated list in cmx_gen/data/zephyr/kconfig.yaml (reported as undefined)",
    "the board your application builds for: the module refuses another core when Zephyr configures it",
]
