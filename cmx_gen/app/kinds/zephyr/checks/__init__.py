"""Offline checks of a generated Zephyr app: everything we can verify without a Zephyr tree.

Zephyr itself is not fetched (too large), so each check uses the tool Zephyr uses, fed with
reduced inputs kept as data (cmx_gen/data/zephyr/):

- twister:     sample.yaml against Twister's pykwalify schema (+ the rules Twister adds on top)
- west:        west.yml with west.manifest.validate (+ pinned revisions, module allow-list)
- kconfig:     prj.conf + boards/<board>.conf loaded by kconfiglib into a stub Kconfig tree made
               of the curated upstream symbol definitions, the board's SoC selects and the
               app's own Kconfig; undefined symbols and values that do not stick are errors,
               as in Zephyr's build
- devicetree:  each boards/<board>.overlay preprocessed and parsed with dtlib on top of a memory
               stub of the board's DTS, so &labels resolve; memory-region nodes are checked and
               every region the linker snippets name must exist
- compile:     the shared runner and the model sources through arm-none-eabi-g++/gcc
               (-fsyntax-only, the .S assembled) against the ExecuTorch headers of the wheel

What the checks cannot see is listed in `NOT_CHECKED` and printed by `cmx-gen validate`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from cmx_gen.app.kinds.zephyr.checks.compile import check_compile
from cmx_gen.app.kinds.zephyr.checks.devicetree import check_devicetree
from cmx_gen.app.kinds.zephyr.checks.kconfig import check_kconfig, write_autoconf
from cmx_gen.app.kinds.zephyr.checks.result import CheckResult, Finding
from cmx_gen.app.kinds.zephyr.checks.twister import check_twister, twister_schema_path
from cmx_gen.app.kinds.zephyr.checks.west import check_west

NOT_CHECKED = [
    "Zephyr's CMake configure and build (needs a Zephyr tree): CMakeLists.txt and the linker "
    "snippets are only checked for the memory regions they name",
    "the Zephyr platform layer and src/main.c (need Zephyr's headers; the shared runner is compiled)",
    "Kconfig symbols beyond the curated list in cmx_gen/data/zephyr/kconfig.yaml (reported as undefined)",
    "devicetree bindings (edtlib): properties are parsed, not checked against binding schemas",
]


CHECKS: dict[str, Callable[[Path], CheckResult]] = {
    "twister": check_twister,
    "west": check_west,
    "kconfig": check_kconfig,
    "devicetree": check_devicetree,
    "compile": check_compile,
}


def validate_app(app: Path, only: list[str] | None = None) -> list[CheckResult]:
    """Run the Zephyr app's offline checks (all, or `only` these) on a generated app folder."""
    app = Path(app).resolve()
    return [CHECKS[name](app) for name in (only or list(CHECKS))]


__all__ = [
    "CHECKS",
    "NOT_CHECKED",
    "CheckResult",
    "Finding",
    "check_compile",
    "check_devicetree",
    "check_kconfig",
    "check_twister",
    "check_west",
    "twister_schema_path",
    "validate_app",
    "write_autoconf",
]
