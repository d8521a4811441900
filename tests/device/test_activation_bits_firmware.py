"""16-bit activations on the target (`precision = "int16"`, issue 52): a model whose layers run every s16 kind
(CMSIS-NN's arm_convolve_wrapper_s16, arm_depthwise_conv_wrapper_s16, arm_fully_connected_s16) and an int16
flatten between them (element copies), residual blocks and pools, mixed precisions, and LSTMs
(arm_lstm_unidirectional_s16), PASS bit-exact against the host reference on QEMU's M4 and M55.

Needs the firmware SDK (EXECUTORCH_ROOT, CMSIS_NN_PATH) and qemu-system-arm; skipped, saying why,
without them."""

from __future__ import annotations

import collections
import dataclasses
import json

import pytest
from conftest import FIRMWARE, ROOT

from cmx_gen.app import project as project_mod
from cmx_gen.app.kinds.baremetal import build
from cmx_gen.device.runners import QemuRunner
from cmx_gen.fit.boards import load_board
from cmx_gen.pipeline.generate import generate

pytestmark = FIRMWARE

NET = f"{ROOT}/tests/toy_models/int16_models.py:Int16Net"


BOARDS = ["mps2-an386", "mps3-an547"]
RESIDUAL = f"{ROOT}/tests/toy_models/int16_models.py:Int16Residual"


def _made_and_run(tmp_path, board: str, model: str, **options) -> tuple[collections.Counter[str], object]:
    """The app `create` makes of `model` with `options` (its delegated layers' kinds) and its run on QEMU."""
    app = tmp_path / "app"
    generate(project_mod.Project.single(model=model, board=board, output=str(app), **options), app)
    report = json.loads((app / "model" / "report.json").read_text())
    kinds = collections.Counter(layer["kind"] for layer in report["delegated_layers"])
    return kinds, QemuRunner(load_board(board), timeout=300).run(build.build(app, jobs=2).elf)


@pytest.mark.parametrize("board", BOARDS)
def test_int16_activations_pass_bit_exact(tmp_path, board):
    kinds, result = _made_and_run(tmp_path, board, NET, precision="int16")
    assert kinds["conv_s16"] == 2 and kinds["depthwise_s16"] == 2 and kinds["linear_s16"] == 2, kinds
    assert result.passed and result.fields["max_abs_err"] == "0", result.output[-1500:]
    print(f"\n{board}, int16 activations: {result.line}")


@pytest.mark.parametrize("board", BOARDS)
def test_a_residual_block_and_pools_pass_bit_exact(tmp_path, board):
    """Int16Residual: arm_elementwise_add_s16, arm_max_pool_s16, arm_avgpool_s16 among the convolutions."""
    kinds, result = _made_and_run(tmp_path, board, RESIDUAL, precision="int16")
    assert kinds["add_s16"] == kinds["mul_s16"] == kinds["max_pool_s16"] == kinds["avg_pool_s16"] == 1, kinds
    assert result.passed and result.fields["max_abs_err"] == "0", result.output[-1500:]


@pytest.mark.parametrize("board", BOARDS)
def test_an_int8_layer_into_an_int16_one_passes_bit_exact(tmp_path, board):
    """The head alone at int16: the int8 layer before it hands its output on through cmx_lut_s8_s16."""
    kinds, result = _made_and_run(tmp_path, board, NET, precision_for=("head=int16",))
    assert kinds["lut_s16"] == 1 and kinds["linear_s16"] == 1, kinds
    assert result.passed and result.fields["max_abs_err"] == "0", result.output[-1500:]


@pytest.mark.parametrize("board", BOARDS)
def test_an_int16_layer_into_an_int8_one_passes_bit_exact(tmp_path, board):
    """Every layer int16 but the head: the int16 output into it is requantized inside the delegate by
    cmx_narrow_s16_s8 (it was a float dequantize and quantize outside it, a float tensor between)."""
    kinds, result = _made_and_run(tmp_path, board, NET, precision="int16", precision_for=("head=int8",))
    assert kinds["linear_s16"] == 1 and kinds["conv_s16"] == 2 and kinds["narrow_s16"] == 1, kinds
    assert result.passed and result.fields["max_abs_err"] == "0", result.output[-1500:]


