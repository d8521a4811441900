"""cmx-gen's own kernels (kernels/nn/) against the CMSIS-NN functions they replace, byte for byte, on
QEMU (kernels/tests/kernel_suite.c: the named edge cases, then 300 seeded random shapes, strides,
paddings, offsets, activation ranges, multipliers and shifts per kernel). M4 and M33 run the DSP
path the plan chooses them for; M55 holds them to CMSIS-NN's MVE results too. Needs the firmware
SDK (CMSIS_NN_PATH) and qemu-system-arm; skipped, saying why, without them."""

from __future__ import annotations

import os
import re
import subprocess

import pytest
from conftest import FIRMWARE, ROOT, SMALL

from cmx_gen.app import project as project_mod
from cmx_gen.device.runners import QemuRunner
from cmx_gen.fit.boards import load_board
from cmx_gen.pipeline.generate import generate

pytestmark = FIRMWARE
KERNELS = (
    "conv_row",
    "conv_row_2d",
    "depthwise_3x3",
    "depthwise_3x3_planar",
    "depthwise_3x3_grouped",
    "transpose",
    "fully_connected",
    "add",
    "requantize",
    "softmax",
    "avgpool",
    "lut",
    "copy_rows",
    "narrow",
)
HELIUM_KERNELS = ("conv_helium",)  # Helium only: the DSP cores run cmx_conv_row_s8 for these layers
DSP_KERNELS = ("fully_connected_s4",)  # the DSP cores only: Helium runs arm_fully_connected_s4 itself


@pytest.mark.parametrize("board", ["mps2-an386", "mps2-an505", "mps3-an547"])
def test_own_kernels_equal_cmsis_nn_on_the_target(tmp_path, board):
    app = tmp_path / "app"  # any app for the board: the suite takes its toolchain, platform layer and linker script
    generate(
        project_mod.Project.single(model=f"{SMALL}:ConvNet", board=board, output=str(app), random_calibration=True), app
    )
    build = tmp_path / "suite"
    subprocess.run(
        [
            "cmake",
            "-S",
            str(ROOT / "kernels" / "tests"),
            "-B",
            str(build),
            "-G",
            "Ninja",
            f"-DCMX_APP_DIR={app}",
            f"-DCMAKE_TOOLCHAIN_FILE={app / 'cmake' / 'arm-none-eabi.cmake'}",
            f"-DCMSIS_NN_PATH={os.environ['CMSIS_NN_PATH']}",
            "-DCMAKE_BUILD_TYPE=MinSizeRel",
        ],
        check=True,
        capture_output=True,
    )
    subprocess.run(["cmake", "--build", str(build)], check=True, capture_output=True)
    run = QemuRunner(load_board(board), timeout=600)
    done = subprocess.run(run.command(build / "cmx_kernel_suite.elf"), capture_output=True, text=True, timeout=600)
    out = done.stdout + done.stderr  # semihosting writes to QEMU's stderr, the UART to its stdout
    print(f"\n{board}:\n{out}")
    helium = load_board(board).core.isa == "MVE"
    for kernel in KERNELS + (HELIUM_KERNELS if helium else DSP_KERNELS):
        m = re.search(rf"cmx-kernels: {kernel} cases=(\d+) equal=(\d+)", out)
        assert m, out[-2000:]
        assert int(m.group(1)) >= 200 and m.group(1) == m.group(2), out[-2000:]
    assert not any(f"cmx-kernels: {k} " in out for k in (DSP_KERNELS if helium else HELIUM_KERNELS)), out[-2000:]
    assert "cmx-kernels: PASS" in out and done.returncode == 0, out[-2000:]
