"""`cmx-gen lower` with real executorch lowering: op coverage, classification, reports, reference."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ROOT, kernels, read_report, run_cli

EXPECTED_KEYS = {
    "schema",
    "cmx_gen_version",
    "executorch_version",
    "model",
    "target",
    "pte",
    "operators",
    "fallbacks",
    "inputs",
    "outputs",
    "memory",
    "program",
    "calibration",
    "quantization_error",
    "reference",
    "lowering_warnings",
    "timings_s",
}


def op_classes(report: dict) -> dict[str, str]:
    return {op["name"]: op["class"] for op in report["operators"]}


def test_convnet_lowers_every_compute_op_to_cmsis_nn(lowered_dir):
    report = read_report(lowered_dir("ConvNet"))
    ops = op_classes(report)
    ran = kernels(report)
    for op in (
        "quantized_conv2d",
        "quantized_depthwise_conv2d",
        "quantized_max_pool2d",
        "quantized_avg_pool2d",
        "quantized_linear",
    ):
        assert f"cortex_m::{op}" in ran, ran
    assert {layer["op"] for layer in report["delegated_layers"]} <= set(ran)
    assert ops["cmx::conv_helium"] == ops["cmx::fully_connected"] == "cmsis_nn"
    assert report["fallbacks"] == []
    assert not any("addmm" in name for name in ops), "linear must not stay on fp32 addmm"
    assert ops["cortex_m::quantize_per_tensor.out"] == "quant_boundary"
    assert ops["cmx::transpose"] == "data_movement"  # NHWC -> NCHW before the flatten, inside the plan


def test_every_constant_is_read_by_an_operator(lowered_dir):
    """The cortex_m conv passes leave each weight's original layout behind; none of it may reach the
    .pte (it did: every conv weight twice, dead_constants.py)."""
    from cmx_gen.program import pte as program

    # per operator: every weight is a program constant a cortex_m kernel reads (with the backend none is left
    # outside its delegates, a hardswish's clamp bound included)
    folder = lowered_dir("Residual", "--input-shape", "1,3,16,16", "--random-calibration", "--no-delegate")
    data = (folder / "model.pte").read_bytes()
    plan = program.forward_plan(program.read(data))
    read = {index for _, args in program._kernel_calls(plan) for index in args}
    read |= set(plan.inputs) | set(plan.outputs)
    for value in list(read):  # lists (int[] / Tensor[]) name the values they hold
        items = getattr(plan.values[value].val, "items", None)
        read |= set(items or [])
    constants = [
        i
        for i, v in enumerate(plan.values)
        if getattr(v.val, "data_buffer_idx", 0) and getattr(v.val, "allocation_info", None) is None
    ]
    assert constants and not [i for i in constants if i not in read]


@pytest.mark.parametrize("core", ["cortex-m55", "cortex-m4"])
def test_one_input_channel_conv_is_a_convolution(lowered_dir, core):
    """groups == in_channels == 1 is not a depthwise layer worth CMSIS-NN's generic depthwise loop."""
    report = read_report(lowered_dir("OneChannelIn", "--input-shape", "1,1,20,12", "--random-calibration", target=core))
    convs = [op for op in kernels(report) if "conv" in op]
    assert convs == ["cortex_m::quantized_conv2d"] * 2


def test_elementwise_ops_and_softmax_lower(lowered_dir):
    report = read_report(lowered_dir("EltwiseNet", "--input-shape", "1,32", "--random-calibration"))
    ran = kernels(report)
    for op in ("quantized_add", "quantized_mul", "softmax", "quantized_linear", "minimum"):
        assert f"cortex_m::{op}" in ran, ran
    assert all(op["class"] != "fallback" for op in report["operators"])
    assert report["fallbacks"] == []
    assert report["calibration"]["random"] is True


