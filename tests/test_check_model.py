"""`cmx-gen check MODEL --board`: lowers for the board's core, then fits or refuses."""

from __future__ import annotations

from conftest import ROOT, SMALL, run_cli


def test_check_lowers_a_model_for_the_boards_core(capsys):
    code = run_cli("check", ROOT / "samples/digits/model.py:DigitsCNN", "--board", "mps2-an386")
    assert code == 0
    out = capsys.readouterr().out
    assert "cortex-m4 (DSP)" in out and "fits: yes" in out


def test_check_refuses_a_model_too_big_for_flash(capsys):
    code = run_cli("check", f"{SMALL}:BigLinear", "--input-shape", "1,1024", "--random-calibration", "--board", "nrf52840dk")
    assert code == 3
    err = capsys.readouterr().err
    assert "flash0" in err and "short" in err
    assert "mps2-an386" in err, "the refusal lists same-ISA boards where the model fits"
