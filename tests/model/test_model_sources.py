"""Model sources (.py, .pt2, .pte), calibration formats, and the one-line errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from conftest import ROOT, SMALL, read_report, run_cli


def error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert err, "expected an error message"
    return err[-1]


def test_pt2_with_npz_calibration(tmp_path, capsys):
    import importlib.util

    spec = importlib.util.spec_from_file_location("small_models_pt2", SMALL)
    small = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(small)
    example = small.example_inputs()
    torch.export.save(torch.export.export(small.ConvNet().eval(), example), tmp_path / "convnet.pt2")
    samples = np.stack([s[0].numpy() for s in small.calibration_data()])
    np.savez(tmp_path / "cal.npz", x=samples)
    out = tmp_path / "out"
    assert run_cli("lower", tmp_path / "convnet.pt2", "--calibration", tmp_path / "cal.npz", "-o", out) == 0
    report = read_report(out)
    assert report["model"]["kind"] == "pt2"
    assert report["calibration"]["samples"] == len(samples)
    assert report["fallbacks"] == []


def test_npy_folder_calibration_and_shape_mismatch(tmp_path, capsys):
    folder = tmp_path / "cal"
    folder.mkdir()
    for i in range(4):
        np.save(folder / f"{i}.npy", np.random.default_rng(i).uniform(-1, 1, (1, 16)).astype(np.float32))
    out = tmp_path / "out"
    assert run_cli("lower", f"{SMALL}:Unsupported", "--input-shape", "1,16", "--calibration", folder, "-o", out) == 0
    assert read_report(out)["calibration"]["samples"] == 4

    np.save(tmp_path / "bad.npy", np.zeros((4, 1, 17), dtype=np.float32))
    code = run_cli(
        "lower", f"{SMALL}:Unsupported", "--input-shape", "1,16", "--calibration", tmp_path / "bad.npy", "-o", out
    )
    assert code == 2
    line = error_line(capsys)
    assert "shape (1, 17)" in line and "(1, 16)" in line and "fix:" in line


def test_pt2_without_calibration_asks_for_it(tmp_path, capsys):
    model = torch.nn.Sequential(torch.nn.Linear(4, 4))
    torch.export.save(torch.export.export(model, (torch.zeros(1, 4),)), tmp_path / "m.pt2")
    assert run_cli("lower", tmp_path / "m.pt2", "-o", tmp_path / "out") == 2
    line = error_line(capsys)
    assert "no calibration data" in line and "--random-calibration" in line


def test_pte_is_analysed_only(lowered_dir, tmp_path):
    pte = lowered_dir("ConvNet") / "model.pte"
    out = tmp_path / "analysed"
    assert run_cli("lower", pte, "-o", out) == 0
    report = read_report(out)
    assert report["model"]["kind"] == "pte"
    assert "cmx::conv_helium" in {op["name"] for op in report["operators"]}  # the plan's layers are read from the .pte
    # without its core, the input's quantization (MVE rounds on the exact product) has no host model:
    # only the generated input an app runs it on (issue 22); with it, the plan run gives the outputs
    with np.load(out / "reference.npz") as ref:
        assert sorted(ref.files) == ["input_0"]
    assert report["reference"]["checked_against"] == "none"
    assert "cortex_m::quantize_per_tensor without the target's ISA" in report["reference"]["description"]
    # with the core, the host runs the plan, cmx-gen's backend layers from their plan bytes included
    assert run_cli("lower", pte, "--target", "cortex-m55", "-o", tmp_path / "m55") == 0
    with np.load(tmp_path / "m55" / "reference.npz") as ref, np.load(pte.parent / "reference.npz") as own:
        assert sorted(ref.files) == ["input_0", "output_0"] and ref["output_0"].dtype == own["output_0"].dtype
    assert read_report(tmp_path / "m55")["reference"]["checked_against"] != "none"


@pytest.mark.parametrize(
    "argv,expected",
    [
        (["lower", "missing.py:Net"], "model file missing.py not found"),
        (["lower", f"{SMALL}:NoSuchNet", "--random-calibration"], "has no attribute 'NoSuchNet'"),
        (["lower", f"{SMALL}:ConvNet", "--target", "cortex-m99"], "unknown target 'cortex-m99'"),
        (["lower", f"{SMALL}:DataDependent", "--random-calibration"], "torch.export at small.py:"),
        (
            ["lower", f"{SMALL}:Unsupported", "--input-shape", "1,16"],
            "calibration sample 0 from small.py:calibration_data()",
        ),
        (
            ["lower", f"{SMALL}:AddThenHardswish", "--input-shape", "1,32", "--random-calibration", "--no-delegate"],
            "the lowered program does not run",
        ),
        (["lower", f"{SMALL}:ConvNet", "--input-shape", "1,x"], "is not a shape"),
        (["lower", f"{SMALL}:ConvNet", "--calibration", "nowhere.npz"], "calibration data nowhere.npz not found"),
    ],
)
def test_errors_are_one_line_with_a_fix(argv, expected, tmp_path, capsys):
    code = run_cli(*argv, "-o", tmp_path)
    assert code == 2
    line = error_line(capsys)
    assert line.startswith("cmx-gen: error: ")
    assert expected in line
    assert "(fix: " in line
    assert "Traceback" not in capsys.readouterr().err


def test_wrong_shape_names_the_input(tmp_path, capsys):
    code = run_cli("lower", f"{SMALL}:ConvNet", "--input-shape", "1,5,8,8", "--random-calibration", "-o", tmp_path)
    assert code == 2
    assert "fails on its example inputs" in error_line(capsys)


def test_debug_shows_traceback(tmp_path, capsys):
    code = run_cli("--debug", "lower", "missing.py:Net", "-o", tmp_path)
    assert code == 2
    assert "Traceback" in capsys.readouterr().err


def test_digits_sample_lowers_on_cmsis_nn(tmp_path):
    out = tmp_path / "digits"
    assert run_cli("lower", ROOT / "samples/digits/model.py:DigitsCNN", "--strict", "-o", out) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["fallbacks"] == []
    assert report["quantization_error"]["top1_agreement"] >= 0.95


def test_failing_calibration_hook_is_one_line(tmp_path, capsys):
    (tmp_path / "net.py").write_text(
        "import torch\n"
        "class Net(torch.nn.Linear):\n"
        "    def __init__(self):\n"
        "        super().__init__(4, 4)\n"
        "def example_inputs():\n"
        "    return (torch.zeros(1, 4),)\n"
        "def calibration_data():\n"
        "    raise FileNotFoundError('dataset.npz')\n"
    )
    assert run_cli("lower", f"{tmp_path / 'net.py'}:Net", "-o", tmp_path / "out") == 2
    line = error_line(capsys)
    assert "net.py:calibration_data() failed: FileNotFoundError" in line and "(fix: " in line


def test_unwritable_output_folder_is_one_line(lowered_dir, tmp_path, capsys):
    """An -o path that cannot be created is the user's to fix: one line naming it, no traceback."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    pte = lowered_dir("ConvNet") / "model.pte"
    assert run_cli("lower", pte, "-o", blocker / "out") == 2
    line = error_line(capsys)
    assert line.startswith(f"cmx-gen: error: cannot use {blocker / 'out'}") and "(fix: " in line
    assert "Traceback" not in capsys.readouterr().err


