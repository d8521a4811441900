"""`cmx-gen run APP --cycles` on a built app (issue 51): the check image under QEMU with cmx-gen's
plugin, `cyc=` on its result line, the same figure every run, and `instr=` what it was without the
plugin. Needs the firmware SDK (EXECUTORCH_ROOT, CMSIS_NN_PATH) and qemu-system-arm."""

from __future__ import annotations

import json
import re

import pytest
from conftest import FIRMWARE, ROOT, run_cli

pytestmark = FIRMWARE

DIGITS = ROOT / "samples" / "digits" / "model.py:DigitsCNN"


@pytest.fixture(scope="module")
def digits_m4(tmp_path_factory):
    app = tmp_path_factory.mktemp("cycles") / "digits m4"
    assert run_cli("create", DIGITS, "--board", "mps2-an386", "-o", app) == 0
    assert run_cli("build", app) == 0
    return app


def test_cycles_on_the_m4_are_repeatable_and_leave_instr_as_it_was(digits_m4, capsys):
    app = digits_m4
    capsys.readouterr()
    assert run_cli("run", app) == 0
    plain = capsys.readouterr().out.splitlines()[0]
    figures = []
    for _ in range(2):
        assert run_cli("run", app, "--cycles") == 0
        lines = capsys.readouterr().out.splitlines()
        assert lines[0] == f"{plain} cyc={lines[0].rsplit('cyc=', 1)[1]}", lines
        assert lines[1].startswith("cycles     ") and "ms at 25 MHz" in lines[1] and "cortex-m4 timings" in lines[1]
        assert lines[2].startswith("where      ")
        figures.append(int(lines[0].rsplit("cyc=", 1)[1]))
    instructions = int(re.search(r"instr=(\d+)", plain).group(1))
    assert figures[0] == figures[1] and instructions < figures[0] < 3 * instructions
    print(f"\ndigits on the M4: instr={instructions:,} cyc={figures[0]:,}")


def test_cycles_as_the_mlperf_board_add_its_flash_waits(digits_m4, capsys):
    """--cycles-as nucleo-l4r5zi: the same run, priced at 120 MHz with its flash's 5 wait states on each
    line its accelerator misses (the weights and the code are read from flash0 on both boards); a board
    of another core is one line, exit 2."""
    capsys.readouterr()
    assert run_cli("run", digits_m4, "--cycles") == 0
    plain = capsys.readouterr().out.splitlines()
    assert run_cli("run", digits_m4, "--cycles-as", "nucleo-l4r5zi") == 0
    lines = capsys.readouterr().out.splitlines()
    cycles = [int(line.rsplit("cyc=", 1)[1]) for line in (plain[0], lines[0])]
    waits = int(re.search(r"the memories' waits ([\d,]+)", lines[1]).group(1).replace(",", ""))
    missed = re.search(r"flash0's accelerator missed ([\d,]+) data lines", lines[1])
    assert "ms at 120 MHz" in lines[1] and "at nucleo-l4r5zi's clock" in lines[1] and missed, lines[1]
    assert cycles[1] == cycles[0] + waits and waits >= 5 * int(missed.group(1).replace(",", "")) > 0
    assert run_cli("run", digits_m4, "--cycles-as", "mps3-an547") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--cycles-as prices the same core" in err[0]
    print(f"\ndigits on the M4: cyc={cycles[0]:,}, as on the NUCLEO-L4R5ZI {cycles[1]:,}")


def test_cycles_on_a_core_without_a_table_is_one_line(tmp_path, capsys):
    app = tmp_path / "digits m7"
    assert run_cli("create", DIGITS, "--board", "mps2-an500", "-o", app) == 0
    capsys.readouterr()
    assert run_cli("run", app, "--cycles") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no cycle timings for cortex-m7 yet" in err[0]


def test_cycles_on_the_m55_price_helium_by_its_pipes(tmp_path, capsys):
    """The M55's pipelined table (issue.py): Helium read as Helium (objdump -m armv8.1-m.main), every
    mnemonic priced by a class, the same figure every run."""
    app = tmp_path / "digits m55"
    assert run_cli("create", DIGITS, "--board", "mps3-an547", "-o", app) == 0
    assert run_cli("build", app) == 0
    figures = []
    for _ in range(2):
        capsys.readouterr()
        assert run_cli("run", app, "--cycles") == 0
        lines = capsys.readouterr().out.splitlines()
        assert "cortex-m55 timings" in lines[1] and "priced at 1 cycle without a class" not in lines[1], lines[1]
        figures.append(int(lines[0].rsplit("cyc=", 1)[1]))
    instructions = int(re.search(r"instr=(\d+)", lines[0]).group(1))
    assert figures[0] == figures[1] and instructions / 2 < figures[0] < 3 * instructions
    print(f"\ndigits on the M55: instr={instructions:,} cyc={figures[0]:,}")


def test_the_profile_on_the_m4_has_a_cycles_column_that_adds_up(digits_m4, capsys, tmp_path):
    capsys.readouterr()
    assert run_cli("run", digits_m4, "--profile", "--json", tmp_path / "profile.json") == 0
    out = capsys.readouterr().out
    data = json.loads((tmp_path / "profile.json").read_text())
    rows, cycles = data["rows"], data["cycles"]
    layers = [row for row in rows if row["layer"] is not None]
    assert layers and all(row["cycles"] >= row["count"] > 0 for row in layers)  # the M4 retires <= 1 a cycle
    # the rows' cycles add up to the marked segments; what is outside them (Method::execute's own
    # work, the edges) is a few per cent at most
    assert cycles["sum"] == sum(row["cycles"] for row in rows)
    assert 0.95 * cycles["estimated"] < cycles["sum"] <= cycles["estimated"]
    assert "ms at 25 MHz" in cycles["assumes"] and "cortex-m4 timings" in cycles["assumes"]
    header = next(line for line in out.splitlines() if "operator" in line)
    assert header.index("cycles") < header.index("instr")  # cycles first
    assert "by kind    (cycles) " in out and f"of {cycles['estimated']:,} cycles (estimated)" in out
    html = (digits_m4 / "report.html").read_text()
    assert f"{cycles['estimated']:,} cycles (estimated" in html
    print(f"\ndigits profile on the M4: {cycles['estimated']:,} cycles, rows {cycles['sum']:,}")
