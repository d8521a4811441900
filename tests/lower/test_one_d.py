"""1-D models on CMSIS-NN (issue 37): Conv1d / MaxPool1d / AvgPool1d / BatchNorm1d lifted to their
2-D forms over [N, C, 1, L] before quantization (lower/rewrites/one_d.py). Real export, lowering and host
reference; the on-target PASS is tests/device/test_one_d_firmware.py (SDK)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import SMALL, kernels, read_report

from cmx_gen.lower.rewrites import one_d

ONE_D = [("Conv1dNet", "1,8,64"), ("Shapes1d", "1,4,101"), ("AdaptivePool1dNet", "1,3,96")]


def _small(name: str) -> torch.nn.Module:
    import importlib.util

    spec = importlib.util.spec_from_file_location("small_models", SMALL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)().eval()


@pytest.mark.parametrize("name, shape", ONE_D)
def test_the_lift_computes_the_same_function(name, shape):
    """Exact in exact arithmetic; in float32 a 2-D convolution of height 1 sums the same products."""
    model = _small(name)
    x = torch.rand([int(s) for s in shape.split(",")], generator=torch.Generator().manual_seed(1)) * 2 - 1
    graph = torch.export.export(model, (x,)).module(check_guards=False)
    expected = graph(x)
    lifted = one_d.lift(graph)
    graph.graph.lint()
    graph.recompile()
    ops = [str(n.target) for n in graph.graph.nodes if n.op == "call_function"]
    assert not any("conv1d" in op or "pool1d" in op for op in ops), ops
    assert {layer.op for layer in lifted} >= {"aten::conv1d"}
    torch.testing.assert_close(graph(x), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name, shape", ONE_D)
def test_every_1d_layer_runs_on_cmsis_nn_with_no_copy_between_them(lowered_dir, name, shape):
    report = read_report(lowered_dir(name, "--input-shape", shape, "--random-calibration"))
    ran = kernels(report)
    assert not [op for op in report["operators"] if op["class"] == "fallback"], report["operators"]
    assert not any("convolution" in op or "pool1d" in op for op in ran), ran
    # one layout copy where the 1-D run starts (NCL -> NLC) and one where the flatten reads it, but
    # after a pool to one column ([N, C, 1, 1] lies the same in either order: no copy back)
    layout = [op for op in ran if "clone_dim_order" in op or op == "cortex_m::transpose"]
    assert len(layout) == (1 if name == "AdaptivePool1dNet" else 2), ran
    convs = [op for op in ran if "conv2d" in op]
    model = _small(name)
    assert len(convs) == sum(isinstance(m, torch.nn.Conv1d) for m in model.modules())
    rewrites = [r for r in report["rewrites"] if r["op"] == "aten::conv1d"]
    assert len(rewrites) == len(convs) and all("height 1" in r["what"] and r["source"] for r in rewrites)


def test_batchnorm1d_is_folded_and_the_tcn_block_stays_int8(lowered_dir):
    report = read_report(lowered_dir("Shapes1d", "--input-shape", "1,4,101", "--random-calibration"))
    ran = kernels(report)
    assert not any("batch_norm" in op for op in ran), ran
    assert "cortex_m::quantized_add" in ran and "cortex_m::quantized_depthwise_conv2d" in ran
    assert "cortex_m::quantized_max_pool2d" in ran and "cortex_m::quantized_avg_pool2d" in ran


def test_a_1xn_convolution_cmsis_nn_gets_wrong_calls_arm_convolve_s8():
    """arm_convolve_1_x_n_s8 (MVE) lays out PyTorch's padding only as SAME's left/right split:
    it refuses some strided cases and reads one column past the input in others."""
    from cmx_gen.lower.delegate.kernel_choice import _one_by_n_mve_reads

    def exact(width, kernel, stride, pad, out):
        return [
            [p * stride - pad + k if 0 <= p * stride - pad + k < width else None for k in range(kernel)]
            for p in range(out)
        ]

    assert _one_by_n_mve_reads(101, 9, 2, 4, 51) != exact(101, 9, 2, 4, 51)  # the right edge: "?"
    assert _one_by_n_mve_reads(96, 3, 2, 1, 48) == [[]]  # refused: ARM_CMSIS_NN_FAILURE
    for case in [(51, 3, 2, 1, 26), (51, 9, 1, 4, 51), (64, 5, 1, 0, 60), (49, 10, 1, 4, 48)]:
        assert _one_by_n_mve_reads(*case) == exact(*case), case


def test_the_backend_keeps_off_the_1xn_path_where_it_is_wrong(lowered_dir):
    """The 1-D convolutions of dilation 1 (k9 stride 2 padding 4 over 101 columns among them, which
    CMSIS-NN's MVE 1xN path misreads) run cmx_conv_helium_s8, which reads any padding; the dilated
    ones CMSIS-NN's wrapper, never its 1xN path (it takes dilation 1 only)."""
    from cmx_gen.program import pte

    # fast: the fastest kernels on every layer (balanced may move a cheap one to cmx_conv_row_s8 for RAM)
    out = lowered_dir("Shapes1d", "--input-shape", "1,4,101", "--random-calibration", "--memory", "fast")
    kinds = pte.backend_layers((out / "model.pte").read_bytes())
    assert kinds.count("conv_helium") == 3 and kinds.count("conv") == 4 and "conv_general" not in kinds, kinds


@pytest.mark.parametrize("name, shape", ONE_D)
def test_the_plan_run_on_the_host_is_the_lowering_reference(lowered_dir, name, shape):
    from cmx_gen.program import plan_reference

    out = lowered_dir(name, "--input-shape", shape, "--random-calibration")
    reference = np.load(out / "reference.npz")
    got = plan_reference.reference((out / "model.pte").read_bytes(), [reference["input_0"]], "MVE")
    assert np.array_equal(got[0], reference["output_0"])


def test_a_conv1d_called_twice_is_lifted_at_both_calls(lowered_dir):
    """SharedHead1d's head runs twice: the first lift made its weight 4-D, and the second call, asked after it
    whether only Conv1d layers read that weight, was left 1-D on the 4-D weight (internal error: "Expected
    4-dimensional input"). Both calls are 2-D convolutions and the model one delegate."""
    report = read_report(lowered_dir("SharedHead1d", "--input-shape", "1,2,64", "--random-calibration"))
    rewrites = [r for r in report["rewrites"] if r["op"] == "aten::conv1d"]
    assert [r["module"] for r in rewrites] == ["inp", "head", "head"], rewrites
    assert not [op for op in report["operators"] if op["class"] == "fallback"], report["operators"]
    assert len(report["schedules"]) == 1


def test_raw_audio_with_one_channel_needs_no_layout_copy(lowered_dir):
    """[N, 1, L] laid out channel-innermost is [N, 1, 1, L] channels-last as it is: no copy (a copy of
    a 1-channel channels-last tensor would have a dim order the portable kernels refuse)."""
    report = read_report(lowered_dir("Wav2LetterSmall", "--input-shape", "1,1,700", "--random-calibration"))
    ran = kernels(report)
    assert not any("clone_dim_order" in op for op in ran[:3]), ran
    convs = [op for op in ran if "conv2d" in op]
    assert len(convs) == 12, ran  # every Conv1d of the layer list


def test_wav2letter_runs_every_layer_on_cmsis_nn_but_the_float_log_softmax(lowered_dir):
    """Upstream's wav2letter case, from torchaudio's layer list: every convolution and ReLU on
    CMSIS-NN; the closing log_softmax over the classes has no CMSIS-NN kernel and stays in float."""
    report = read_report(lowered_dir("Wav2LetterSmall", "--input-shape", "1,1,700", "--random-calibration"))
    assert report["fallbacks"] == ["aten::_log_softmax.out"]
    assert not any("convolution" in op or "relu" in op for op in kernels(report))


def test_without_the_backend_a_1xn_convolution_mve_gets_wrong_is_refused(tmp_path, capsys):
    """--no-delegate on M55 would run it through the wrapper's 1xN path (wrong at the edge): one line,
    exit 2, naming the way out. The M4's 1xN path is arm_convolve_s8 itself: no refusal there."""
    from conftest import run_cli

    argv = ["lower", f"{SMALL}:Shapes1d", "--input-shape", "1,4,101", "--random-calibration", "--no-delegate"]
    assert run_cli(*argv, "-o", tmp_path / "m55") == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "would compute wrong results" in err and "drop --no-delegate" in err and "small.py:" in err, err
    assert run_cli(*argv, "--target", "cortex-m4", "-o", tmp_path / "m4") == 0
