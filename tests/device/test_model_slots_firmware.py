"""One firmware, built once, and the models its slots hold (issue 54, placement = "slot"), on QEMU.

The firmware runs the newest slot that verifies and passes its self-check; a retrained model written
to the other slot runs without a new image; a model needing more pool or a layer kind the firmware
lacks, a flipped byte and a slot cut in half are each refused with their status while the other slot
keeps running. The ELF's SHA-256 is the same at the end as after the one build.

Needs the firmware SDK (EXECUTORCH_ROOT, CMSIS_NN_PATH) and qemu-system-arm; skipped, saying why,
without them."""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
from pathlib import Path

import pytest
from conftest import FIRMWARE, ROOT

from cmx_gen.app import model_slots, slot_image
from cmx_gen.app import project as project_mod
from cmx_gen.app.folder import AppFolder
from cmx_gen.app.kinds import kind_of
from cmx_gen.app.kinds.baremetal import build
from cmx_gen.pipeline.generate import generate

pytestmark = FIRMWARE

MODELS = ROOT / "tests" / "toy_models" / "slot_models.py"


def _team_folder(path: Path) -> Path:
    """A copy of the model file in its own folder, where its weights file goes."""
    path.mkdir()
    shutil.copy(MODELS, path / "model.py")
    return path / "model.py"


def _retrain(model_file: Path, seed: int) -> None:
    spec = importlib.util.spec_from_file_location(f"slot_team_{abs(hash(model_file))}", model_file)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.retrain(seed)


def _create(model: str, board: str, app: Path) -> None:
    project = project_mod.Project.single(model=model, board=board, output=str(app), placement="slot")
    generate(project, app, use_cache=False)


def _run(app: Path, elf: Path):
    folder = AppFolder(app)
    result = kind_of(folder).runner(folder, 300).run(elf)
    slots = {line.split()[2]: line for line in result.output.splitlines() if line.startswith("cmx-gen: slot ")}
    return result, slots


