"""The reference the firmware is checked against, and the lowering cache that must never serve
another model's program. Real lowering throughout."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from conftest import SMALL, read_report, run_cli

from cmx_gen.lower.host_models.kernel_models import avg_pool2d_s8
from cmx_gen.lower.lowering import LowerOptions
from cmx_gen.model import source as model_source
from cmx_gen.model.export import export
from cmx_gen.program import cache
from cmx_gen.program.report import Report
from cmx_gen.program.report_text import reference_note


def c_avgpool(x: torch.Tensor, k: int, s: int, p: int) -> torch.Tensor:
    """arm_avgpool_s8 written out element by element, as its scalar C loop reads."""
    n, c, h, w = x.shape
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    out = torch.empty((n, c, oh, ow), dtype=torch.int8)
    for b in range(n):
        for ch in range(c):
            for oy in range(oh):
                for ox in range(ow):
                    total = count = 0
                    for ky in range(k):
                        for kx in range(k):
                            iy, ix = oy * s - p + ky, ox * s - p + kx
                            if 0 <= iy < h and 0 <= ix < w:
                                total += int(x[b, ch, iy, ix])
                                count += 1
                    half = count // 2
                    total = total + half if total > 0 else total - half
                    q = abs(total) // count * (1 if total >= 0 else -1)  # C truncates toward zero
                    out[b, ch, oy, ox] = max(-128, min(127, q))
    return out


@pytest.mark.parametrize("k, s, p", [(2, 2, 0), (3, 1, 1), (3, 2, 1), (4, 4, 0)])
def test_avgpool_model_is_the_c_kernel(k, s, p):
    g = torch.Generator().manual_seed(k * 10 + s + p)
    x = torch.randint(-128, 128, (1, 5, 7, 9), generator=g, dtype=torch.int8)
    got = avg_pool2d_s8(x, [k, k], [s, s], [p, p], False, 0, 0, 0, torch.empty(0))
    assert torch.equal(got, c_avgpool(x, k, s, p))


def test_avgpool_model_rounds_half_away_from_zero_unlike_float():
    x = torch.tensor([[[[1, 2], [2, 2]]], [[[-1, -2], [-2, -2]]]], dtype=torch.int8)  # sums 7 and -7 over 4
    got = avg_pool2d_s8(x, [2, 2], [2, 2], [0, 0], False, 0, 0, 0, torch.empty(0))
    assert got.flatten().tolist() == [2, -2]
    assert torch.round(F.avg_pool2d(x.float(), 2)).flatten().tolist() == [2.0, -2.0]  # 1.75 both ways
    x = torch.tensor([[[[1, 2], [2, 1]]]], dtype=torch.int8)  # 6 / 4 = 1.5: C gives 2, round-half-even 2
    y = torch.tensor([[[[1, 1], [2, 1]]]], dtype=torch.int8)  # 5 / 4 = 1.25 -> 1
    z = torch.tensor([[[[3, 2], [2, 3]]]], dtype=torch.int8)  # 10 / 4 = 2.5: C gives 3, round-half-even 2
    results = [int(avg_pool2d_s8(t, [2, 2], [2, 2], [0, 0], False, 0, 0, 0, torch.empty(0))) for t in (x, y, z)]
    assert results == [2, 1, 3]


def test_residual_net_reference_names_the_avgpool_difference(lowered_dir):
    report = read_report(lowered_dir("Residual", "--input-shape", "1,3,16,16", "--random-calibration"))
    ref = report["reference"]
    assert ref["checked_against"] == "cmsis-nn"
    assert ref["python_reference_max_lsb_calibration"] >= 1
    (op,) = ref["ops"]
    assert op["op"] == "cortex_m::quantized_avg_pool2d" and op["max_lsb"] == 1
    assert op["module"] == "Residual" and "small.py:" in op["source"] and "avg_pool2d" in op["source"]
    note = reference_note(Report.of(report))
    assert "1 LSB" in note and "quantized_avg_pool2d" in note and "bit-exact against the CMSIS-NN kernels" in note


def test_convnet_reference_agrees_or_is_explained(lowered_dir):
    """No silent tolerance: either both references agree or the report names the op."""
    ref = read_report(lowered_dir("ConvNet"))["reference"]
    if ref["python_reference_max_lsb_calibration"]:
        assert ref["ops"], "a difference at the output must be traced to an op"


def test_twin_models_in_one_file_get_their_own_programs(tmp_path, capsys):
    """Same file, same weights, one adds a weightless pool: two cache entries, two programs."""
    plain = model_source.load(f"{SMALL}:Plain", input_shape="1,3,8,8", random_calibration=True)
    pooled = model_source.load(f"{SMALL}:Pooled", input_shape="1,3,8,8", random_calibration=True)
    plain, pooled = export(plain), export(pooled)
    assert cache.key(plain, "cortex-m55") != cache.key(pooled, "cortex-m55")
    assert plain.graph_sha256 != pooled.graph_sha256

    apps = {}
    for name in ("Plain", "Pooled"):
        apps[name] = tmp_path / name
        assert (
            run_cli(
                "create",
                f"{SMALL}:{name}",
                "--input-shape",
                "1,3,8,8",
                "--random-calibration",
                "--board",
                "mps3-an547",
                "-o",
                apps[name],
            )
            == 0
        )
        assert "reused the cached program" not in capsys.readouterr().err
    reports = {n: json.loads((a / "model" / "report.json").read_text()) for n, a in apps.items()}
    assert reports["Plain"]["outputs"][0]["shape"] == [1, 8, 8, 8]
    assert reports["Pooled"]["outputs"][0]["shape"] == [1, 8, 4, 4]
    assert reports["Plain"]["pte"]["sha256"] != reports["Pooled"]["pte"]["sha256"]
    assert reports["Plain"]["model"]["graph_sha256"] != reports["Pooled"]["model"]["graph_sha256"]
    assert (apps["Plain"] / "model" / "model.pte").read_bytes() != (apps["Pooled"] / "model" / "model.pte").read_bytes()
    # and the cache still serves a true repeat
    assert (
        run_cli(
            "create",
            f"{SMALL}:Pooled",
            "--input-shape",
            "1,3,8,8",
            "--random-calibration",
            "--board",
            "mps3-an547",
            "-o",
            apps["Pooled"],
        )
        == 0
    )
    assert "reused the cached program" in capsys.readouterr().err


def test_cache_key_covers_target_options_and_data():
    source = model_source.load(f"{SMALL}:Plain", input_shape="1,3,8,8", random_calibration=True)
    exported = export(source)
    base = cache.key(exported, "cortex-m55")
    assert cache.key(exported, "cortex-m4") != base
    assert cache.key(exported, "cortex-m55", LowerOptions(keep_fp32=("conv",))) != base
    fewer = export(dataclasses.replace(source, calibration=source.calibration[:-1]))
    assert cache.key(fewer, "cortex-m55") != base


def test_softmax_model_tracks_float_softmax_and_sums_to_one():
    """arm_softmax_s8's fixed-point exp/reciprocal: within one output LSB of float softmax, rows
    that sum to ~256 steps of 1/256, and -128 where `diff < diff_min`."""
    from executorch.backends.cortex_m.passes.aten_to_cortex_m_pass import _compute_softmax_params
    from executorch.backends.cortex_m.passes.cortex_m_pass_manager import CortexMPassManager  # noqa: F401 (op registration)

    from cmx_gen.lower.host_models.kernel_models import softmax_s8

    g = torch.Generator().manual_seed(3)
    for scale in (0.004, 0.02, 0.1, 0.5):
        x = torch.randint(-128, 128, (32, 12), generator=g, dtype=torch.int8)
        multiplier, shift, diff_min = _compute_softmax_params(scale)
        got = softmax_s8(x, -1, 0, -128, multiplier, shift, diff_min).int()
        want = (torch.round(torch.softmax(x.float() * scale, -1) * 256) - 128).clamp(-128, 127).int()
        assert (got - want).abs().max() <= 1
        assert ((got + 128).sum(-1) - 256).abs().max() <= 12
    x = torch.tensor([[127, -128]], dtype=torch.int8)
    multiplier, shift, diff_min = _compute_softmax_params(0.5)
    assert softmax_s8(x, -1, 0, -128, multiplier, shift, diff_min).tolist() == [[127, -128]]


def test_a_forward_that_mutates_its_input_changes_no_data(tmp_path):
    """Upstream's sub `inplace` case FAILed on target: every run of forward (float outputs,
    calibration, references) mutated the example input, so the reference input and outputs
    came from different data."""
    import numpy as np

    from cmx_gen.pipeline.lower import produce

    x, y = torch.linspace(-10, 10, 20).reshape(4, 5), torch.linspace(-2, 8, 20).reshape(4, 5)
    source = model_source.load(f"{SMALL}:InplaceSub", input_shape="4,5", random_calibration=True)
    source = dataclasses.replace(source, example_inputs=(x.clone(), y.clone()), calibration=[(x.clone(), y.clone())])
    result = produce(source, "cortex-m55", use_cache=False).artifacts
    assert torch.equal(source.example_inputs[0], x), "lowering must not mutate the example input"
    assert np.array_equal(result.reference["input_0"], x.numpy())
    scale = result.report.outputs[0].quant.scale
    assert np.abs(result.reference["output_0"] - (x - y).numpy()).max() <= 2 * scale  # int8 rounding of x, y, out


def test_mve_quantize_rounds_the_exact_product_in_blocks_of_16():
    """op_quantize_per_tensor.cpp on MVE: vfmaq_f32 (no rounding of x * inv_scale before the round
    to nearest); the scalar tail and other cores round the float product first."""
    from cmx_gen.lower.host_models.kernel_models import quantize_per_tensor_s8

    scale = 0.1
    inv = np.float32(1.0) / np.float32(scale)
    # find values whose float product rounds onto a tie that the exact product does not reach
    ties = ((np.arange(-120, 120) + 0.5) / inv).astype(np.float32)  # inside the int8 range
    near = np.concatenate([ties, np.nextafter(ties, np.float32(np.inf)), np.nextafter(ties, np.float32(-np.inf))])
    prod32 = (near * inv).astype(np.float32)
    exact = near.astype(np.float64) * np.float64(inv)
    split = np.flatnonzero(np.rint(prod32) != np.rint(exact))
    assert split.size >= 20, "values next to a tie, where the two roundings part"
    x = torch.from_numpy(near[split][:20].copy())  # 16 in the MVE block, 4 in the tail
    mve = quantize_per_tensor_s8(x, scale, 0, -128, 127, torch.int8, isa="MVE")
    dsp = quantize_per_tensor_s8(x, scale, 0, -128, 127, torch.int8, isa="DSP")
    assert (mve[:16] != dsp[:16]).all() and torch.equal(mve[16:], dsp[16:])
    python = torch.ops.quantized_decomposed.quantize_per_tensor.default(x, scale, 0, -128, 127, torch.int8)
    assert torch.equal(dsp, python), "without MVE the kernel rounds as ExecuTorch's Python op does"


CASES = [
    ("ConvNet", ()),
    ("Residual", ("--input-shape", "1,3,16,16")),
    ("Pooled", ()),
    ("UpsamplerK4Relu", ("--input-shape", "1,4,5,5")),
    ("EltwiseNet", ("--input-shape", "1,32")),
    ("EltwiseNet", ("--input-shape", "1,32", "--io", "int8")),
]


@pytest.mark.parametrize("delegate", [True, False], ids=["delegated", "per-operator"])
@pytest.mark.parametrize("name, extra", CASES)
def test_a_pte_run_from_its_plan_matches_the_lowering_reference_bit_for_bit(lowered_dir, name, extra, delegate):
    """plan_reference runs only the serialized plan (constants, planned buffers with elided views,
    kernel calls, and the layers of cmx-gen's backend from their plan bytes); on cmx-gen's own
    programs it must give exactly the lowering's reference, which the firmware tests prove on the
    target. Without an SDK this is what checks every field of a plan the runtime reads."""
    from cmx_gen.program import plan_reference

    out = lowered_dir(name, *extra, "--random-calibration", *(() if delegate else ("--no-delegate",)))
    report = read_report(out)
    assert bool(report["delegated_layers"]) == delegate
    reference = np.load(out / "reference.npz")
    inputs = [reference[k] for k in sorted(reference.files) if k.startswith("input_")]
    got = plan_reference.reference((out / "model.pte").read_bytes(), inputs, "MVE")
    expected = [reference[k] for k in sorted(reference.files) if k.startswith("output_")]
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype
        assert np.array_equal(g, e), f"{name}: {np.abs(g.astype(np.float64) - e).max()} apart"


def test_the_lowering_cache_keys_on_the_kernel_constants_the_plan_reads():
    """The plan reads constants from the kernels' C sources (lower/delegate/kernel_facts.py) and asks
    their size and layout functions (kernel_numbers.py: cmx_nn_layout.c and its header): a change there
    must not be served a program cached before it. Every such source is in the fingerprint the lowering
    cache keys on (only cmx_gen's .py and .yaml were, until 2026-11-28)."""
    import re

    from cmx_gen.common.memo import fingerprinted_files
    from cmx_gen.common.paths import KERNELS_DIR, PACKAGE
    from cmx_gen.lower.delegate import kernel_choice, kernel_numbers

    text = "\n".join(path.read_text() for path in PACKAGE.rglob("*.py"))
    sources = set(re.findall(r'\bdefine\("([\w.]+)"', text)) | {kernel_choice._DW}
    assert {"cmx_nn_layout.h", "cmx_fully_connected_s8.c", "cmx_nn.h"} <= sources, sources
    asked = {KERNELS_DIR / "nn" / source for source in sources} | {kernel_numbers.SOURCE}
    assert asked <= set(fingerprinted_files())
