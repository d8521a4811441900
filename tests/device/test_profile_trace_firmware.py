"""`cmx-gen run --profile / --trace` on QEMU: per-operator counts that add up to the inference, and
the first operator whose output differs when one weight byte of the embedded program is corrupted.

Needs the firmware SDK (EXECUTORCH_ROOT, CMSIS_NN_PATH) and qemu-system-arm; skipped, saying so,
without them.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import FIRMWARE, ROOT, run_cli

from cmx_gen.app import project as project_mod
from cmx_gen.app.kinds.baremetal import build
from cmx_gen.pipeline.generate import generate

pytestmark = FIRMWARE

DIGITS = ROOT / "samples" / "digits" / "model.py:DigitsCNN"
DS_CNN = ROOT / "samples" / "ds_cnn" / "model.py:DSCNN"


def make_app(model: Path, board: str, folder: Path, delegate: bool = True) -> Path:
    app = folder / "app"
    generate(
        project_mod.Project.single(model=str(model), board=board, rtos="baremetal", output=str(app), delegate=delegate),
        app,
    )
    return app


@pytest.mark.parametrize("model", [DIGITS, pytest.param(DS_CNN, marks=pytest.mark.slow)], ids=["digits", "ds_cnn"])
@pytest.mark.parametrize("board", ["mps3-an547", "mps2-an386"])
def test_profile_rows_add_up_to_the_inference(tmp_path, capsys, model, board):
    app = make_app(model, board, tmp_path)
    report = json.loads((app / "model" / "report.json").read_text())
    assert run_cli("run", app, "--profile", "--json", tmp_path / "profile.json") == 0
    out = capsys.readouterr().out
    profile = json.loads((tmp_path / "profile.json").read_text())
    rows = profile["rows"]
    assert sorted({r["index"] for r in rows}) == list(range(report["program"]["instructions"]))
    assert all(r["count"] > 0 for r in rows), "every instruction and every backend layer ran and was counted"
    layers = [r for r in rows if r["op"].startswith("cmx ") and "::" in r["op"]]
    assert len(layers) == len(report["delegated_layers"]) > 0, "one row per layer inside cmx-gen's backend"
    assert all(r["module"] for r in rows if r["op"] != "cmx backend (loop)"), "rows are named with their module"
    assert abs(profile["sum"] - profile["total"]) <= 0.02 * profile["total"], profile
    assert profile["counter"] == "instr"
    kinds = [k["kind"] for k in profile["by_kind"]]
    # both models spend most in convolutions; a backend layer's kind is the function it calls
    assert "conv" in kinds[0] and kinds[0].endswith(("(CMSIS-NN)", "(cmx-gen)")), kinds
    assert "sum" in out and "by kind" in out and "conv" in out
    print(
        f"\n{model.name} {board}: sum {profile['sum']} of {profile['total']} instr "
        f"({100 * profile['sum'] / profile['total']:.2f} %)\n{out}"
    )


def _constant_offset(pte: bytes, instruction: int) -> tuple[int, int]:
    """(file offset, bytes) of the first constant tensor (a weight) instruction `instruction` reads,
    found by its bytes (deserializing inlines the constant segment)."""
    from cmx_gen.program.pte import forward_plan, read

    program = read(pte)
    plan = forward_plan(program)
    call = plan.chains[0].instructions[instruction].instr_args
    for arg in call.args:
        tensor = plan.values[arg].val
        if getattr(tensor, "data_buffer_idx", 0) > 0 and getattr(tensor, "allocation_info", None) is None:
            data = bytes(program.constant_buffer[tensor.data_buffer_idx].storage)
            assert len(data) >= 64 and pte.count(data) == 1, "the weight's bytes must be found exactly once"
            return pte.index(data), len(data)
    raise AssertionError(f"instruction {instruction} reads no constant")


def test_trace_names_the_operator_a_corrupted_weight_breaks(tmp_path, capsys):
    """The per-operator program (delegate = false): instruction by instruction."""
    app = make_app(DIGITS, "mps3-an547", tmp_path, delegate=False)
    assert run_cli("run", app, "--trace") == 0
    assert "trace: all 9 traced instructions match the host bit for bit" in capsys.readouterr().out
    # One byte of conv2's weights (instruction #2), changed in the embedded program itself.
    report = json.loads((app / "model" / "report.json").read_text())
    conv2 = report["instructions"][2]
    assert conv2["op"] == "cortex_m::quantized_conv2d.out" and conv2["module"] == "conv2"
    pte = bytearray((app / "model" / "model.pte").read_bytes())
    offset, count = _constant_offset(bytes(pte), 2)
    pte[offset + count // 2] ^= 0x40
    (app / "model" / "model.pte").write_bytes(bytes(pte))
    assert run_cli("run", app, "--trace") == 1
    out = capsys.readouterr().out
    assert "cmx-gen: FAIL" in out
    assert "trace: first difference at instruction #2 cortex_m::quantized_conv2d.out (conv2, model.py:" in out, out
    print(f"\n{out}")
    # a plain run's FAIL names it too: the trace image is run by itself
    assert run_cli("build", app) == 0
    capsys.readouterr()
    assert run_cli("run", app) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("cmx-gen: FAIL max_abs_err="), out
    assert out[1].startswith("trace: first difference at instruction #2 cortex_m::quantized_conv2d.out (conv2,"), out


def test_trace_names_the_backend_layer_a_corrupted_weight_breaks(tmp_path, capsys):
    """The delegated program: cmx-gen's backend streams each layer's output; a weight byte changed
    inside the plan is found at its layer."""
    from cmx_gen.lower.delegate.plan import read_layers
    from cmx_gen.program import pte as pte_mod

    app = make_app(DIGITS, "mps3-an547", tmp_path)
    report = json.loads((app / "model" / "report.json").read_text())
    layers = report["delegated_layers"]
    assert run_cli("run", app, "--trace") == 0
    out = capsys.readouterr().out
    assert f"trace: all {2 + len(layers)} traced outputs (2 instructions, {len(layers)} backend layers) match" in out, (
        out
    )
    assert layers[1]["module"] == "conv2" and layers[1]["op"] == "cortex_m::quantized_conv2d"
    pte = bytearray((app / "model" / "model.pte").read_bytes())
    blob = pte_mod.delegate_plans(pte_mod.read(bytes(pte)))[0]
    kind, fields = read_layers(blob)[1]
    assert kind == "conv_helium"  # its weights laid out four channels' 16 columns side by side
    weight = bytes(pte).index(blob) + fields["weight"]
    for at in range(weight, weight + 64):  # one byte can vanish by the output: 64 of conv2's do not
        pte[at] ^= 0x40
    (app / "model" / "model.pte").write_bytes(bytes(pte))
    assert run_cli("run", app, "--trace") == 1
    out = capsys.readouterr().out
    assert "cmx-gen: FAIL" in out
    assert "trace: first difference at instruction #1 cmx cortex_m::quantized_conv2d (conv2, model.py:" in out, out
    print(f"\n{out}")


def test_trace_matches_every_backend_layer_on_a_dsp_core(tmp_path, capsys):
    """On the M4 the digits CNN's 3x3 layers run cmx_conv_row_s8 as 2-D layers: each streams its every
    output row (it streamed the first row alone, and the trace said the target printed no output for
    it: a ConvTransposeUNet's 14 layers on 2026-11-29)."""
    app = make_app(DIGITS, "mps2-an386", tmp_path)
    layers = json.loads((app / "model" / "report.json").read_text())["delegated_layers"]
    assert any(layer["kind"] == "conv_row" and layer["shape"][2] > 1 for layer in layers)  # a 2-D one
    assert run_cli("run", app, "--trace") == 0
    out = capsys.readouterr().out
    assert f"trace: all {2 + len(layers)} traced outputs (2 instructions, {len(layers)} backend layers) match" in out, (
        out
    )


def test_default_image_carries_no_tracer(tmp_path):
    """Profiling off: no EventTracer hook or tracer code in the image (the figures are in the note)."""
    app = make_app(DIGITS, "mps3-an547", tmp_path)
    default = build.build(app, jobs=2)
    symbols = subprocess.run(
        ["arm-none-eabi-nm", "-C", str(default.elf)], capture_output=True, text=True, check=True
    ).stdout
    assert "CmxTracer" not in symbols
    profiled = build.build(app, app / "build-profile", jobs=2, defines=["CMX_PROFILE=ON"])
    symbols = subprocess.run(
        ["arm-none-eabi-nm", "-C", str(profiled.elf)], capture_output=True, text=True, check=True
    ).stdout
    assert "CmxTracer" in symbols
    # The hooks and the tracer cost code only in the profile image (with cmx-gen's backend: its layer events
    # and the runner's per-layer table, 2,500 B on digits M55).
    assert 1000 < profiled.text_bytes - default.text_bytes <= 3072, (default.text_bytes, profiled.text_bytes)
    print(f"\n.text default {default.text_bytes} B, profile {profiled.text_bytes} B")
