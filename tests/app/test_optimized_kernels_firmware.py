"""A float program from upstream's own flow runs (issue 36): ExecuTorch's aot_arm_compiler with
--target=cortex-m55 and no --quantize makes a program with aten::linear.out, which only ExecuTorch's
optimized library has a kernel for (kernels/optimized/cpu/op_linear.cpp); cmx-gen links it and the
app runs on QEMU M55.

Needs the firmware SDK (EXECUTORCH_ROOT, CMSIS_NN_PATH; see `cmx-gen sdk`), whose sources hold the
upstream script, and qemu-system-arm. Without them the test is skipped and says why.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import FIRMWARE, run_cli

from cmx_gen.program.pte import operator_names

pytestmark = FIRMWARE


def test_upstreams_float_linear_program_runs_on_qemu_m55(tmp_path: Path, capsys) -> None:
    script = Path(os.environ["EXECUTORCH_ROOT"]) / "backends" / "arm" / "scripts" / "aot_arm_compiler.py"
    pte = tmp_path / "qlinear_f32.pte"
    made = subprocess.run(
        [sys.executable, str(script), "-m", "qlinear", "--target", "cortex-m55", "--output", str(pte)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert made.returncode == 0 and pte.is_file(), made.stderr[-3000:]
    assert "aten::linear.out" in operator_names(pte.read_bytes()), "upstream's float flow keeps aten::linear"

    app = tmp_path / "app"
    assert run_cli("create", pte, "--board", "mps3-an547", "-o", app) == 0, capsys.readouterr().err[-2000:]
    assert 'set(CMX_OPTIMIZED_OPS "linear")' in (app / "model" / "cmx_ops.cmake").read_text()
    assert run_cli("build", app) == 0, capsys.readouterr().err[-3000:]
    capsys.readouterr()
    assert run_cli("run", app) == 0
    out = capsys.readouterr().out
    # The host computes the float linear with torch: the line is PASS when the bytes agree, RAN only
    # without a reference; never FAIL or a hang.
    assert "cmx-gen: PASS" in out or "cmx-gen: RAN" in out, out[-2000:]
    assert "a float program" in (app / "model" / "report.json").read_text()
