"""`cmx-gen check MODEL --board`: lowers for the board's core, then fits or refuses."""

from __future__ import annotations

import json

from conftest import ROOT, SMALL, run_cli


def test_check_lowers_a_model_for_the_boards_core(capsys):
    code = run_cli("check", ROOT / "samples/digits/model.py:DigitsCNN", "--board", "mps2-an386")
    assert code == 0
    out = capsys.readouterr().out
    assert "cortex-m4 (DSP)" in out and "fits: yes" in out


def test_check_refuses_a_model_too_big_for_flash(capsys):
    code = run_cli(
        "check", f"{SMALL}:BigLinear", "--input-shape", "1,1024", "--random-calibration", "--board", "nrf52840dk"
    )
    assert code == 3
    err = capsys.readouterr().err
    assert "flash0" in err and "short" in err
    assert "mps2-an386" in err, "the refusal lists same-ISA boards where the model fits"


def test_check_reads_an_app_folder(lowered_dir, tmp_path, capsys):
    """An app keeps its report in model/report.json: `check APP --board` asks "would it fit there?"."""
    import shutil

    (tmp_path / "app" / "model").mkdir(parents=True)
    shutil.copy(lowered_dir("ConvNet") / "report.json", tmp_path / "app" / "model" / "report.json")
    assert run_cli("check", tmp_path / "app", "--board", "corstone300-fvp") == 0
    assert "fits: yes" in capsys.readouterr().out
    assert run_cli("check", tmp_path / "app", "--board", "mps2-an386") == 2, "lowered for MVE, the M4 is DSP"
    assert "lowered for cortex-m55 (MVE)" in capsys.readouterr().err


def test_check_prints_the_latency_a_board_will_see(capsys):
    """Before building: the backend layers' work at the core's estimated cycles per MAC or element
    (data/kernel_cycles.yaml), at the board's clock; a core without figures says so in the line."""
    model = ROOT / "samples/ds_cnn/model.py:DSCNN"
    assert run_cli("check", model, "--board", "mps2-an386", "--io", "int8") == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("latency "))
    assert " ms at 25 MHz: " in line and "cortex-m4" in line and "run APP --cycles" in line, line
    assert run_cli("check", model, "--board", "mps2-an386", "--io", "int8", "--json") == 0
    latency = json.loads(capsys.readouterr().out)["latency"]
    # what `run --cycles` measures on the built app: 4,819,342 at 19767e8 (docs/performance.md); the
    # pre-build figure is fitted on the profile (its hooks included), +8 % on this network (its 1x1 layers
    # run three positions at a time, cheaper an output than the 3x3 layers one conv_row figure prices too)
    assert latency["estimated"] and 0.9 * 4_819_342 < latency["cycles"] < 1.1 * 4_819_342, latency
    assert latency["layers"] == 13 and latency["not_counted"] == [], latency
    assert run_cli("check", model, "--board", "mps3-an547", "--io", "int8") == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("latency "))
    assert " ms at 32 MHz: " in line and "cortex-m55's kernel figures" in line, line
    assert run_cli("check", model, "--board", "mps2-an500", "--io", "int8") == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("latency "))
    assert line.startswith("latency    not estimated: no kernel cycle figures for cortex-m7"), line
    # a board whose flash waits: the figures are fitted without wait states, and the line says so
    assert run_cli("check", model, "--board", "nucleo-l4r5zi", "--io", "int8") == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("latency "))
    assert " ms at 120 MHz: " in line and "not counted: flash0's 5 wait states" in line, line


def test_check_prices_attention_layer_norm_and_copies_before_building(capsys):
    """The layer kinds of models written the ordinary PyTorch way (bmm, LayerNorm, tables, copies,
    recurrent layers) have figures too (bench/kernel_cycles.py over such models): TinyViT's backend
    layers are all counted, near what `run --cycles` measured (1,919,972 cycles on the M4 at 78c71bc, its
    softmax on cmx_softmax_s8's table; 2,610,010 with arm_softmax_s8 at 5348b3d, docs/cycles.md)."""
    model = ROOT / "tests/toy_models/user_models.py:TinyViT"
    assert run_cli("check", model, "--board", "mps2-an386", "--io", "int8", "--json") == 0
    latency = json.loads(capsys.readouterr().out)["latency"]
    assert [what for what in latency["not_counted"] if "outside the backend" not in what] == [], latency
    assert 0.85 * 1_919_972 < latency["cycles"] < 1.1 * 1_919_972, latency


def test_check_prices_cmsis_nns_own_linear_mul_and_patched_convolutions(capsys):
    """CMSIS-NN's arm_fully_connected_s8 (the M4's layers of 10, 490, 30 and 18 inputs),
    arm_elementwise_mul_s8 (its gates) and arm_convolve_s8 (ResNet8's first stages patch by patch
    under --memory min) have figures: every backend layer counted, near what the profiles measured
    (bench/kernel_cycles.py on mps2-an386: 169,791 and 124,935,769 cycles; the gated head's two sigmoids
    run outside the backend)."""
    for model, extra, measured in (
        ("tests/toy_models/user_models.py:GatedKwsHead", (), 169_791),
        ("samples/resnet8/model.py:ResNet8", ("--memory", "min"), 124_935_769),
    ):
        assert run_cli("check", ROOT / model, "--board", "mps2-an386", "--io", "int8", *extra, "--json") == 0
        latency = json.loads(capsys.readouterr().out)["latency"]
        assert [what for what in latency["not_counted"] if "outside the backend" not in what] == [], latency
        assert 0.9 * measured < latency["cycles"] < 1.1 * measured, (model, latency)