def test_report_has_documented_keys_and_consistent_sizes(lowered_dir):
    folder = lowered_dir("ConvNet")
    report = read_report(folder)
    assert EXPECTED_KEYS <= set(report)
    assert report["schema"] == "cmx-gen/report/1"
    assert report["target"] == {"core": "cortex-m55", "isa": "MVE"}
    assert report["executorch_version"] == "1.5.1"
    assert report["pte"]["bytes"] == (folder / "model.pte").stat().st_size
    assert 0 < report["pte"]["constant_bytes"] < report["pte"]["bytes"]
    memory = report["memory"]
    assert memory["planned_bytes"] == sum(memory["planned_buffer_sizes"]) > 0
    assert 0 < memory["scratch_bytes"] <= memory["planned_bytes"]
    assert memory["method_allocator_bytes"] > 0
    (spec,) = report["inputs"]
    assert spec["shape"] == [1, 3, 8, 8] and spec["dtype"] == "float32"
    assert spec["dim_order"] == [0, 2, 3, 1], "inputs are channels-last"
    assert spec["quant"]["scale"] > 0
    md = (folder / "report.md").read_text()
    assert "cmx::conv_helium" in md and "CMSIS-NN" in md


def test_reference_outputs_match_float_model_within_quantization_error(lowered_dir):
    folder = lowered_dir("ConvNet")
    report = read_report(folder)
    ref = np.load(folder / "reference.npz")
    assert ref["input_0"].shape == (1, 3, 8, 8)
    import importlib.util

    import torch

    spec = importlib.util.spec_from_file_location("small_models", ROOT / "tests" / "toy_models" / "small.py")
    small = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(small)
    with torch.no_grad():
        expected = small.ConvNet().eval()(torch.from_numpy(ref["input_0"])).numpy()
    scale = report["outputs"][0]["quant"]["scale"]
    error = np.abs(ref["output_0"] - expected).max()
    assert error <= 4 * scale, f"INT8 reference differs from float by {error}, output LSB is {scale}"
    # The reference is the INT8 program: its outputs sit on the output quantization grid.
    zero_point = report["outputs"][0]["quant"]["zero_point"]
    steps = ref["output_0"] / scale + zero_point
    assert np.allclose(steps, np.round(steps), atol=1e-3)
    assert report["quantization_error"]["top1_agreement"] == 1.0


def test_unsupported_op_is_reported_as_fallback_and_fails_strict(lowered_dir, tmp_path, capsys):
    report = read_report(lowered_dir("Unsupported", "--input-shape", "1,16", "--random-calibration"))
    assert report["fallbacks"] == ["aten::cumsum.out"]
    assert "cortex_m::quantized_linear" in kernels(report)
    code = run_cli(
        "lower",
        f"{ROOT}/tests/toy_models/small.py:Unsupported",
        "--input-shape",
        "1,16",
        "--random-calibration",
        "--strict",
        "-o",
        tmp_path,
    )
    assert code == 4
    err = capsys.readouterr().err
    assert "aten::cumsum.out" in err and "fell back to portable kernels" in err


@pytest.mark.parametrize("core,isa", [("cortex-m4", "DSP"), ("cortex-m3", "SCALAR")])
def test_target_isa_is_recorded(lowered_dir, core, isa):
    report = read_report(lowered_dir("ConvNet", target=core))
    assert report["target"] == {"core": core, "isa": isa}
    assert report["fallbacks"] == []


def test_scratch_depends_on_isa(lowered_dir):
    """CMSIS-NN scratch sizes differ per ISA: the reason the target is recorded."""
    mve = read_report(lowered_dir("ConvNet"))["memory"]["scratch_bytes"]
    dsp = read_report(lowered_dir("ConvNet", target="cortex-m4"))["memory"]["scratch_bytes"]
    assert mve != dsp


def test_stdout_table_lists_ops(tmp_path, capsys):
    code = run_cli(
        "lower",
        f"{ROOT}/tests/toy_models/small.py:EltwiseNet",
        "--input-shape",
        "1,32",
        "--random-calibration",
        "-o",
        tmp_path,
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "cmx::add " in out and "cmx backend: cmx_add_s8 (cmx-gen)" in out
    assert "compute    " in out and "nodes on CMSIS-NN" in out
    assert "RANDOM" in out
