"""Models as users write them (issue 53), built and run on QEMU: each PASSes bit-exact by default.

Needs the firmware SDK (EXECUTORCH_ROOT, CMSIS_NN_PATH) and qemu-system-arm; skipped, saying why,
without them."""

from __future__ import annotations

import pytest

from conftest import FIRMWARE, ROOT
from cmx_gen.app import project as project_mod
from cmx_gen.app.kinds.baremetal import build
from cmx_gen.device.runners import QemuRunner
from cmx_gen.fit.boards import load_board
from cmx_gen.pipeline.generate import generate

pytestmark = FIRMWARE

USER = ROOT / "tests" / "toy_models" / "user_models.py"


@pytest.mark.parametrize("board", ["mps3-an547", "mps2-an386"])
def test_a_unet_with_upsample_and_a_concat_skip_passes_on_the_target(tmp_path, board):
    app = tmp_path / "app"
    generate(project_mod.Project.single(model=f"{USER}:TinyUNet", board=board, output=str(app)), app)
    built = build.build(app, jobs=2)
    result = QemuRunner(load_board(board), timeout=300).run(built.elf)
    assert result.passed and result.fields["max_abs_err"] == "0", result.output[-1500:]
    print(f"\n{board}: {result.line}")
