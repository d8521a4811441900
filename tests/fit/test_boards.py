"""The board database: every shipped file passes the schema; broken files fail naming file and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cmx_gen.cli import main as cli
from cmx_gen.common.errors import BoardError, RenderError
from cmx_gen.common.paths import BOARDS_DIR
from cmx_gen.fit.boards import BOARD_PATH_ENV, board_ids, load_board, load_board_file, load_boards

CONTRACT_IDS = [
    "mps3-an547",
    "corstone300-fvp",
    "corstone320-fvp",
    "mps2-an385",
    "mps2-an386",
    "mps2-an500",
    "mps2-an505",
    "mps2-an521",
    "nucleo-h743zi",
    "stm32h747i-disco",
    "nrf5340dk-cpuapp",
    "nrf52840dk",
    "rpi-pico2",
    "frdm-mcxn947",
    "mimxrt1170-evk",
    "alif-e8-hp",
    "nucleo-n657x0-q",
]

GOOD = """\
id: {id}
name: Test board
vendor: Test
core: {{name: cortex-m4, fpu: fpv4-sp-d16, dsp: true, clock_hz: 64000000}}
memory:
  - {{name: flash0, base: 0x0, size: 0x100000, kind: flash, executable: true, loadable: true}}
  - {{name: sram0, base: 0x20000000, size: 0x40000, kind: sram, executable: true, loadable: false}}
