"""Programs lowered elsewhere (issue 22): a `.bpte` and a `.pte` made by upstream's own Python flow
(CortexMQuantizer -> to_edge -> CortexMPassManager -> to_executorch, BundledProgram for the
`.bpte`), made here in the test, not with cmx-gen's lowering. On QEMU M55: the `.bpte` app PASSes
against the bundle's expected outputs; the `.pte` app PASSes bit-exact against its own plan run on
the host (plan_reference.py); a `.pte` with a call no host model computes (int8 nearest upsampling:
torch has no int8 kernel for it) has no reference, says RAN with its instruction count, and exits 0.

Needs the firmware SDK (EXECUTORCH_ROOT, CMSIS_NN_PATH) and qemu-system-arm.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import FIRMWARE, ROOT, run_cli

pytestmark = FIRMWARE


@pytest.fixture(scope="module")
def upstream_programs(tmp_path_factory) -> tuple[Path, Path, Path]:
    import torch
    from executorch.exir import to_edge
    from toy_models.upstream_flow import digits_program

    folder = tmp_path_factory.mktemp("upstream")
    pte, bpte = folder / "digits.pte", folder / "digits.bpte"
    program = digits_program("cortex-m55")
    pte.write_bytes(program.pte)
    bpte.write_bytes(program.bpte)

    class UpsampleInt8(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.interpolate(x, scale_factor=2.0, mode="nearest")

    int8 = (torch.randint(-100, 100, (1, 2, 3, 3), dtype=torch.int8),)
    unmodelled = folder / "upsample_int8.pte"
    unmodelled.write_bytes(to_edge(torch.export.export(UpsampleInt8(), int8)).to_executorch().buffer)
    return pte, bpte, unmodelled


def build_and_run(app: Path, capsys) -> str:
    """`cmx-gen build` then `run` on the app: what run printed."""
    assert run_cli("build", app) == 0
    capsys.readouterr()
    assert run_cli("run", app) == 0
    return capsys.readouterr().out


def test_bpte_passes_against_its_bundle(upstream_programs, tmp_path, capsys):
    app = tmp_path / "bundle app"
    assert run_cli("create", upstream_programs[1], "--board", "mps3-an547", "-o", app) == 0
    out = build_and_run(app, capsys)
    assert out.startswith("cmx-gen: PASS max_abs_err=") and " tol=" in out, out
    assert "checked against the bundle's expected outputs" in out
    # a data run needs the model a host reference comes from: one line, not a traceback
    import numpy as np

    np.savez(tmp_path / "x.npz", input=np.zeros((2, 1, 8, 8), np.float32))
    assert run_cli("run", app, "--data", tmp_path / "x.npz") == 2
    assert "made from a .bpte" in capsys.readouterr().err


def test_pte_passes_bit_exact_against_its_plan_run_on_the_host(upstream_programs, tmp_path, capsys):
    """On an input of the user's (--input: a real digit), after one of the wrong shape is refused."""
    import numpy as np

    sys.path.insert(0, str(ROOT / "samples" / "digits"))
    try:
        from model import example_inputs
    finally:
        sys.path.pop(0)
    app = tmp_path / "pte app"
    np.save(tmp_path / "wrong.npy", np.zeros((1, 8, 8), np.float32))
    assert (
        run_cli("create", upstream_programs[0], "--board", "mps3-an547", "--input", tmp_path / "wrong.npy", "-o", app)
        == 2
    )
    assert "--input array 0 has shape [1, 8, 8], the program's input 0 is [1, 1, 8, 8]" in capsys.readouterr().err
    np.save(tmp_path / "digit.npy", example_inputs()[0].numpy())
    assert (
        run_cli("create", upstream_programs[0], "--board", "mps3-an547", "--input", tmp_path / "digit.npy", "-o", app)
        == 0
    )
    assert (app / "cmx.toml").read_text().count('input = "') == 1
    assert "reference  the program's own plan run on the host" in capsys.readouterr().out
    out = build_and_run(app, capsys)
    assert out.startswith("cmx-gen: PASS max_abs_err=0 instr="), out


def test_pte_without_a_host_model_runs_without_a_reference_and_says_so(upstream_programs, tmp_path, capsys):
    app = tmp_path / "pte app"
    assert run_cli("create", upstream_programs[2], "--board", "mps3-an547", "-o", app) == 0
    assert "no host model computes aten::upsample_nearest2d" in capsys.readouterr().out
    out = build_and_run(app, capsys)
    assert out.startswith("cmx-gen: RAN reference=none instr="), out
    assert "PASS" not in out.splitlines()[0] and "nothing was compared" in out


def test_bpte_lowered_for_the_m4_passes_on_the_m4(tmp_path, capsys):
    """Issue 53: an upstream .bpte for cortex-m55 FAILed on the M4 by 4e-2 (now refused at create,
    test_program_isa.py); the same model lowered for cortex-m4 PASSes there."""
    from toy_models.upstream_flow import digits_program

    bpte = tmp_path / "digits_m4.bpte"
    bpte.write_bytes(digits_program("cortex-m4").bpte)
    app = tmp_path / "m4 bundle app"
    assert run_cli("create", bpte, "--board", "mps2-an386", "-o", app) == 0
    out = build_and_run(app, capsys)
    assert out.startswith("cmx-gen: PASS max_abs_err=") and " tol=" in out, out
