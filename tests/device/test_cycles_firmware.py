"""`cmx-gen run APP --cycles` on a built app (issue 51): the check image under QEMU with cmx-gen's
plugin, `cyc=` on its result line, the same figure every run, and `instr=` what it was without the
plugin. Needs the firmware SDK (EXECUTORCH_ROOT, CMSIS_NN_PATH) and qemu-system-arm."""

from __future__ import annotations

import re

from conftest import FIRMWARE, ROOT, run_cli

pytestmark = FIRMWARE

DIGITS = ROOT / "samples" / "digits" / "model.py:DigitsCNN"


def test_cycles_on_the_m4_are_repeatable_and_leave_instr_as_it_was(tmp_path, capsys):
    app = tmp_path / "digits m4"
    assert run_cli("create", DIGITS, "--board", "mps2-an386", "-o", app) == 0
    assert run_cli("build", app) == 0
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


def test_cycles_on_a_core_without_a_table_is_one_line(tmp_path, capsys):
    app = tmp_path / "digits m55"
    assert run_cli("create", DIGITS, "--board", "mps3-an547", "-o", app) == 0
    capsys.readouterr()
    assert run_cli("run", app, "--cycles") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no cycle timings for cortex-m55 yet" in err[0]
