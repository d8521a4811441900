"""`--io int8`: a program that takes and returns int8 tensors, with its I/O quantization exported.

Real lowering and rendering; the on-target PASS is in tests/device/test_firmware.py (SDK)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ROOT, SMALL, kernels, read_report, run_cli

from cmx_gen.app import project as project_mod
from cmx_gen.pipeline.generate import generate
from cmx_gen.program.artifacts import load_reference

DIGITS = ROOT / "samples" / "digits" / "model.py:DigitsCNN"


def test_program_takes_and_returns_int8_without_boundary_ops(lowered_dir):
    int8 = read_report(lowered_dir("ConvNet", "--io", "int8"))
    floating = read_report(lowered_dir("ConvNet"))
    names = [op["name"] for op in int8["operators"]]
    assert not any("quantize_per_tensor" in n for n in names), names
    assert int8["lowering_options"]["io"] == "int8" and floating["lowering_options"]["io"] == "float"
    (spec_in,), (spec_out,) = int8["inputs"], int8["outputs"]
    assert spec_in["dtype"] == spec_out["dtype"] == "int8"
    assert spec_in["quant"]["at"] == spec_out["quant"]["at"] == "io"
    # the same quantization the float program applies at its boundary
    assert spec_in["quant"]["scale"] == pytest.approx(floating["inputs"][0]["quant"]["scale"])
    assert spec_out["quant"]["zero_point"] == floating["outputs"][0]["quant"]["zero_point"]
    # the INT8 error against the float model is measured on the dequantized outputs: unchanged
    assert int8["quantization_error"]["max_abs_err"] == pytest.approx(
        floating["quantization_error"]["max_abs_err"], abs=1e-6
    )
    assert int8["pte"]["bytes"] < floating["pte"]["bytes"]


def test_a_softmax_output_is_returned_in_its_own_int8(lowered_dir):
    """The cortex_m softmax writes int8 at a fixed 1/256 scale; requantizing that into the observer's
    scale at the output would cost two kernels and clip. --io int8 returns it as it is."""
    int8 = read_report(lowered_dir("EltwiseNet", "--input-shape", "1,32", "--random-calibration", "--io", "int8"))
    floating = read_report(lowered_dir("EltwiseNet", "--input-shape", "1,32", "--random-calibration"))
    names = [op["name"] for op in int8["operators"]]
    assert not any("quantize_per_tensor" in n for n in names), names
    assert kernels(int8)[-1] == "cortex_m::softmax", kernels(int8)
    assert int8["outputs"][0]["quant"] == {"scale": 1 / 256, "zero_point": -128, "at": "io"}
    assert int8["quantization_error"]["max_abs_err"] <= floating["quantization_error"]["max_abs_err"] + 1 / 256


@pytest.mark.parametrize(
    "model, shape, kernel",
    [
        ("NormOut", "1,8,16", "cmx::quantized_layer_norm"),
        ("TableOut", "1,8,16", "cmx::quantized_lut"),
        ("NormMean", "1,8,24", "cmx::quantized_mean"),
    ],
)
def test_an_output_made_by_one_of_cmx_gens_int8_ops_is_returned_as_it_is(lowered_dir, model, shape, kernel):
    """A model that returns a LayerNorm, an element-wise table or a mean: with --io int8 the int8 op
    that took over the output's quantize is the program's output (delegation refused it while the
    signature named the quantize it replaced)."""
    int8 = read_report(lowered_dir(model, "--input-shape", shape, "--random-calibration", "--io", "int8"))
    assert int8["outputs"][0]["dtype"] == "int8" and int8["outputs"][0]["quant"]["at"] == "io"
    assert not any("quantize_per_tensor" in op["name"] for op in int8["operators"]), int8["operators"]
    assert kernel in [layer["op"] for layer in int8["delegated_layers"]][-1:], int8["delegated_layers"]


def test_reference_input_is_the_float_input_quantized(lowered_dir):
    int8 = load_reference(lowered_dir("ConvNet", "--io", "int8") / "reference.npz")
    floating = load_reference(lowered_dir("ConvNet") / "reference.npz")
    q = read_report(lowered_dir("ConvNet", "--io", "int8"))["inputs"][0]["quant"]
    assert int8["input_0"].dtype == np.int8 and int8["output_0"].dtype == np.int8
    expected = np.clip(np.round(floating["input_0"] / q["scale"]) + q["zero_point"], -128, 127)
    assert np.abs(int8["input_0"].astype(np.int32) - expected).max() <= 1  # float32 rounding at ties
    scale_out = read_report(lowered_dir("ConvNet", "--io", "int8"))["outputs"][0]["quant"]
    dequantized = (int8["output_0"].astype(np.float32) - scale_out["zero_point"]) * scale_out["scale"]
    assert np.abs(dequantized - floating["output_0"]).max() <= scale_out["scale"] + 1e-6


def test_app_header_exports_the_io_quantization(tmp_path):
    app = tmp_path / "app"
    generate(
        project_mod.Project.single(model=str(DIGITS), board="mps2-an386", rtos="baremetal", output=str(app), io="int8"),
        app,
    )
    header = (app / "model" / "cmx_model.h").read_text()
    assert "#define CMX_IO_INT8 1" in header
    assert "#define CMX_INPUT_0_ZERO_POINT -128" in header and "#define CMX_OUTPUT_0_SCALE " in header
    io = (app / "model" / "cmx_model_io.c").read_text()
    assert "{cmx_output_0, 10u, 10u, 1, 0.0f, 0}" in io, "int8 outputs are compared in integer steps (scale 0)"
    assert 'io = "int8"' in (app / "cmx.toml").read_text()
    assert project_mod.load(app / "cmx.toml").models[0].io == "int8"
    # a float-I/O app says so and gives the boundary's parameters for reference
    plain = tmp_path / "plain"
    generate(
        project_mod.Project.single(model=str(DIGITS), board="mps2-an386", rtos="baremetal", output=str(plain)), plain
    )
    header = (plain / "model" / "cmx_model.h").read_text()
    assert "#define CMX_IO_INT8 0" in header and "#define CMX_INPUT_0_SCALE " in header


def test_an_index_output_cannot_be_int8(tmp_path, capsys):
    code = run_cli(
        "lower",
        f"{SMALL}:ArgmaxHead",
        "--input-shape",
        "1,16",
        "--random-calibration",
        "--io",
        "int8",
        "-o",
        tmp_path / "out",
    )
    err = capsys.readouterr().err
    assert code == 2 and "--io int8: output 0 cannot be int8: it is not dequantized" in err, err
    errors = [line for line in err.splitlines() if line.startswith("cmx-gen: error:")]
    assert len(errors) == 1 and "(it comes from aten::argmax)" in errors[0] and "drop --io int8" in errors[0], err


def test_project_file_io_must_be_known(tmp_path, capsys):
    (tmp_path / "cmx.toml").write_text(
        '[model]\nsource = "m.py:N"\n[target]\nboard = "mps3-an547"\n[options]\nio = "int4"\n'
    )
    assert run_cli("create", "--config", tmp_path / "cmx.toml", "-o", tmp_path / "app") == 2
    assert "io = 'int4' is not known" in capsys.readouterr().err
