"""4-bit weights on the target (`weights = "int4"`, issue 52): a model whose layers run every s4 kind
(CMSIS-NN's arm_convolve_wrapper_s4, arm_depthwise_conv_wrapper_s4, arm_fully_connected_s4), the packings
that cross a byte among them, and per-channel fully connected weights (arm_fully_connected_per_channel_s8),
PASS bit-exact against the host reference on QEMU.

Needs the firmware SDK (EXECUTORCH_ROOT, CMSIS_NN_PATH) and qemu-system-arm; skipped, saying why,
without them."""

from __future__ import annotations

import collections
import json

import pytest
from conftest import FIRMWARE, ROOT

from cmx_gen.app import project as project_mod
from cmx_gen.app.kinds.baremetal import build
from cmx_gen.device.runners import QemuRunner
from cmx_gen.fit.boards import load_board
from cmx_gen.pipeline.generate import generate

pytestmark = FIRMWARE

NET = f"{ROOT}/tests/toy_models/int4_models.py:Int4Net"


@pytest.mark.parametrize("board", ["mps2-an386", "mps3-an547"])
def test_int4_weights_pass_bit_exact(tmp_path, board):
    app = tmp_path / "app"
    project = project_mod.Project.single(model=NET, board=board, output=str(app), io="int8", weights="int4")
    generate(project, app)
    report = json.loads((app / "model" / "report.json").read_text())
    kinds = collections.Counter(layer["kind"] for layer in report["delegated_layers"])
    depthwise = 0 if board == "mps3-an547" else 2  # Helium's s4 depthwise path: the int8 kind there
    fc = "fully_connected_s4" if board == "mps2-an386" else "linear_s4"  # cmx-gen's s4 kernel on the DSP cores
    assert kinds["conv_s4"] == 2 and kinds["depthwise_s4"] == depthwise and kinds[fc] == 2, kinds
    result = QemuRunner(load_board(board), timeout=300).run(build.build(app, jobs=2).elf)
    assert result.passed and result.fields["max_abs_err"] == "0", result.output[-1500:]
    print(f"\n{board}, int4 weights: {result.line}")


AUTOENCODER = f"{ROOT}/samples/autoencoder/model.py:AutoEncoder"


@pytest.mark.parametrize("board", ["mps2-an386", "mps3-an547"])
def test_per_channel_linear_weights_pass_bit_exact(tmp_path, board):
    """`per_channel_linear = true`: the autoencoder's ten layers on arm_fully_connected_per_channel_s8 (the
    Helium path's kernel sums, the DSP path's biases)."""
    app = tmp_path / "app"
    project = project_mod.Project.single(model=AUTOENCODER, board=board, output=str(app), per_channel_linear=True)
    generate(project, app)
    report = json.loads((app / "model" / "report.json").read_text())
    kinds = collections.Counter(layer["kind"] for layer in report["delegated_layers"])
    assert kinds == {"linear_per_channel": 10}, kinds
    result = QemuRunner(load_board(board), timeout=300).run(build.build(app, jobs=2).elf)
    assert result.passed and result.fields["max_abs_err"] == "0", result.output[-1500:]
    print(f"\n{board}, per-channel linear weights: {result.line}")
