"""cmx-gen's CMSIS-NN backend on the target: delegated and per-operator programs both PASS bit-exact,
and a plan made for another core or plan version is refused at init with a named status.

Needs the firmware SDK (EXECUTORCH_ROOT, CMSIS_NN_PATH) and qemu-system-arm; skipped, saying why,
without them."""

from __future__ import annotations

import struct

import pytest
from conftest import FIRMWARE, ROOT

from cmx_gen.app import project as project_mod
from cmx_gen.app.kinds.baremetal import build
from cmx_gen.device.runners import QemuRunner
from cmx_gen.fit.boards import load_board
from cmx_gen.lower.delegate import plan as plan_mod
from cmx_gen.pipeline.generate import generate
from cmx_gen.program import pte

pytestmark = FIRMWARE

DIGITS = ROOT / "samples" / "digits" / "model.py:DigitsCNN"


def _app(tmp_path, board: str, delegate: bool = True):
    app = tmp_path / "app"
    generate(project_mod.Project.single(model=str(DIGITS), board=board, output=str(app), delegate=delegate), app)
    return app


def _run(app, board: str):
    built = build.build(app, jobs=2)
    return QemuRunner(load_board(board), timeout=300).run(built.elf)


@pytest.mark.parametrize("board", ["mps3-an547", "mps2-an386"])
def test_delegated_and_per_operator_programs_both_pass(tmp_path, board):
    lines = {}
    for delegate in (True, False):
        app = _app(tmp_path / str(delegate), board, delegate)
        delegates = pte.forward_plan(pte.read((app / "model" / "model.pte").read_bytes())).delegates
        assert bool(delegates) is delegate
        result = _run(app, board)
        assert result.passed and result.fields["max_abs_err"] == "0", result.output[-1500:]
        lines[delegate] = result
    used_delegated, _ = lines[True].pool("method")
    used_per_op, _ = lines[False].pool("method")
    assert used_delegated * 4 < used_per_op, "the plan replaces the per-operator EValues and argument lists"
    assert lines[True].count[1] < lines[False].count[1], "the delegate runs fewer instructions"
    print(f"\n{board}: delegated {lines[True].line}\n{board}: per operator {lines[False].line}")


def test_staged_weights_pass_on_the_m4(tmp_path):
    """stage_weights = "yes" (cmx_conv_row_s8 wide 2): a 3x3 layer over 144 positions, which reads
    int16 weights by default, keeps int8 ones in the program and widens them into its scratch at each
    call; bit-exact on QEMU's M4, the program smaller by the int16 copy."""
    board = "mps2-an386"
    apps = {}
    for staged in ("yes", "no"):
        app = tmp_path / staged
        project = project_mod.Project.single(
            model=f"{ROOT}/tests/toy_models/small.py:Plain",
            input_shape="1,3,12,12",
            random_calibration=True,
            io="int8",
            board=board,
            output=str(app),
            stage_weights=staged,
        )
        generate(project, app)
        apps[staged] = app
    result = _run(apps["yes"], board)
    assert result.passed and result.fields["max_abs_err"] == "0", result.output[-1500:]
    sizes = {k: len((app / "model" / "model.pte").read_bytes()) for k, app in apps.items()}
    assert sizes["yes"] < sizes["no"], sizes
    print(f"\n{board}, weights staged: {result.line} (program {sizes['yes']:,} B against {sizes['no']:,} B)")


def _patch_plan(app, offset: int, value: bytes) -> None:
    """Overwrite bytes of the (one) plan inside the app's embedded program."""
    path = app / "model" / "model.pte"
    data = bytearray(path.read_bytes())
    blob = pte.delegate_plans(pte.read(bytes(data)))[0]
    at = bytes(data).index(blob)
    data[at + offset : at + offset + len(value)] = value
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("what", ["core", "version"])
def test_a_plan_for_another_core_or_version_is_refused_at_init(tmp_path, what):
    app = _app(tmp_path, "mps3-an547")
    if what == "core":
        _patch_plan(app, 8, b"cortex-m4".ljust(plan_mod.CORE_BYTES, b"\0"))
    else:
        _patch_plan(app, 4, struct.pack("<I", plan_mod.VERSION + 1))
    result = _run(app, "mps3-an547")
    assert not result.passed
    assert "cmx-gen: FAIL error=plan:0x30" in result.output, result.output[-1500:]
    expected = "plan made for cortex-m4" if what == "core" else f"plan version {plan_mod.VERSION + 1}"
    assert expected in result.output, "the console names what does not match"


def test_a_delegated_pte_passes_against_its_plans_run_on_the_host(tmp_path):
    """A .pte lowered earlier (`cmx-gen lower`), made into an app on its own: the reference is its
    plan run on the host, cmx-gen's backend layers included (host_run.py), and the target matches it."""
    from conftest import run_cli

    assert run_cli("lower", str(DIGITS), "--target", "cortex-m55", "-o", tmp_path / "lowered") == 0
    app = tmp_path / "app"
    assert run_cli("create", tmp_path / "lowered" / "model.pte", "--board", "mps3-an547", "-o", app) == 0
    assert pte.forward_plan(pte.read((app / "model" / "model.pte").read_bytes())).delegates
    result = _run(app, "mps3-an547")
    assert result.passed and result.fields["max_abs_err"] == "0", result.output[-1500:]