@pytest.mark.parametrize("board", BOARDS)
def test_the_denoiser_at_auto_passes_bit_exact_in_one_delegate(tmp_path, board):
    """The denoiser sample as its cmx.toml asks (`precision = "auto"`): its add and first convolution int16,
    the body between int8, entered by cmx_narrow_s16_s8 and left by cmx_lut_s8_s16, all in one delegate."""
    app = tmp_path / "app"
    sample = project_mod.load(ROOT / "samples" / "denoiser" / project_mod.FILE_NAME)
    generate(dataclasses.replace(sample, board=board, output=str(app)), app)
    report = json.loads((app / "model" / "report.json").read_text())
    kinds = collections.Counter(layer["kind"] for layer in report["delegated_layers"])
    assert kinds["narrow_s16"] == kinds["lut_s16"] == kinds["conv_s16"] == kinds["add_s16"] == 1, kinds
    assert len(report["schedules"]) == 1, report["schedules"]
    result = QemuRunner(load_board(board), timeout=300).run(build.build(app, jobs=2).elf)
    assert result.passed and result.fields["max_abs_err"] == "0", result.output[-1500:]
    print(f"\n{board}, the denoiser at precision auto: {result.line}")


TAGGER = f"{ROOT}/tests/toy_models/user_models.py:BiLstmTagger"
KWS = f"{ROOT}/tests/toy_models/small.py:LstmKws"


@pytest.mark.parametrize("board", BOARDS)
def test_a_bidirectional_lstm_at_int16_passes_bit_exact(tmp_path, board):
    """BiLstmTagger: arm_lstm_unidirectional_s16 forwards and on the steps reversed, two layers, the directions
    joined by int16 copies, an s16 linear layer tagging every step."""
    kinds, result = _made_and_run(tmp_path, board, TAGGER, precision="int16", random_calibration=True)
    assert kinds["lstm_s16"] == 4 and kinds["linear_s16"] == 1, kinds
    assert result.passed and result.fields["max_abs_err"] == "0", result.output[-1500:]
    print(f"\n{board}, BiLstmTagger int16: {result.line}")


@pytest.mark.parametrize("board", BOARDS)
def test_an_int16_lstm_into_an_int8_head_passes_bit_exact(tmp_path, board):
    """LstmKws with its LSTM alone at int16: its last step (an int16 copy) requantized into the int8 head."""
    kinds, result = _made_and_run(
        tmp_path, board, KWS, input_shape="1,49,10", random_calibration=True, precision_for=("lstm=int16",)
    )
    assert kinds["lstm_s16"] == 1 and kinds["linear_s16"] == 0, kinds
    assert result.passed and result.fields["max_abs_err"] == "0", result.output[-1500:]


ATTENTION = f"{ROOT}/tests/toy_models/attention_models.py:EncoderPostNorm"


@pytest.mark.parametrize("board", BOARDS)
def test_a_transformer_encoder_layer_at_int16_passes_bit_exact(tmp_path, board):
    """nn.TransformerEncoderLayer: its attention's two batch matmuls on arm_batch_matmul_s16 (one b transposed
    by cmx_transpose_s16), the heads split and merged by int16 copies, int16 residual adds."""
    kinds, result = _made_and_run(tmp_path, board, ATTENTION, precision="int16")
    assert kinds["bmm_s16"] == 2 and kinds["add_s16"] == 2, kinds
    assert result.passed and result.fields["max_abs_err"] == "0", result.output[-1500:]
    print(f"\n{board}, EncoderPostNorm int16: {result.line}")


GATE = f"{ROOT}/tests/toy_models/int16_models.py:Int16Gate"


@pytest.mark.parametrize("board", BOARDS)
def test_sigmoid_and_tanh_at_int16_pass_bit_exact(tmp_path, board):
    """Int16Gate: arm_nn_activation_s16's sigmoid and tanh after linear layers of power-of-two output scales."""
    kinds, result = _made_and_run(tmp_path, board, GATE, precision="int16")
    assert kinds["activation_s16"] == 2 and kinds["mul_s16"] == 1, kinds
    assert result.passed and result.fields["max_abs_err"] == "0", result.output[-1500:]
