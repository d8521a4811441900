"""What the Zephyr tests share: rendering a Zephyr app the way `cmx-gen create --rtos zephyr` does
(cmx_gen.app.render.render_app with a lowered program, a board and its placement), the session
fixtures of the lowered digits sample and its apps, the offline checks' verdict, and the CMake
configure + compile against the Zephyr stand-in."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cmx_gen.app import project, render
from cmx_gen.app.kinds.zephyr.checks import twister_schema_path, write_autoconf
from cmx_gen.app.kinds.zephyr.context import ZEPHYR_DATA
from cmx_gen.cli import main as cli
from cmx_gen.common.paths import ROOT
from cmx_gen.device import sdk
from cmx_gen.fit import boards, memory
from cmx_gen.program import artifacts


def render_zephyr_app(lowered: Path, board_id: str, out_dir: Path, app_name: str = "digits") -> Path:
    art = artifacts.read(lowered)
    board = boards.load_board(board_id)
    placement = memory.plan(art.report, board)
    proj = project.Project.single(model=str(lowered / "model.pte"), board=board_id, rtos="zephyr", name=app_name)
    app = out_dir / app_name
    render.render_app(proj, [art], board, placement, app)
    return app


def assert_all_checks_pass(results, label: str) -> None:
    """Every offline check passes. Twister's schema comes from ../shared/zephyr (beside the repo in CI),
    $ZEPHYR_BASE or $CMX_TWISTER_SCHEMA; without it that one part cannot run, and the test says so
    by skipping after the other checks passed, instead of passing."""
    schema = twister_schema_path()
    for r in results:
        if r.name == "twister" and schema is None:
            assert r.status == "skipped", f"{label} twister: {r.status} {[str(f) for f in r.findings]}"
            continue
        assert r.status == "pass", f"{label} {r.name}: {r.status} {r.note} {[str(f) for f in r.findings]}"
    if schema is None:
        pytest.skip(
            "Twister's schema not found (../shared/zephyr, $ZEPHYR_BASE or $CMX_TWISTER_SCHEMA): "
            "the other offline checks passed, the Twister schema check did not run"
        )


DIGITS = ROOT / "samples" / "digits" / "model.py"

BOARDS = ["corstone300-fvp", "mps2-an521", "nrf5340dk-cpuapp", "nucleo-h743zi", "nucleo-l4r5zi"]


def lowering_core(board_id: str) -> str:
    """The core to lower for so the program's ISA is the board's (Core.lower_target)."""
    return boards.load_board(board_id).core.lower_target


@pytest.fixture(scope="session")
def digits_lowered(tmp_path_factory):
    cache: dict[str, Path] = {}

    def get(core: str) -> Path:
        if core not in cache:
            out = tmp_path_factory.mktemp(f"digits-{core}")
            assert cli.main(["lower", f"{DIGITS}:DigitsCNN", "--target", core, "-o", str(out)]) == 0
            cache[core] = out
        return cache[core]

    return get


@pytest.fixture(scope="session")
def zephyr_app(digits_lowered, tmp_path_factory):
    cache: dict[str, Path] = {}

    def get(board_id: str) -> Path:
        if board_id not in cache:
            out = tmp_path_factory.mktemp(f"zephyr-{board_id}")
            cache[board_id] = render_zephyr_app(digits_lowered(lowering_core(board_id)), board_id, out)
        return cache[board_id]

    return get


def _sdk_defines() -> list[str]:
    """-D options for the SDK west would check out (EXECUTORCH_ROOT, CMSIS_NN_PATH, flatc)."""
    if not os.environ.get("EXECUTORCH_ROOT"):
        pytest.skip("EXECUTORCH_ROOT is not set (ExecuTorch and CMSIS-NN sources, see `cmx-gen sdk`)")
    if not shutil.which("cmake") or not shutil.which("arm-none-eabi-gcc") or not shutil.which("ninja"):
        pytest.skip("cmake, ninja or arm-none-eabi-gcc is not installed")
    found = sdk.find()
    assert found.ok, found.problems
    return found.cmake_defines()


def stub_configure(
    app: Path, board_id: str, tmp_path: Path, defines: list[str], modules: list[Path] = ()
) -> tuple[subprocess.CompletedProcess, Path]:
    """Configure a Zephyr application against the stand-in for one board (its Kconfig from
    prj.conf, the board's .conf and the modules' Kconfig, as Zephyr reads them): the configure run
    and the build folder. `modules`: the module folders west.yml lists (CMX_STUB_MODULES)."""
    board = boards.load_board(board_id)
    autoconf = tmp_path / "autoconf.h"
    result = write_autoconf(app, board.zephyr.file_name, autoconf)
    assert result.status == "pass", [str(f) for f in result.findings]
    flags = [f for f in board.core.gcc_flags if not f.startswith("-mcpu=")]
    build = tmp_path / "build"
    cmd = [
        "cmake",
        "-G",
        "Ninja",
        "-S",
        str(app),
        "-B",
        str(build),
        f"-DZephyr_DIR={ZEPHYR_DATA / 'cmake_stub'}",
        f"-DCMX_STUB_CPU={board.core.name if board.core.name != 'cortex-m85' else 'cortex-m55'}",
        f"-DCMX_STUB_FLAGS={';'.join(flags)}",
        f"-DCMX_STUB_AUTOCONF={autoconf}",
        f"-DCMX_STUB_MODULES={';'.join(str(m) for m in modules)}",
        *defines,
    ]
    return subprocess.run(cmd, capture_output=True, text=True), build


def configure_and_compile(
    app: Path, board_id: str, tmp_path: Path, defines: list[str]
) -> tuple[subprocess.CompletedProcess, set[str]]:
    """Configure the Zephyr app against the stand-in and compile `app` and `cmx_kernels`: the
    configure run and the names of the objects compiled (`cmx_api.cpp`, `model_pte.S`, ...)."""
    conf, build = stub_configure(app, board_id, tmp_path, defines)
    assert conf.returncode == 0, conf.stdout[-3000:] + conf.stderr[-3000:]
    assert "not compiled (needs Zephyr headers)" in conf.stdout
    assert "linker snippets: ;RODATA:linker/cmx_model_pte.ld" in conf.stdout

    done = subprocess.run(
        ["nice", "cmake", "--build", str(build), "-j", "2", "--target", "app", "cmx_kernels"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    return conf, {p.relative_to(build).as_posix() for p in build.rglob("*.obj")}


def object_names(objects: set[str]) -> set[str]:
    """`cmx_api.cpp` for `CMakeFiles/app.dir/cmx/api/cmx_api.cpp.obj`."""
    return {Path(p).name.split(".")[0] + "." + Path(p).name.split(".")[1] for p in objects}
