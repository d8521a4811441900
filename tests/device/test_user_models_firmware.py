"""Models as users write them (issue 53), built and run on QEMU: each PASSes bit-exact by default.

Needs the firmware SDK (EXECUTORCH_ROOT, CMSIS_NN_PATH) and qemu-system-arm; skipped, saying why,
without them."""

from __future__ import annotations

import pytest
from conftest import FIRMWARE, ROOT

from cmx_gen.app import project as project_mod
from cmx_gen.app.kinds.baremetal import build
from cmx_gen.device.runners import QemuRunner
from cmx_gen.fit.boards import load_board
from cmx_gen.pipeline.generate import generate

pytestmark = FIRMWARE

USER = ROOT / "tests" / "toy_models" / "user_models.py"
ATTENTION = ROOT / "tests" / "toy_models" / "attention_models.py"
FUZZED = ROOT / "tests" / "toy_models" / "fuzzed_models.py"  # bench/fuzz_models.py's shrunk failures


@pytest.mark.parametrize("board", ["mps3-an547", "mps2-an386"])
@pytest.mark.parametrize(
    "model",
    [
        f"{USER}:TinyUNet",
        f"{USER}:TinyViT",
        f"{USER}:TinyMlpMixer",
        f"{USER}:SqueezeExciteBlock",
        f"{USER}:ConvTransposeUNet",
        f"{USER}:AttentionDenoiser",
        f"{FUZZED}:TokensTimesConv",
        f"{FUZZED}:DilatedDepthwise",
        f"{FUZZED}:PoolHardswish",
        f"{FUZZED}:StandaloneBatchNorm",
        f"{FUZZED}:UpsampleThenPool",
        f"{FUZZED}:PermutedImage",
        f"{FUZZED}:ActivationsBeforeBatchNorm",
        f"{FUZZED}:TwoBatchNorms",
        f"{FUZZED}:OneChannelRelu6",
        f"{FUZZED}:ConvHardswish",
        f"{FUZZED}:LeakyReluTokens",
        f"{FUZZED}:OneChannelSkipConcat",
        f"{FUZZED}:HardsigmoidSkipConcat",
        f"{USER}:BiGruKeywordSpotter",
        f"{USER}:BiLstmTagger",
        f"{USER}:SpectrogramNormKws",
        f"{USER}:PooledSpectrogramKws",
        f"{USER}:SamePaddingVibration",
        f"{USER}:UpsampleSkip1d",
        f"{USER}:SamePadding2d",
        f"{USER}:ViewFlattenCnn",
        f"{USER}:AdaptiveGridPool",
        f"{USER}:ZeroPaddedConvs",
        f"{ATTENTION}:CausalSdpa",
        f"{ATTENTION}:MaskedSdpa",
        f"{ATTENTION}:EncoderPostNorm",
        f"{ATTENTION}:EncoderPreNorm",
        f"{ATTENTION}:MhaCausalMask",
        f"{ATTENTION}:CausalDecoderLayer",
    ],
    ids=lambda spec: spec.rpartition(":")[2],
)
def test_a_user_written_model_passes_on_the_target(tmp_path, board, model):
    """TinyUNet: nn.Upsample and a torch.cat skip of channels-last images (was FAIL max_abs_err=12 at
    aten::cat.out); TinyViT: a patch embedding flattened (was FAIL at the reshape before
    cortex_m::transpose), a class token, a position embedding added, nn.MultiheadAttention;
    AttentionDenoiser: trained, a ReLU skip sharing the concat's quantization (was refused: its conv
    stayed float) and tokens reshaped back to an image before a conv (was FAIL, 235 LSB);
    F.scaled_dot_product_attention causal and with a boolean mask, nn.MultiheadAttention with a float
    causal mask, nn.TransformerEncoderLayer post- and pre-norm and causal (the masks folded, every
    attention core on int8); BiGruKeywordSpotter: a
    trained bidirectional nn.GRU, both directions on cmx_gru_s8 (was float: 61.6 M instructions on
    the M4); BiLstmTagger: two bidirectional nn.LSTM layers, time-major, the backward direction's steps
    reversed around arm_lstm_unidirectional_s8; ConvTransposeUNet: nn.ConvTranspose2d up (upstream's
    transposed convolution between two delegates), BatchNorm folded, torch.cat of the skips."""
    app = tmp_path / "app"
    generate(project_mod.Project.single(model=model, board=board, output=str(app)), app)
    built = build.build(app, jobs=2)
    result = QemuRunner(load_board(board), timeout=300).run(built.elf)
    assert result.passed and result.fields["max_abs_err"] == "0", result.output[-1500:]
    print(f"\n{model.rpartition(':')[2]} {board}: {result.line}")
