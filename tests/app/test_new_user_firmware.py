"""A new user's first steps, as issue 55 found them: `cmx-gen create model.py:Net -o app` run in the
folder that holds model.py (the project is then named `cmx_app`), built and run. Needs the firmware
SDK (EXECUTORCH_ROOT, CMSIS_NN_PATH) and qemu-system-arm."""

from __future__ import annotations

import os

from conftest import FIRMWARE, run_cli

pytestmark = FIRMWARE

MODEL = """
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 6 * 6, 3)

    def forward(self, x):
        return self.fc(self.conv(x).relu().flatten(1))

    @staticmethod
    def example_inputs():
        return (torch.rand(1, 1, 6, 6),)
"""


def test_create_build_run_in_the_models_own_folder(tmp_path, capsys, monkeypatch):
    (tmp_path / "model.py").write_text(MODEL)
    monkeypatch.chdir(tmp_path)
    assert run_cli("create", "model.py:Net", "--board", "mps2-an386", "--random-calibration", "-o", "app") == 0
    assert 'name = "cmx_app"' in (tmp_path / "app" / "cmx.toml").read_text()
    assert run_cli("build", "app") == 0
    assert sorted(p.name for p in (tmp_path / "app" / "build").glob("*.elf")) == ["cmx_app.elf", "cmx_app_app.elf"]
    capsys.readouterr()
    assert run_cli("run", "app") == 0
    assert capsys.readouterr().out.startswith("cmx-gen: PASS max_abs_err=0 "), os.getcwd()
