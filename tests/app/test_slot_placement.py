"""placement = "slot" on the host: the board's model slots, the project file, and the one-line
refusals of what cannot have slots (before anything is lowered)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ROOT, run_cli

from cmx_gen.app import project as project_mod
from cmx_gen.app import project_file
from cmx_gen.common.errors import BoardError
from cmx_gen.fit.boards import load_board, load_board_file

DIGITS = ROOT / "samples" / "digits" / "model.py"

BOARD = """\
id: slotty
name: Test board
vendor: Test
core: {{name: cortex-m4, fpu: fpv4-sp-d16, dsp: true, clock_hz: 64000000}}
memory:
  - {{name: flash0, base: 0x0, size: 0x100000, kind: flash, executable: true, loadable: true}}
  - {{name: sram0, base: 0x20000000, size: 0x40000, kind: sram, executable: true, loadable: false}}
boot_region: flash0
ram_region: sram0
model_slots:
{slots}
"""


def _board(tmp_path: Path, slots: str):
    path = tmp_path / "slotty.yaml"
    path.write_text(BOARD.format(slots=slots))
    return load_board_file(path)


def test_slots_at_the_top_of_a_region_leave_the_firmware_what_is_below(tmp_path):
    board = _board(tmp_path, "  - {name: a, base: 0xC0000, size: 0x20000}\n  - {name: b, base: 0xE0000, size: 0x20000}")
    assert board.with_slots_reserved().region("flash0").size == 0xC0000
    assert board.region("flash0").size == 0x100000  # the board itself keeps its whole region
    an386 = load_board("mps2-an386").with_slots_reserved()
    assert an386.region("flash0").end == load_board("mps2-an386").model_slots[0].base


@pytest.mark.parametrize(
    ("slots", "problem"),
    [
        ("  - {name: a, base: 0x80000, size: 0x20000}", "contiguous and end where the region ends"),
        ("  - {name: a, base: 0x20000000, size: 0x1000}", "not inside one loadable memory region"),
        ("  - {name: a, base: 0xE0000, size: 0x20000}\n  - {name: a, base: 0xC0000, size: 0x20000}", "once"),
        ("  - {name: a, base: 0x0, size: 0x100000}", "leave the firmware room"),
        ("  - {name: a, base: 0xFFFF8, size: 0x8}", "16-byte aligned"),
    ],
)
def test_a_bad_slot_is_refused_naming_it(tmp_path, slots, problem):
    with pytest.raises(BoardError, match=problem):
        _board(tmp_path, slots)


def test_the_project_file_keeps_the_placement(tmp_path):
    project = project_mod.Project.single(model=str(DIGITS), board="mps2-an386", placement="slot")
    (tmp_path / "cmx.toml").write_text(project_file.dumps(project, tmp_path))
    assert 'placement = "slot"' in (tmp_path / "cmx.toml").read_text()
    assert project_mod.load(tmp_path / "cmx.toml").placement == "slot"
    linked = project_mod.Project.single(model=str(DIGITS), board="mps2-an386")
    assert "placement" not in project_file.dumps(linked, tmp_path)  # the default is not written


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (("--board", "mps2-an505"), "board mps2-an505 declares no model slots"),
        (("--board", "mps2-an386", "--rtos", "cmake-package"), "built for the baremetal and zephyr apps"),
    ],
)
def test_what_cannot_have_slots_is_refused_in_one_line(tmp_path, capsys, args, problem):
    assert run_cli("create", f"{DIGITS}:DigitsCNN", *args, "--placement", "slot", "-o", tmp_path / "app") == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert problem in line and "(fix: " in line, line
    assert not (tmp_path / "app").exists()


def test_a_bad_placement_in_the_project_file_is_one_line(tmp_path, capsys):
    (tmp_path / "cmx.toml").write_text(
        f'[model]\nsource = "{DIGITS}:DigitsCNN"\nplacement = "flash"\n[target]\nboard = "mps2-an386"\n'
    )
    assert run_cli("create", "--config", tmp_path / "cmx.toml", "-o", tmp_path / "app") == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "[model] placement = 'flash' is not a placement" in line, line