@pytest.mark.parametrize("board", ["mps3-an547", "mps2-an386"])
def test_one_firmware_runs_the_models_its_slots_hold_and_refuses_the_rest(tmp_path, board):
    team = _team_folder(tmp_path / "team")
    _retrain(team, 1)
    app = tmp_path / "app"
    _create(f"{team}:SlotCnn", board, app)
    elf = build.build(app, jobs=2).elf
    firmware = hashlib.sha256(elf.read_bytes()).hexdigest()
    print(f"\n{board}: firmware {elf.name} sha256 {firmware}")

    # Model A in slot a (the image create wrote): PASS, bit-exact.
    first = model_slots.write_image(AppFolder(app), "a", 1)
    result, slots = _run(app, elf)
    assert result.passed and result.fields["max_abs_err"] == "0" and result.fields["slot"] == "a", result.output[-800:]
    assert "status=slot_empty" in slots["b"]
    print(f"A in a:           {result.line}")

    # Retrained (same layers, other weights): regen, its image to slot b only; the firmware runs it.
    _retrain(team, 2)
    _create(f"{team}:SlotCnn", board, app)
    assert hashlib.sha256(build.build(app, jobs=2).elf.read_bytes()).hexdigest() == firmware, (
        "regen changed the firmware"
    )
    second = model_slots.write_image(AppFolder(app), "b")
    assert second.header.sequence == 2 and second.header.sha256 != first.header.sha256
    result, slots = _run(app, elf)
    assert result.passed and result.fields["max_abs_err"] == "0" and result.fields["slot"] == "b", result.output[-800:]
    print(f"A' in b:          {result.line}")
    retrained = second.path.read_bytes()

    # Models this firmware cannot run, written to slot b as the newest: refused, slot a runs.
    for cls, status in (("SlotCnnWide", "slot_too_large"), ("SlotCnnAvgPool", "slot_incompatible")):
        other = tmp_path / cls
        _create(f"{_team_folder(tmp_path / f'team_{cls}')}:{cls}", board, other)
        image = slot_image.with_sequence((other / "model" / "model_slot.bin").read_bytes(), 3)
        second.path.write_bytes(image)
        result, slots = _run(app, elf)
        assert f"status={status}" in slots["b"], slots["b"]
        assert result.passed and result.fields["slot"] == "a", result.output[-800:]
        print(f"{cls} in b: {slots['b']} -> {result.line}")

    # One flipped byte, then the image cut in half: refused, slot a runs.
    flipped = bytearray(retrained)
    flipped[len(flipped) // 2] ^= 0x10
    for what, image in (("flipped byte", bytes(flipped)), ("cut in half", retrained[: len(retrained) // 2])):
        second.path.write_bytes(image)
        result, slots = _run(app, elf)
        assert "status=slot_corrupt" in slots["b"], result.output[-800:]
        assert result.passed and result.fields["slot"] == "a", result.output[-800:]
        print(f"{what} in b: {slots['b']} -> {result.line}")

    # The weights apart from the slot (the AN386's PSRAM areas): one flipped byte there refuses slot b;
    # with them whole again, b runs.
    weights = model_slots.built_weights_path(AppFolder(app), "b")
    if weights.is_file():
        second.path.write_bytes(retrained)
        whole = weights.read_bytes()
        flipped = bytearray(whole)
        flipped[len(flipped) // 3] ^= 0x01
        weights.write_bytes(bytes(flipped))
        result, slots = _run(app, elf)
        assert "status=slot_corrupt" in slots["b"] and result.passed and result.fields["slot"] == "a", result.output[
            -800:
        ]
        print(f"weights of b flipped: {slots['b']} -> {result.line}")
        weights.write_bytes(whole)
        result, slots = _run(app, elf)
        assert result.passed and result.fields["slot"] == "b", result.output[-800:]

    assert hashlib.sha256(elf.read_bytes()).hexdigest() == firmware


@pytest.mark.parametrize("board", ["mps2-an386", "mps3-an547"])
def test_a_model_larger_than_a_slot_runs_with_its_weights_apart(tmp_path, board):
    """690 KB of weights: on the AN386 more than a slot (512 KiB) holds, so they go to the slot's
    weights area in the PSRAM and are read in place there; on the AN547 the whole program is in its
    2 MiB slot in the DDR window, read in place too."""
    app = tmp_path / "app"
    _create(f"{_team_folder(tmp_path / 'team')}:SlotMlpLarge", board, app)
    slot = AppFolder(app).board().model_slots[0]
    image = (app / "model" / "model_slot.bin").stat().st_size
    weights = app / "model" / "model_weights.bin"
    if slot.weights is not None:
        assert image < 64 * 1024 and weights.stat().st_size > slot.size, (image, weights.stat().st_size)
    else:
        assert not weights.exists() and image > 512 * 1024
    elf = build.build(app, jobs=2).elf
    result, slots = _run(app, elf)
    assert result.passed and result.fields["max_abs_err"] == "0" and result.fields["slot"] == "a", result.output[-800:]
    print(
        f"\n{board}: slot image {image:,} B, weights apart {weights.stat().st_size if weights.exists() else 0:,} B: {result.line}"
    )


def test_cycles_and_profile_run_the_model_in_its_slot(tmp_path, capsys):
    """`run --cycles` and `run --profile` load the slot images beside the firmware as `run` does (they
    ran the firmware with empty slots: 'the cycle plugin saw nothing run')."""
    from conftest import run_cli

    app = tmp_path / "app"
    _create(f"{_team_folder(tmp_path / 'team')}:SlotCnn", "mps2-an386", app)
    build.build(app, jobs=2)
    capsys.readouterr()
    assert run_cli("run", app, "--cycles") == 0
    out = capsys.readouterr().out
    assert " slot=a cyc=" in out and "cmx-gen: PASS max_abs_err=0" in out, out[-800:]
    assert run_cli("run", app, "--profile") == 0
    out = capsys.readouterr().out
    assert "slot=a" in out and "cycles (estimated)" in out, out[-800:]
