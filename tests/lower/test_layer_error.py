"""Per-layer quantization error (layer_error.py, report.json `layers`). Real lowering throughout."""

from __future__ import annotations

from conftest import read_report, run_cli


def _layers(lowered_dir, name: str) -> list[dict]:
    return read_report(lowered_dir(name, "--input-shape", "1,3,8,8", "--random-calibration"))["layers"]


def test_a_layer_with_bad_weights_is_the_worst_and_the_layers_before_it_do_not_change(lowered_dir):
    """The middle conv's weights get outliers: its per-channel int8 weights keep a few steps each. It
    must lose the most SQNR; the first conv (and the input's quantization) must read exactly as without."""
    clean, noisy = _layers(lowered_dir, "ThreeConvs"), _layers(lowered_dir, "ThreeConvsOutliers")
    convs = [i for i, row in enumerate(noisy) if row["op"] == "cortex_m::quantized_conv2d"]
    assert [noisy[i]["module"] for i in convs] == ["first", "middle", "last"]
    assert all(noisy[i]["kind"] == "compared" for i in convs)
    first, middle, last = convs
    assert noisy[:middle] == clean[:middle], "the layers before the noisy one must not change"
    worst = max((row for row in noisy if row["sqnr_drop_db"] is not None), key=lambda row: row["sqnr_drop_db"])
    assert worst["module"] == "middle"
    assert noisy[middle]["sqnr_drop_db"] > clean[middle]["sqnr_drop_db"] + 8, (noisy[middle], clean[middle])
    assert noisy[middle]["sqnr_db"] < clean[middle]["sqnr_db"] - 8
    assert noisy[last]["sqnr_drop_db"] < noisy[middle]["sqnr_drop_db"]


def test_every_cmsis_nn_layer_of_ds_cnn_is_compared_and_the_worst_is_printed(tmp_path, capsys):
    from conftest import ROOT

    assert run_cli("lower", ROOT / "samples" / "ds_cnn" / "model.py:DSCNN", "-o", tmp_path) == 0
    printed = capsys.readouterr().out
    layers = read_report(tmp_path)["layers"]
    cmsis = [row for row in layers if row["op"].startswith("cortex_m::quantized") or row["op"] == "cortex_m::softmax"]
    assert len(cmsis) == 12 and all(row["kind"] == "compared" and row["sqnr_db"] > 15 for row in cmsis), cmsis
    assert {row["kind"] for row in layers if "quantize_per_tensor" in row["op"]} <= {"compared", "quant_boundary"}
    worst = max((row for row in layers if row["sqnr_drop_db"] is not None), key=lambda row: row["sqnr_drop_db"])
    heading = printed.index("worst layers")
    assert f"op #{worst['index']} {worst['op']} ({worst['module']}" in printed[heading:].splitlines()[1]
