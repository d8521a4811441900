"""Model packages: the model, its API, the runtime and the kernels it needs, for a team's own firmware.

Where an app is a whole firmware (main, start-up, linker script), a package is what a firmware adds:
`cmake-package` is a folder the user's CMake project adds (`add_subdirectory` or `find_package`) and
links (`cmx::model`); `zephyr-module` is the same folder as a Zephyr module a user's west.yml lists and
prj.conf enables (`CONFIG_CMX_MODEL`). Neither has a main, start-up code or a linker script of its own,
so cmx-gen does not build, run or flash them: the user's firmware does, and checks the model on its
target with `cmx_self_test()` (cmx.h). The package's README says how to add it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypedDict

from cmx_gen.app.kinds.base import AppKind, Built
from cmx_gen.common.errors import CmxError
from cmx_gen.common.targets import arch_macros, cores

if TYPE_CHECKING:
    from cmx_gen.app.folder import AppFolder
    from cmx_gen.app.template_context import TemplateContext
    from cmx_gen.fit.boards import Board
    from cmx_gen.fit.memory import Placement
    from cmx_gen.program.report import Report


class PackageContext(TypedDict):
    """`cookiecutter.package`: what the user's compile flags must give (the package's configure-time
    check and cmx_model_instance.cpp's #error), and the sizes its README states."""

    arch: str
    arches: list[str]
    isa: str
    fpu: bool
    flags: str
    zephyr_requires: list[str]
    arena_bytes: int
    pte_bytes: int
    code_bytes: int


class _Package(AppKind):
    """What both package kinds share: their program and pools in sections a generic linker script
    already places (`.rodata.*`, `.bss.*` / Zephyr's `.noinit.*`), and no image of their own."""

    pte_section = ".rodata.cmx_model"
    noun = "package"
    run_hint = (
        "a package runs in your firmware, which checks it there with <code>cmx_init()</code> and "
        "<code>cmx_self_test()</code> (README.md)"
    )
    profile_hint = (
        "create the same model as an app (<code>--rtos baremetal</code>) and run it with <code>--profile</code>"
    )
    how_to_add = ""  # the two lines that add it, for `create`'s summary

    def context(
        self, ctx: TemplateContext, report: Report, placement: Placement, board: Board
    ) -> Mapping[str, PackageContext]:
        core = board.core
        return {
            "package": {
                # What the user's compile flags must give (the package's configure-time check and
                # cmx_model_instance.cpp's #error): the core's architecture, code path and FPU.
                "arch": core.arch,
                "arches": [f"{arch}={'|'.join(macros)}" for arch, macros in arch_macros().items()],
                "isa": core.isa,
                "fpu": core.fpu is not None,
                "flags": " ".join([*core.gcc_flags, "-mthumb"]),
                "zephyr_requires": _zephyr_requires(board),
                "arena_bytes": placement.arena_bytes,
                "pte_bytes": placement.pte_bytes,
                "code_bytes": placement.code_bytes,
            }
        }

    def next_steps(self, app: Path) -> list[str]:
        return [f"next       {self.how_to_add.format(app=app)} ({app / 'README.md'})"]

    def require_image(self, command: str) -> NoReturn:
        raise CmxError(
            f"{command}: a {self.name} is built, run and flashed by your firmware's own build, not by cmx-gen",
            f"{self.how_to_add.format(app='PACKAGE')}, and call cmx_self_test() on the target (the package's "
            "README.md); for an image cmx-gen builds and checks on QEMU, create the same model with --rtos baremetal",
        )

    def build(
        self,
        app: AppFolder,
        build_dir: Path | None = None,
        clean: bool = False,
        jobs: int | None = None,
        defines: list[str] | None = None,
        diagnostic: str | None = None,
    ) -> Built:
        self.require_image("cmx-gen build")


def _zephyr_requires(board: Board) -> list[str]:
    """`SYMBOL=y|n`: the Kconfig values by which a Zephyr build's board has the package's core, its
    code path and its FPU (the module's configure-time check)."""
    core = board.core
    facts = cores()[core.name]
    requires = [f"CPU_{core.name.upper().replace('-', '_')}=y"]
    if facts["isa"] == "MVE":
        requires.append(f"ARMV8_1_M_MVEI={'y' if core.isa == 'MVE' else 'n'}")
    if facts.get("zephyr_dsp"):
        requires.append(f"{facts['zephyr_dsp']}={'n' if core.isa == 'SCALAR' else 'y'}")
    # CONFIG_FPU as Zephyr's Kconfig allows it on the board (an SoC may not select CPU_HAS_FPU for a
    # core that has one: then Zephyr builds soft-float, as the Zephyr app does there).
    from cmx_gen.app.kinds.zephyr.layout import zephyr_boards, zephyr_fpu

    info = (zephyr_boards().get(board.zephyr.file_name) or {}) if board.zephyr is not None else None
    requires.append(f"FPU={'y' if zephyr_fpu(board, info) else 'n'}")
    return requires


class CMakePackage(_Package):
    name = "cmake-package"
    template = "cmake_package"
    description = "CMake package for your own firmware: add_subdirectory() it, link cmx::model"
    how_to_add = "add_subdirectory({app}) and target_link_libraries(<your firmware> PRIVATE cmx::model)"


class ZephyrModule(_Package):
    name = "zephyr-module"
    template = "zephyr_module"
    description = "Zephyr module for your own Zephyr application: list it in west.yml, CONFIG_CMX_MODEL=y"
    how_to_add = "list {app} in your west.yml (or ZEPHYR_EXTRA_MODULES) and set CONFIG_CMX_MODEL=y in prj.conf"

    def checks(self) -> dict[str, Callable[[Path], Any]]:
        from cmx_gen.app.kinds.package.module_checks import CHECKS

        return CHECKS

    def not_checked(self) -> list[str]:
        from cmx_gen.app.kinds.package.module_checks import NOT_CHECKED

        return NOT_CHECKED


__all__ = ["CMakePackage", "ZephyrModule"]