METHOD_HOOKS = """
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)

    def forward(self, x):
        return self.conv(x).relu()

    @staticmethod
    def example_inputs():
        return (torch.rand(1, 3, 8, 8),)

    def calibration_data(self):
        g = torch.Generator().manual_seed(0)
        return [(torch.rand(1, 3, 8, 8, generator=g),) for _ in range(4)]


class Bare(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(5, 4, 3)

    def forward(self, x):
        return self.conv(x)
"""


def test_example_inputs_and_calibration_as_methods_of_the_model(tmp_path, capsys):
    """Issue 55: a static example_inputs() (and a plain calibration_data()) of the class were refused
    ("no example inputs"); with neither, the fix names the channels the first layer takes."""
    (tmp_path / "net.py").write_text(METHOD_HOOKS)
    assert run_cli("lower", f"{tmp_path / 'net.py'}:Net", "-o", tmp_path / "out") == 0
    assert read_report(tmp_path / "out")["calibration"]["samples"] == 4
    capsys.readouterr()
    assert run_cli("lower", f"{tmp_path / 'net.py'}:Bare", "-o", tmp_path / "bare") == 2
    line = error_line(capsys)
    assert "no example inputs" in line and "--input-shape 1,5,H,W" in line and "1,1,49,10" not in line


FILE_DATA_FOR_ANOTHER = """
import torch
from torch import nn


def calibration_data():  # the file's: for Rgb
    return [(torch.rand(1, 3, 8, 8),) for _ in range(4)]


class Rgb(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)

    def forward(self, x):
        return self.conv(x)


class Grey(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)

    def forward(self, x):
        return self.conv(x)

    @staticmethod
    def example_inputs():
        return (torch.rand(1, 1, 8, 8),)
"""


def test_a_models_own_inputs_beside_the_files_calibration_for_another(tmp_path, capsys):
    """A model with example_inputs() of its own and a file whose calibration_data() is another model's: one
    line naming both shapes and the ways out (it was a bare shape mismatch, met with TinyMlpMixer)."""
    (tmp_path / "two.py").write_text(FILE_DATA_FOR_ANOTHER)
    assert run_cli("lower", f"{tmp_path / 'two.py'}:Grey", "-o", tmp_path / "grey") == 2
    line = error_line(capsys)
    assert "[(1, 3, 8, 8)], the model input is [(1, 1, 8, 8)]" in line, line
    assert "the file's beside Grey's own example_inputs()" in line and "--random-calibration" in line, line
    assert run_cli("lower", f"{tmp_path / 'two.py'}:Grey", "--random-calibration", "-o", tmp_path / "r") == 0
