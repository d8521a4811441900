"""A model package in a team's own firmware (issue 56): `user_firmware/` is a bare-metal project as a
user writes one (its main.c, start-up code, linker scripts, toolchain file; nothing from cmx-gen). It
adds the package with add_subdirectory + target_link_libraries and places the model's pools with the
package's linker snippet; built with CMake and run on QEMU, it checks every model through cmx.h
(cmx_self_test: bit-exact against the host). A retrained model regenerates into the same build
unchanged; two models share one package; flags of another core stop the configure step in one line.

Needs the firmware SDK (EXECUTORCH_ROOT, CMSIS_NN_PATH; see `cmx-gen sdk`) and qemu-system-arm.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path

import pytest
from conftest import FIRMWARE, ROOT, cpu_flags
from toy_models.weighted import weighted_model

from cmx_gen.app import project as project_mod
from cmx_gen.app.project import ModelEntry
from cmx_gen.device import sdk
from cmx_gen.fit.boards import load_board
from cmx_gen.pipeline.generate import generate

pytestmark = FIRMWARE

USER = Path(__file__).parent / "user_firmware"
DIGITS = str(ROOT / "samples" / "digits" / "model.py:DigitsCNN")
LINKER = {"mps2-an386": "m4", "mps3-an547": "m55"}
ARENA_REGION = {"mps2-an386": 0x21000000, "mps3-an547": 0x11000000}  # where user_firmware/*.ld put the pools


def _package(out: Path, board: str, models: dict[str, str]) -> Path:
    project = project_mod.Project(
        models=[ModelEntry(source, name) for name, source in models.items()],
        board=board,
        rtos="cmake-package",
        output=str(out),
    )
    generate(project, out)
    return out


def _configure(
    package: Path, board: str, build: Path, flags: str | None = None, find_package: bool = False
) -> subprocess.CompletedProcess:
    """The user's project configured with its toolchain file and `flags` (the board's by default)."""
    found = sdk.find()
    assert found.ok, found.problems
    flags = flags or " ".join(f for f in cpu_flags(board) if f != "-mthumb")
    return subprocess.run(
        [
            "cmake", "-G", "Ninja", "-S", str(USER), "-B", str(build),
            f"-DCMAKE_TOOLCHAIN_FILE={USER / 'toolchain.cmake'}", f"-DCPU_FLAGS={flags}",
            f"-DBOARD={LINKER[board]}", f"-DUSE_FIND_PACKAGE={'ON' if find_package else 'OFF'}",
            f"-DCMX_PACKAGE={package}", *found.cmake_defines(),
        ],
        capture_output=True,
        text=True,
    )  # fmt: skip


def _build_and_run(
    package: Path, board: str, build: Path, configure: bool = True, find_package: bool = False
) -> list[str]:
    if configure:
        conf = _configure(package, board, build, find_package=find_package)
        assert conf.returncode == 0, conf.stdout[-3000:] + conf.stderr[-3000:]
    done = subprocess.run(["nice", "cmake", "--build", str(build), "-j", "2"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    elf = build / "sensor_firmware.elf"
    qemu = load_board(board).qemu
    assert qemu is not None
    run = subprocess.run(
        ["qemu-system-arm", "-M", qemu.machine, "-cpu", qemu.cpu, "-nographic", "-monitor", "none", "-serial", "none",
         "-semihosting-config", "enable=on,target=native", "-kernel", str(elf)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    # semihosting writes to QEMU's stderr when its console (-serial) is off
    lines = [line for line in (run.stdout + run.stderr).splitlines() if line.startswith("sensor-firmware:")]
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    symbols = subprocess.run(["arm-none-eabi-nm", str(elf)], capture_output=True, text=True, check=True).stdout
    start = int(re.search(r"^([0-9a-f]+) \w __cmx_arena_start$", symbols, re.M).group(1), 16)
    end = int(re.search(r"^([0-9a-f]+) \w __cmx_arena_end$", symbols, re.M).group(1), 16)
    # the pools are where the user's linker script put them, as many bytes as the package said
    arena = int(re.search(r"set\(CMX_MODEL_ARENA_BYTES (\d+)", (package / "CMakeLists.txt").read_text()).group(1))
    assert start == ARENA_REGION[board] and arena <= end - start <= arena + 64, (hex(start), end - start, arena)
    return lines


@pytest.mark.parametrize("board", ["mps3-an547", "mps2-an386"])
def test_a_users_firmware_adds_the_package_and_runs_it_bit_exact(tmp_path, board):
    package = _package(tmp_path / "cmx_model", board, {"digits": DIGITS})
    assert (
        not (package / "linker.ld").exists()
        and not list(package.rglob("startup*"))
        and not list(package.rglob("main.c"))
    )
    assert _build_and_run(package, board, tmp_path / "build") == ["sensor-firmware: digits PASS err_milli_lsb=0"]


def test_a_retrained_model_regenerates_into_the_same_build(tmp_path):
    board = "mps2-an386"
    source = weighted_model(tmp_path / "net", seed=1)
    package = _package(tmp_path / "cmx_model", board, {"net": source})
    build = tmp_path / "build"
    assert _build_and_run(package, board, build) == ["sensor-firmware: net PASS err_milli_lsb=0"]
    before = hashlib.sha256((package / "model" / "model.pte").read_bytes()).hexdigest()
    user = {p: p.read_bytes() for p in USER.rglob("*") if p.is_file()}
    weighted_model(tmp_path / "net", seed=2)  # retrained
    generate(project_mod.load(package), package)
    assert hashlib.sha256((package / "model" / "model.pte").read_bytes()).hexdigest() != before
    # the same build folder, nothing of the user's touched or configured again
    assert _build_and_run(package, board, build, configure=False) == ["sensor-firmware: net PASS err_milli_lsb=0"]
    assert user == {p: p.read_bytes() for p in USER.rglob("*") if p.is_file()}


@pytest.mark.parametrize("board", ["mps3-an547", "mps2-an386"])
def test_two_models_in_one_package(tmp_path, board):
    """... found with find_package(cmx_model) this time."""
    models = {"digits": DIGITS, "net": weighted_model(tmp_path / "net", seed=1)}
    package = _package(tmp_path / "cmx_model", board, models)
    assert _build_and_run(package, board, tmp_path / "build", find_package=True) == [
        "sensor-firmware: digits PASS err_milli_lsb=0",
        "sensor-firmware: net PASS err_milli_lsb=0",
    ]


@pytest.mark.parametrize(
    "board, flags, made_for, given",
    [
        (
            "mps3-an547",
            "-mcpu=cortex-m4 -mfpu=fpv4-sp-d16 -mfloat-abi=hard",
            "cortex-m55 (armv8.1-m.main, MVE kernels, with FPU)",
            "armv7e-m, DSP, with FPU",
        ),
        (
            "mps2-an386",
            "-mcpu=cortex-m4 -mfloat-abi=soft",
            "cortex-m4 (armv7e-m, DSP kernels, with FPU)",
            "armv7e-m, DSP, without FPU",
        ),
        (
            "mps2-an386",
            "-mcpu=cortex-m55 -mfloat-abi=hard",
            "cortex-m4 (armv7e-m, DSP kernels, with FPU)",
            "MVE, with FPU",
        ),
    ],
    ids=["core", "fpu", "m55-flags-m4-package"],
)
def test_flags_of_another_core_or_fpu_stop_the_configure_step_in_one_line(tmp_path, board, flags, made_for, given):
    package = _package(tmp_path / "cmx_model", board, {"digits": DIGITS})
    conf = _configure(package, board, tmp_path / "build", flags=flags)
    assert conf.returncode != 0  # CMake's own status for a configure error (1: CMake cannot choose another)
    errors = [line for line in re.sub(r"\n  ", " ", conf.stderr).splitlines() if "cmx-gen:" in line]
    assert len(errors) == 1, conf.stderr
    assert f"made for {made_for}" in errors[0] and "give" in errors[0] and given in errors[0], errors[0]
    assert "compile with -mcpu=" in errors[0], errors[0]
