"""A transposed convolution of stride = kernel as cmx-gen's backend runs it: a 1x1 convolution to kh x kw
x C_out channels and a depth-to-space copy (rewrites/transpose_conv.py). Checked against upstream's own
cortex_m::quantized_transpose_conv2d (its reference of CMSIS-NN's arm_transpose_conv_s8) on random shapes,
then a U-Net as users write it lowered into one delegate whose plan gives the lowering's reference."""

from __future__ import annotations

import pytest
import torch
from conftest import ROOT, plan_matches_the_reference, read_report, run_cli

from cmx_gen.program import pte

USER = ROOT / "tests" / "toy_models" / "user_models.py"


@pytest.fixture(scope="module")
def ops() -> object:
    import executorch.backends.cortex_m.passes.cortex_m_pass_manager  # noqa: F401  (registers cortex_m ops)

    import cmx_gen.lower.rewrites.transpose_conv  # noqa: F401  (registers cmx::quantized_depth_to_space)

    return torch.ops


def test_a_1x1_convolution_and_depth_to_space_give_upstreams_transposed_convolution(ops):
    """200 random layers (kernels 1 to 4 a side, 1 to 9 channels each way, any multipliers and
    right shifts, a ReLU range on some): every output byte equal. The same weights, bias,
    multiplier and shift per tap (i, j) of output channel o at channel (i kw + j) C_out + o."""
    g = torch.Generator().manual_seed(0)

    def r(lo: int, hi: int) -> int:
        return int(torch.randint(lo, hi + 1, (1,), generator=g))

    for _ in range(200):
        kh, kw, cin, cout, h, w = r(1, 4), r(1, 4), r(1, 9), r(1, 9), r(1, 7), r(1, 7)
        x = torch.randint(-128, 128, (1, cin, h, w), dtype=torch.int8, generator=g)
        x = x.contiguous(memory_format=torch.channels_last)
        weight = torch.randint(-127, 128, (cout, kh, kw, cin), dtype=torch.int8, generator=g)
        bias = torch.randint(-20000, 20000, (cout,), dtype=torch.int32, generator=g)
        mult = torch.randint(1 << 30, (1 << 31) - 1, (cout,), dtype=torch.int32, generator=g)
        shift = torch.randint(-14, 1, (cout,), dtype=torch.int32, generator=g)
        in_off, out_off, lo = r(-127, 128), r(-128, 127), -128 if r(0, 1) else r(-128, 0)
        scratch = torch.empty(0, dtype=torch.int8)
        want = ops.cortex_m.quantized_transpose_conv2d(
            x, weight, bias, [kh, kw], [0, 0], [0, 0], [1, 1], in_off, out_off, mult, shift, lo, 127, scratch, scratch
        )
        taps = kh * kw
        as_1x1 = weight.permute(1, 2, 0, 3).reshape(taps * cout, 1, 1, cin).contiguous()
        y = ops.cortex_m.quantized_conv2d(
            x, as_1x1, bias.repeat(taps), [1, 1], [0, 0], [1, 1], in_off, out_off,
            mult.repeat(taps), shift.repeat(taps), lo, 127, scratch,
        )  # fmt: skip
        got = ops.cmx.quantized_depth_to_space(y, [kh, kw])
        assert torch.equal(want, got), (kh, kw, cin, cout, h, w)


def test_a_unet_with_transposed_convolutions_is_one_delegate(tmp_path):
    """The U-Net of the paper (Conv-BatchNorm-ReLU, MaxPool, nn.ConvTranspose2d 2 x 2 stride 2, torch.cat
    of the skips): each transposed convolution had ended a delegate (three); now one, no
    cortex_m::quantized_transpose_conv2d left, the depth-to-space reported as the copies it is (an id of its
    own: it shared the convolution's, and the profile gave both the pair's cycles), and the plan run on the host gives the lowering's reference bit for bit."""
    out = tmp_path / "unet"
    assert run_cli("lower", f"{USER}:ConvTransposeUNet", "--target", "cortex-m4", "-o", out) == 0
    data = (out / "model.pte").read_bytes()
    assert len(pte.delegate_plans(pte.read(data))) == 1
    assert not any("transpose_conv" in op for op in pte.operator_names(data))
    layers = read_report(out)["delegated_layers"]
    up = [(layer["op"], layer["kind"]) for layer in layers if layer["module"] in ("up1", "up2")]
    assert up == [("cortex_m::quantized_conv2d", "conv_row"), ("cmx::quantized_depth_to_space", "copy_region")] * 2
    ids = [layer["debug"] for layer in layers]
    assert len(set(ids)) == len(ids), ids  # the profile and the trace key each layer by its id
    plan_matches_the_reference(out)


def test_a_transposed_convolution_with_overlapping_windows_stays_upstreams(tmp_path):
    """A 3 x 3 transposed convolution of stride 2 sums overlapping windows: not a 1x1 convolution, so it stays
    upstream's kernel (outside the delegate), as before."""
    model = tmp_path / "model.py"
    model.write_text(
        "import torch\n"
        "class Up(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.conv = torch.nn.Conv2d(1, 8, 3, padding=1)\n"
        "        self.up = torch.nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1)\n"
        "    def forward(self, x):\n"
        "        return self.up(torch.relu(self.conv(x)))\n"
        "def example_inputs():\n"
        "    return (torch.randn(1, 1, 8, 8),)\n"
    )
    out = tmp_path / "out"
    assert run_cli("lower", f"{model}:Up", "--target", "cortex-m4", "--random-calibration", "-o", out) == 0
    assert any("transpose_conv2d" in op for op in pte.operator_names((out / "model.pte").read_bytes()))
