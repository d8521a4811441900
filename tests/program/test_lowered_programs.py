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
    from executorch.backends.cortex_m.edge_compile_config import cortex_m_edge_compile_config
    from executorch.backends.cortex_m.passes.cortex_m_pass_manager import CortexMPassManager
    from executorch.backends.cortex_m.quantizer.quantizer import CortexMQuantizer
    from executorch.backends.cortex_m.target_config import CortexMTargetConfig
    from executorch.devtools import BundledProgram
    from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
    from executorch.devtools.bundled_program.serialize import serialize_from_bundled_program_to_flatbuffer
    from executorch.exir import EdgeProgramManager, to_edge
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    sys.path.insert(0, str(ROOT / "samples" / "digits"))
    try:
        from model import DigitsCNN, calibration_data, example_inputs
    finally:
        sys.path.pop(0)
    folder = tmp_path_factory.mktemp("upstream")
    example = example_inputs()
    graph = torch.export.export(DigitsCNN().eval(), example).module(check_guards=False)
    prepared = prepare_pt2e(graph, CortexMQuantizer())
    for sample in calibration_data():
        prepared(*sample)
    edge = to_edge(torch.export.export(convert_pt2e(prepared), example), compile_config=cortex_m_edge_compile_config())
    config = CortexMTargetConfig.from_target_string("cortex-m55")
    lowered = CortexMPassManager(edge.exported_program(), target_config=config).transform()
    expected = lowered.module()(*example)
    program = EdgeProgramManager(lowered, compile_config=cortex_m_edge_compile_config()).to_executorch()
    pte, bpte = folder / "digits.pte", folder / "digits.bpte"
    pte.write_bytes(program.buffer)
    suite = MethodTestSuite("forward", [MethodTestCase(inputs=list(example), expected_outputs=[expected])])
    bpte.write_bytes(serialize_from_bundled_program_to_flatbuffer(BundledProgram(program, [suite])))

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
