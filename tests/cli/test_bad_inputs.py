"""Bad input is one line naming the problem and the fix, exit 2: never a traceback, a usage block,
torch's graph dump, or an "internal error". Each case runs the real CLI with real lowering."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest
import torch
from conftest import SMALL, plan_matches_the_reference, run_cli, second_bmm_line


def one_line(capsys) -> str:
    err = capsys.readouterr().err
    errors = ("cmx-gen: error", "cmx-gen: internal error")
    lines = [line for line in err.splitlines() if not line.startswith("cmx-gen: ") or line.startswith(errors)]
    assert len(lines) == 1, f"expected one error line, got:\n{err}"
    (line,) = lines
    assert line.startswith("cmx-gen: error: ") and "(fix: " in line and "internal error" not in line
    assert "Traceback" not in err
    return line


def without_own_bmm(monkeypatch) -> None:
    """Attention's bmm on upstream's cortex_m path again, where ReplaceScalarWithTensorArgPass fails
    on the second one (cmx-gen's own cmx::bmm, own_ops.py, now takes every bmm)."""
    from cmx_gen.lower.ops import own_ops
    from cmx_gen.lower.rewrites import exact_rewrites

    kept = tuple(r for r in exact_rewrites.REWRITES if r is not own_ops.as_own_op)
    monkeypatch.setattr(exact_rewrites, "REWRITES", kept)


def test_failing_cortex_m_pass_makes_a_float_island_strict_refuses_it_and_keep_fp32_works(
    tmp_path, capsys, monkeypatch
):
    """Upstream's ReplaceScalarWithTensorArgPass fails on the attention's second bmm: cmx-gen leaves
    that bmm in float and lowers the rest as usual, naming the island, the pass and the user's line
    in the output, report.json and report.md; --strict refuses it with the same facts."""
    where, attention = second_bmm_line(), SMALL
    args = ("lower", f"{attention}:Attention", "--input-shape", "1,8,16", "--random-calibration")
    assert run_cli(*args, "-o", tmp_path / "own") == 0
    report = __import__("json").loads((tmp_path / "own" / "report.json").read_text())
    assert report["float_parts"] == [] and report["fallbacks"] == [], "cmx-gen's own bmm: all int8"
    assert [op["name"] for op in report["operators"]].count("cmx::bmm") == 1, "both bmms in one delegate kind"
    capsys.readouterr()

    without_own_bmm(monkeypatch)
    assert run_cli(*args, "-o", tmp_path / "a") == 0
    captured = capsys.readouterr()
    assert f"bmm_1 ({where} " in captured.err and "stays in float" in captured.err
    island_line = next(line for line in captured.out.splitlines() if "left in float by cmx-gen" in line)
    assert island_line.startswith("float      aten::bmm (Attention, " + where)
    assert "cortex_m pass ReplaceScalarWithTensorArgPass failed on it: RuntimeError" in island_line
    report = __import__("json").loads((tmp_path / "a" / "report.json").read_text())
    (island,) = [part for part in report["float_parts"] if part["why"] == "island"]
    assert island["ops"] == ["aten::bmm"] and island["source"].startswith(where)
    assert "aten::bmm.out" in report["fallbacks"]
    assert "cortex_m::quantized_batch_matmul.out" in {op["name"] for op in report["operators"]}, "the first bmm: int8"
    assert "## Float parts" in (tmp_path / "a" / "report.md").read_text()

    assert run_cli(*args, "--strict", "-o", tmp_path / "strict") == 4  # StrictError's exit status
    (line,) = [line for line in capsys.readouterr().err.splitlines() if line.startswith("cmx-gen: error")]
    assert f"aten::bmm ({where} " in line and "was left in float by cmx-gen" in line
    assert "ReplaceScalarWithTensorArgPass failed on it" in line and "drop --strict" in line

    out = tmp_path / "b"
    assert (
        run_cli(
            "lower",
            f"{attention}:Attention",
            "--input-shape",
            "1,8,16",
            "--random-calibration",
            "--keep-fp32",
            where,
            "-o",
            out,
        )
        == 0
    )
    report = __import__("json").loads((out / "report.json").read_text())
    assert report["lowering_options"] == {
        "keep_fp32": [where],
        "io": "float",
        "delegate": True,
        "memory": "balanced",
        "input_memory": "pool",
        "stage_weights": False,
        "weights": "int8",
        "weights_for": [],
        "sqnr_target": None,
        "precision": "int8",
        "precision_for": [],
        "per_channel_linear": False,
    }
    assert "aten::bmm.out" in report["fallbacks"]
    assert "aten::addmm.out" in report["fallbacks"], "float linear becomes addmm: portable has no linear"
    assert "cortex_m::quantized_batch_matmul.out" in {op["name"] for op in report["operators"]}
    kept = [part for part in report["float_parts"] if part["why"] != "no_int8_kernel"]
    assert kept and all(part["why"] == "keep_fp32" and part["reason"] == f"--keep-fp32 {where}" for part in kept)
    assert (
        run_cli(
            "create",
            f"{attention}:Attention",
            "--input-shape",
            "1,8,16",
            "--random-calibration",
            "--keep-fp32",
            where,
            "--board",
            "mps3-an547",
            "-o",
            tmp_path / "app",
        )
        == 0
    )
    from cmx_gen.app import project as project_mod

    assert project_mod.load(tmp_path / "app").models[0].keep_fp32 == (where,), "regen keeps the option"


def test_keep_fp32_naming_nothing(tmp_path, capsys):
    assert (
        run_cli(
            "lower",
            f"{SMALL}:Attention",
            "--input-shape",
            "1,8,16",
            "--random-calibration",
            "--keep-fp32",
            "nothere",
            "-o",
            tmp_path,
        )
        == 2
    )
    line = one_line(capsys)
    assert "--keep-fp32 nothere names no part of the model" in line and "k, out, q, v" in line  # module paths


def test_npz_that_is_not_a_zip(tmp_path, capsys):
    bad = tmp_path / "cal.npz"
    bad.write_text("not a zip")
    assert run_cli("lower", f"{SMALL}:ConvNet", "--calibration", bad, "-o", tmp_path / "o") == 2
    assert f"calibration file {bad} is not a zip of .npy arrays" in one_line(capsys)


def test_huge_input_shape(tmp_path, capsys):
    assert (
        run_cli(
            "lower", f"{SMALL}:ConvNet", "--input-shape", "1,3,100000,100000", "--random-calibration", "-o", tmp_path
        )
        == 2
    )
    assert "is 30,000,000,000 elements" in one_line(capsys)


def test_nan_in_calibration(tmp_path, capsys):
    data = np.random.default_rng(0).random((4, 1, 3, 8, 8), dtype=np.float32)
    data[2, 0, 1, 2, 3] = np.nan
    np.savez(tmp_path / "cal.npz", x=data)
    assert run_cli("lower", f"{SMALL}:ConvNet", "--calibration", tmp_path / "cal.npz", "-o", tmp_path / "o") == 2
    line = one_line(capsys)
    assert "sample 2 (input 0) has 1 NaN/Inf value(s)" in line and "traceable" not in line


@pytest.mark.parametrize("damage", ["truncate", "flip", "zip"])
def test_corrupt_pt2(tmp_path, capsys, damage):
    good = tmp_path / "good.pt2"
    torch.export.save(torch.export.export(torch.nn.Linear(4, 4), (torch.zeros(1, 4),)), str(good))
    data = bytearray(good.read_bytes())
    bad = tmp_path / "bad.pt2"
    if damage == "truncate":
        bad.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        for i in range(2000, len(data), 97):
            data[i] ^= 0x5A
        bad.write_bytes(bytes(data))
    else:
        with zipfile.ZipFile(bad, "w") as archive:
            archive.writestr("a/data.pkl", "garbage")
    assert run_cli("lower", bad, "--random-calibration", "-o", tmp_path / "o") == 2
    assert f"{bad} is not a loadable .pt2" in one_line(capsys)


def test_data_dependent_forward_has_no_graph_dump(tmp_path, capsys):
    assert (
        run_cli("lower", f"{SMALL}:DataDependent", "--input-shape", "1,4", "--random-calibration", "-o", tmp_path) == 2
    )
    line = one_line(capsys)
    assert "torch.export at small.py:" in line and "`if x.sum() > 0:`" in line and "torch.where" in line


def test_output_naming_a_file_fails_before_lowering(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("mine")
    assert run_cli("create", f"{SMALL}:ConvNet", "--board", "mps3-an547", "-o", blocker) == 2
    captured = capsys.readouterr()
    assert f"{blocker} is a file, not a folder" in captured.err
    assert "exporting" not in captured.err, "refused before any slow step"
    assert blocker.read_text() == "mine"


def test_misspelt_choice_is_one_line_with_a_suggestion(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        run_cli("create", f"{SMALL}:ConvNet", "--board", "mps3-an547", "--rtos", "zephry", "-o", tmp_path / "a")
    assert exit_info.value.code == 2
    line = one_line(capsys)
    assert "invalid choice: 'zephry'" in line and "did you mean 'zephyr'?" in line
    assert "usage:" not in line


def test_create_refuses_a_foreign_non_empty_folder(tmp_path, capsys):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me")
    assert run_cli("create", f"{SMALL}:ConvNet", "--board", "mps3-an547", "-o", folder) == 2
    line = one_line(capsys)
    assert "non-empty folder cmx-gen did not create" in line and "notes.txt" in line and "--force" in line
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]


def test_a_pte_makes_an_app_with_a_host_reference(lowered_dir, tmp_path, capsys):
    """create from a .pte: the app runs it on a generated input, checked against its plan run on the
    host (issue 22); --input is refused for a model file; lower/check still analyse a .pte and want its core."""
    pte = lowered_dir("ConvNet", "--no-delegate") / "model.pte"
    capsys.readouterr()
    assert run_cli("create", pte, "--board", "mps3-an547", "-o", tmp_path / "app") == 0
    header = (tmp_path / "app" / "model" / "cmx_model.h").read_text()
    assert "#define CMX_HAS_REFERENCE 1" in header and "#define CMX_NUM_INPUTS 1" in header
    assert run_cli("lower", f"{SMALL}:ConvNet", "--input", pte, "-o", tmp_path / "no") == 2
    assert "--input is for a .pte" in one_line(capsys)
    assert run_cli("lower", pte, "-o", tmp_path / "unknown") == 0
    capsys.readouterr()
    assert run_cli("check", tmp_path / "unknown", "--board", "mps3-an547") == 2
    assert "does not record the core it was lowered for" in one_line(capsys)
    assert run_cli("lower", pte, "--target", "cortex-m55", "-o", tmp_path / "m55") == 0
    assert run_cli("check", tmp_path / "m55", "--board", "mps3-an547") == 0
    # a .pte with cmx-gen's backend inside: the host runs its plans too (lower/delegate/host_run.py)
    delegated = lowered_dir("ConvNet") / "model.pte"
    assert run_cli("create", delegated, "--board", "mps3-an547", "-o", tmp_path / "app2") == 0
    assert "#define CMX_HAS_REFERENCE 1" in (tmp_path / "app2" / "model" / "cmx_model.h").read_text()


def test_program_the_target_would_stop_is_refused_before_build(tmp_path, capsys):
    """A portable kernel on a 1-channel channels-last tensor stops with execute:0x12 on target
    (ExecuTorch serializes the dim order [0, 2, 1, 3]): without the backend, which copies such a tensor
    into the default order for it (one_channel.py), refused at lowering, naming op, line, rule."""
    model = f"{SMALL}:OneChannelFallback"
    args = ("--input-shape", "1,3,8,8", "--random-calibration")
    assert run_cli("lower", model, *args, "-o", tmp_path / "backend") == 0
    plan_matches_the_reference(tmp_path / "backend")
    capsys.readouterr()
    assert run_cli("lower", model, *args, "--no-delegate", "-o", tmp_path / "portable") == 2
    line = one_line(capsys)
    assert "would stop (execute error 0x12) on the target: aten::max_pool2d_with_indices" in line
    assert "dim order [0, 2, 1, 3]" in line and "small.py:" in line


def test_one_channel_input_to_a_pool_stays_nchw(tmp_path):
    """Only a convolution needs a 1-channel input channels-last; a pool gets the user's layout."""
    assert (
        run_cli("lower", f"{SMALL}:OneChannelPool", "--input-shape", "1,1,6,6", "--random-calibration", "-o", tmp_path)
        == 0
    )
    report = __import__("json").loads((tmp_path / "report.json").read_text())
    assert report["inputs"][0]["dim_order"] == [0, 1, 2, 3]


def test_program_the_target_would_compute_wrongly_is_rewritten_or_kept_in_float(tmp_path, capsys, monkeypatch):
    """ConvTranspose2d(stride 2, padding 1) is rewritten exactly and named in the report; the target
    check behind it keeps in float what the rewrite did not reach (here: turned off), and --strict
    refuses that."""
    from cmx_gen.lower.rewrites import exact_rewrites

    args = ("lower", f"{SMALL}:StridedPaddedTransposeConv", "--input-shape", "1,4,4,4", "--random-calibration")
    assert run_cli(*args, "-o", tmp_path / "rewritten") == 0
    printed = capsys.readouterr().out
    assert "rewrite    aten::conv_transpose2d (up, small.py:" in printed and "cropped 1 row(s)" in printed
    report = __import__("json").loads((tmp_path / "rewritten" / "report.json").read_text())
    assert report["rewrites"][0]["what"].startswith("stride [2, 2] with padding [1, 1]")

    monkeypatch.setattr(exact_rewrites, "REWRITES", ())
    assert run_cli(*args, "-o", tmp_path / "island") == 0
    report = __import__("json").loads((tmp_path / "island" / "report.json").read_text())
    (island,) = [part for part in report["float_parts"] if part["why"] == "island"]
    assert "cortex_m::quantized_transpose_conv2d would compute wrong results on it" in island["reason"]
    assert "stride [2, 2] with padding [1, 1]" in island["reason"] and island["source"].startswith("small.py:")
    capsys.readouterr()
    assert run_cli(*args, "--strict", "-o", tmp_path / "refused") == 4
    (line,) = [line for line in capsys.readouterr().err.splitlines() if line.startswith("cmx-gen: error")]
    assert "was left in float by cmx-gen" in line and "cortex_m::quantized_transpose_conv2d would compute wrong" in line


def test_a_slice_the_portable_kernel_would_refuse_is_refused_before_build(tmp_path, capsys):
    assert (
        run_cli("lower", f"{SMALL}:CropAfterConv", "--input-shape", "1,4,8,8", "--random-calibration", "-o", tmp_path)
        == 2
    )
    line = one_line(capsys)
    assert "would stop (execute error 0x12) on the target: aten::slice_copy" in line
    assert "dim orders [[0, 1, 2, 3], [0, 2, 3, 1]]" in line and "fix: crop a contiguous copy" in line
