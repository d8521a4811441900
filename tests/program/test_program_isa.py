"""A program lowered elsewhere for one ISA, given a board of another (issue 53): upstream lowers
cortex_m::quantized_linear with a kernel sum in place of the bias for MVE only, and each CMSIS-NN path
reads just its own. An MVE .bpte on a Cortex-M4 FAILed by 4e-2 (every bias dropped); it and the
reverse are refused at create, one line, exit 2. Host only: no firmware is built."""

from __future__ import annotations

import pytest
from conftest import run_cli
from toy_models.upstream_flow import digits_program


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("upstream isa")
    paths = {}
    for target in ("cortex-m55", "cortex-m4"):
        program = digits_program(target)
        paths[target] = folder / f"digits_{target}.bpte"
        paths[target].write_bytes(program.bpte)
        (folder / f"digits_{target}.pte").write_bytes(program.pte)
    return paths


@pytest.mark.parametrize(
    "lowered_for, board, says",
    [
        ("cortex-m55", "mps2-an386", "lowered for an MVE core and the target is cortex-m4 (DSP)"),
        ("cortex-m4", "mps3-an547", "lowered for a core without MVE and the target is cortex-m55 (MVE)"),
    ],
)
@pytest.mark.parametrize("kind", ["bpte", "pte"])
def test_a_program_of_another_isa_is_refused(programs, tmp_path, capsys, lowered_for, board, says, kind):
    program = programs[lowered_for].with_suffix(f".{kind}")
    app = tmp_path / "app"
    assert run_cli("create", program, "--board", board, "-o", app) == 2
    err = capsys.readouterr().err
    assert says in err and "(fix: lower it again for" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert not app.exists()


def test_a_program_of_the_boards_isa_is_taken(programs, tmp_path, capsys):
    app = tmp_path / "app"
    assert run_cli("create", programs["cortex-m4"], "--board", "mps2-an386", "-o", app) == 0
    assert "checked against the bundle's expected outputs" in capsys.readouterr().out