boot_region: flash0
ram_region: sram0
zephyr: {{target: my_board/my_soc}}
"""


def write(tmp_path: Path, text: str, name: str = "my-board") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path


def test_database_has_every_contract_board():
    assert set(CONTRACT_IDS) <= set(board_ids())


@pytest.mark.parametrize("path", sorted(BOARDS_DIR.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_board_file_loads(path):
    board = load_board_file(path)
    assert board.id == path.stem
    assert board.region(board.boot_region).executable
    # Each number cites its source: every file names Zephyr DTS paths, QEMU or a datasheet in comments.
    text = path.read_text()
    assert "Sources:" in text and ("zephyr " in text or "qemu" in text)
    if board.zephyr:
        assert board.zephyr.file_name == board.zephyr.target.replace("/", "_")
    assert board.qemu or board.fvp or board.flash, "a board must say how it runs"


def test_core_isa_and_gcc_flags():
    assert load_board("mps3-an547").core.isa == "MVE"
    assert load_board("mps3-an547").core.gcc_flags == ["-mcpu=cortex-m55", "-mfloat-abi=hard"]
    assert load_board("mps2-an386").core.isa == "DSP"
    assert load_board("mps2-an386").core.gcc_flags == ["-mcpu=cortex-m4", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard"]
    assert load_board("mps2-an385").core.isa == "SCALAR"
    assert load_board("mps2-an385").core.gcc_flags == ["-mcpu=cortex-m3", "-mfloat-abi=soft"]
    assert load_board("corstone320-fvp").core.name == "cortex-m85"
    # AN521 CPU0 has neither FPU nor DSP (QEMU `info qtree`): SCALAR, lowered for a SCALAR target
    an521 = load_board("mps2-an521").core
    assert an521.isa == "SCALAR"
    assert an521.gcc_flags == ["-mcpu=cortex-m33+nodsp+nofp", "-mfloat-abi=soft"]
    assert an521.lower_target == "cortex-m3"
    assert load_board("mps2-an505").core.lower_target == "cortex-m33"
    assert load_board("corstone320-fvp").core.lower_target == "cortex-m85"


def test_qemu_boards_match_zephyr_targets():
    an547 = load_board("mps3-an547")
    assert (an547.qemu.machine, an547.qemu.cpu) == ("mps3-an547", "cortex-m55")
    assert an547.zephyr.target == "mps3/corstone300/an547" and an547.zephyr.file_name == "mps3_corstone300_an547"
    assert load_board("mps2-an505").zephyr is None  # no Zephyr board: bare-metal only
    assert {b.id for b in load_boards() if b.runs_in_qemu} == {
        "mps3-an547",
        "mps2-an385",
        "mps2-an386",
        "mps2-an500",
        "mps2-an505",
        "mps2-an521",
    }


def test_good_file_loads_and_fills_zephyr_file_name(tmp_path):
    board = load_board_file(write(tmp_path, GOOD.format(id="my-board")))
    assert board.zephyr.file_name == "my_board_my_soc"
    assert board.core.isa == "DSP"


def test_bad_field_names_file_field_and_problem(tmp_path):
    path = write(tmp_path, GOOD.format(id="my-board").replace("kind: sram", "kind: eeprom"))
    with pytest.raises(BoardError) as info:
        load_board_file(path)
    text = info.value.one_line()
    assert str(path) in text
    assert "memory[1].kind" in text
    assert "'flash', 'itcm', 'dtcm', 'sram' or 'ddr'" in text


def test_negative_size_and_missing_field(tmp_path):
    text = GOOD.format(id="my-board").replace("size: 0x40000", "size: -4").replace("clock_hz: 64000000", "")
    with pytest.raises(BoardError) as info:
        load_board_file(write(tmp_path, text))
    msg = info.value.one_line()
    assert "memory[1].size" in msg and "greater than 0" in msg
    assert "core.clock_hz" in msg and "Field required" in msg


def test_unknown_key_is_refused(tmp_path):
    with pytest.raises(BoardError, match=r"field memory\[0\]\.exectuable: Extra inputs are not permitted"):
        load_board_file(
            write(
                tmp_path,
                GOOD.format(id="my-board").replace(
                    "executable: true, loadable: true", "exectuable: true, executable: true, loadable: true"
                ),
            )
        )


def test_cross_field_checks(tmp_path):
    overlap = GOOD.format(id="my-board").replace("base: 0x20000000", "base: 0x80000")
    with pytest.raises(BoardError, match="'flash0' and 'sram0' overlap"):
        load_board_file(write(tmp_path, overlap))
    no_region = GOOD.format(id="my-board").replace("ram_region: sram0", "ram_region: sram9")
    with pytest.raises(BoardError, match="ram_region 'sram9' is not one of the memory regions"):
        load_board_file(write(tmp_path, no_region))
    mve_m4 = GOOD.format(id="my-board").replace("dsp: true,", "dsp: true, mve: float,")
    with pytest.raises(BoardError, match="cortex-m4 has no MVE"):
        load_board_file(write(tmp_path, mve_m4))
    bad_name = GOOD.format(id="my-board").replace(
        "zephyr: {target: my_board/my_soc}", "zephyr: {target: my_board/my_soc, file_name: my_board}"
    )
    with pytest.raises(BoardError, match="file_name must be 'my_board_my_soc'"):
        load_board_file(write(tmp_path, bad_name))

    slow_uart = GOOD.format(id="my-board") + "uart: {kind: cmsdk-apb, base: 0x40004000, clock_hz: 1000000}\n"
    with pytest.raises(BoardError, match=r"uart: .*clock_hz / baud must be >= 16"):
        load_board_file(write(tmp_path, slow_uart))
    other_uart = GOOD.format(id="my-board") + "uart: {kind: pl011, base: 0x40004000, clock_hz: 25000000}\n"
    with pytest.raises(BoardError, match="uart.kind"):
        load_board_file(write(tmp_path, other_uart))


def test_uart_consoles_are_the_cmsdk_boards():
    """The bare-metal UART console exists where the UART needs no clock/pin set-up: MPS2/MPS3 and
    the Corstone-300 FVP (its secure alias on TrustZone cores, where the app runs secure)."""
    with_uart = {b.id: b.uart.base for b in load_boards() if b.uart}
    assert with_uart == {
        "mps2-an385": 0x40004000,
        "mps2-an386": 0x40004000,
        "mps2-an500": 0x40004000,
        "mps2-an505": 0x50200000,
        "mps2-an521": 0x50200000,
        "mps3-an547": 0x59303000,
        "corstone300-fvp": 0x59303000,
    }


def test_yaml_syntax_error_names_line(tmp_path):
    path = write(tmp_path, GOOD.format(id="my-board") + "memory: [unclosed\n")
    with pytest.raises(BoardError, match=r"my-board.yaml line \d+ is not valid YAML"):
        load_board_file(path)


def test_id_must_match_file_name(tmp_path):
    with pytest.raises(BoardError, match="field id: 'other' does not match the file name 'my-board'"):
        load_board_file(write(tmp_path, GOOD.format(id="other")))


def test_unknown_board_suggests_close_ids():
    with pytest.raises(BoardError) as info:
        load_board("mps3-an574")
    assert "unknown board 'mps3-an574'" in info.value.problem
    assert "mps3-an547" in info.value.hint


def test_user_board_folder_is_searched(tmp_path, monkeypatch):
    write(tmp_path, GOOD.format(id="my-board"))
    monkeypatch.setenv(BOARD_PATH_ENV, str(tmp_path))
    assert "my-board" in board_ids()
    assert load_board("my-board").name == "Test board"
    assert load_board(str(tmp_path / "my-board.yaml")).id == "my-board"  # a path works too


def test_cli_boards_filters(capsys):
    assert cli.main(["boards", "--isa", "mve"]) == 0
    out = capsys.readouterr().out
    for board_id in ("mps3-an547", "corstone300-fvp", "corstone320-fvp", "alif-e8-hp", "nucleo-n657x0-q"):
        assert board_id in out
    assert "nrf52840dk" not in out and "mps2-an385" not in out

    assert cli.main(["boards", "--core", "cortex-m33", "--qemu"]) == 0
    ids = [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:]]
    assert ids == ["mps2-an505", "mps2-an521"]

    assert cli.main(["boards", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {b["id"] for b in data} == set(board_ids())
    assert next(b for b in data if b["id"] == "nrf52840dk")["core"]["isa"] == "DSP"


def test_cli_boards_show(capsys):
    assert cli.main(["boards", "show", "nucleo-h743zi"]) == 0
    out = capsys.readouterr().out
    assert "cortex-m7 @ 480 MHz, ISA DSP" in out
    assert "0x24000000" in out and "-mfpu=fpv5-d16" in out and "stm32cubeprogrammer" in out
    assert cli.main(["boards", "show", "nucleo-h743"]) == 2
    assert "did you mean nucleo-h743zi" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["m55", "M55", "cm55", "Cortex-M55", "cortex-m55"])
def test_core_names_short_and_long(name):
    from cmx_gen.common.targets import canonical_core

    assert canonical_core(name) == "cortex-m55"


def test_boards_filter_takes_short_core_names_and_refuses_unknown_ones(capsys):
    from conftest import run_cli

    assert run_cli("boards", "--core", "m55") == 0
    assert "mps3-an547" in capsys.readouterr().out
    assert run_cli("boards", "--core", "m99") == 2
    err = capsys.readouterr().err
    assert "no core called 'm99'" in err and "cortex-m55" in err


def test_lower_takes_short_target_names(lowered_dir):
    from conftest import read_report

    assert read_report(lowered_dir("ConvNet", target="m4"))["target"] == {"core": "cortex-m4", "isa": "DSP"}


def test_board_files_are_checked_against_the_zephyr_layout_data_by_the_zephyr_kind(tmp_path):
    """A board whose Zephyr target cmx-gen has layout data for must agree with it (devicetree labels,
    the SoC's core): the Zephyr app kind refuses it before anything slow (app/kinds/zephyr/layout.py);
    the board still loads, and serves bare-metal apps."""
    from cmx_gen.app.kinds.zephyr import ZephyrApp

    zephyr = ZephyrApp()
    an386 = (BOARDS_DIR / "mps2-an386.yaml").read_text()
    typo = load_board_file(write(tmp_path, an386.replace("dt_node: sram0}", "dt_node: sram1}"), "mps2-an386"))
    with pytest.raises(
        BoardError,
        match=r"field memory\[1\]\.dt_node: mps2/an386 has no devicetree node &sram1 \(it has: flash0, sram0\)",
    ):
        zephyr.check_board(typo)
    m7 = load_board_file(write(tmp_path, an386.replace("name: cortex-m4 ", "name: cortex-m7 "), "mps2-an386"))
    with pytest.raises(
        BoardError, match=r"field core.name: cortex-m7 is not the core of Zephyr's mps2/an386 \(CPU_CORTEX_M4\)"
    ):
        zephyr.check_board(m7)
    other = load_board_file(write(tmp_path, an386.replace("target: mps2/an386", "target: mps2/an385"), "mps2-an386"))
    with pytest.raises(BoardError, match="field core.name: cortex-m4 is not the core of Zephyr's mps2/an385"):
        zephyr.check_board(other)
    for board in load_boards():  # every bundled board agrees with the layout data
        if board.zephyr is not None:
            try:
                zephyr.check_board(board)
            except BoardError as exc:
                raise AssertionError(exc.problem) from exc
            except RenderError as exc:  # no layout data for its target: refused as such, not as a disagreement
                assert "no Zephyr layout data" in exc.problem


def test_an_app_on_a_board_file_finds_it_again_from_anywhere(tmp_path, monkeypatch, capsys):
    """cmx.toml keeps a board file's path relative to itself, like every path in it, and build, run,
    flash and regen find the board through it (model/placement.json holds only the id)."""
    from conftest import ROOT

    (tmp_path / "boards").mkdir()
    an386 = (BOARDS_DIR / "mps2-an386.yaml").read_text().replace("id: mps2-an386", "id: my-an386")
    (tmp_path / "boards" / "my-an386.yaml").write_text(an386)
    monkeypatch.chdir(tmp_path)
    digits = ROOT / "samples" / "digits" / "model.py:DigitsCNN"
    assert cli.main(["create", str(digits), "--board", "boards/my-an386.yaml", "-o", "app"]) == 0
    assert 'board = "../boards/my-an386.yaml"' in (tmp_path / "app" / "cmx.toml").read_text()
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    capsys.readouterr()
    assert cli.main(["run", "../app", "--dry-run"]) == 0
    assert "qemu-system-arm -M mps2-an386 " in capsys.readouterr().out
    assert cli.main(["regen", "../app"]) == 0
