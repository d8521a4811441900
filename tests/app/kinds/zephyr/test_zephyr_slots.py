"""The Zephyr app with its model in model slots (placement = "slot"): the slots are fixed partitions
of the overlay at the board file's addresses, the firmware checks they agree at build time, the
program is verified as it loads, and `west build -t run` loads the slot images beside the image.

Zephyr cannot be fetched here: the offline checks (dtlib over the board's DTS and the overlay,
kconfiglib, the stand-in compile) and the stand-in CMake configure are the build's stand-in.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT, run_cli
from zephyr_helpers import _sdk_defines, assert_all_checks_pass, stub_configure

from cmx_gen.app.folder import AppFolder
from cmx_gen.app.kinds.zephyr import ZephyrApp
from cmx_gen.app.kinds.zephyr.checks import validate_app
from cmx_gen.fit.boards import load_board

DIGITS = ROOT / "samples" / "digits" / "model.py"

# an547: the slots in the DDR window (a memory node of their own); an386: at the top of flash0 (no
# partitions there yet); nucleo-h743zi: in flash bank 2, beside the board's own five partitions.
BOARDS = ["mps3-an547", "mps2-an386", "nucleo-h743zi"]


@pytest.fixture(scope="module")
def slot_apps(tmp_path_factory):
    made: dict[str, Path] = {}

    def get(board_id: str) -> Path:
        if board_id not in made:
            out = tmp_path_factory.mktemp(f"zslot-{board_id}") / "app"
            args = ["create", f"{DIGITS}:DigitsCNN", "--board", board_id, "--rtos", "zephyr", "--placement", "slot"]
            assert run_cli(*args, "-o", out) == 0
            made[board_id] = out
        return made[board_id]

    return get


def _copy(app: Path, tmp_path: Path) -> Path:
    shutil.copytree(app, tmp_path / "app")
    return tmp_path / "app"


def _overlay(app: Path) -> Path:
    """The overlay of the board's own Zephyr target."""
    return app / "boards" / f"{AppFolder(app).board().zephyr.file_name}.overlay"


@pytest.mark.parametrize("board_id", BOARDS)
def test_every_offline_check_passes_and_the_slots_are_partitions(slot_apps, board_id):
    app = slot_apps(board_id)
    assert_all_checks_pass(validate_app(app), board_id)
    board = load_board(board_id)
    overlay = _overlay(app).read_text()
    for slot in board.model_slots:
        assert f"cmx_slot_{slot.name}: partition@" in overlay
        assert re.search(rf'label = "cmx-slot-{slot.name}";\s*reg = <0x[0-9a-f]+ 0x{slot.size:x}>;', overlay)
    # the program is not in the image: model/ has no .incbin of it, the slot image has it
    assert ".incbin" not in (app / "model" / "model_pte.S").read_text()
    pte_bytes = (app / "model" / "model.pte").stat().st_size
    weights = app / "model" / "model_weights.bin"
    assert (app / "model" / "model_slot.bin").stat().st_size + (
        weights.stat().st_size if weights.is_file() else 0
    ) > pte_bytes
    assert weights.is_file() == (board.model_slots[0].weights is not None)
    # the firmware checks at build time that the devicetree's partitions are the board file's slots
    wrapper = (app / "src" / "cmx_model.h").read_text()
    for slot in board.model_slots:
        assert f"BUILD_ASSERT(CMX_DT_SLOT_BASE(cmx_slot_{slot.name}) == CMX_SLOT_{slot.name.upper()}_BASE" in wrapper
    header = (app / "model" / "cmx_model.h").read_text()
    assert f"#define CMX_SLOT_A_BASE 0x{board.model_slots[0].base:08x}u" in header
    # ExecuTorch's verifier is on: the program comes from outside the image
    assert "CONFIG_EXECUTORCH_ENABLE_PROGRAM_VERIFICATION=y" in (app / "prj.conf").read_text()


def test_flash_slots_join_the_boards_partitions_and_memory_slots_get_a_node(slot_apps):
    nucleo = _overlay(slot_apps("nucleo-h743zi")).read_text()
    assert "&flash0 {" in nucleo and "partition@180000" in nucleo and "partition@1c0000" in nucleo
    an547 = _overlay(slot_apps("mps3-an547")).read_text()
    assert "cmx_model_slots: memory@7fc00000" in an547 and 'zephyr,memory-region = "CMX_MODEL_SLOTS"' in an547
    assert "partition@0 {" in an547 and "partition@200000 {" in an547
    # the AN386 keeps its slots' weights in the PSRAM, which Zephyr's devicetree does not describe
    an386 = _overlay(slot_apps("mps2-an386")).read_text()
    assert "cmx_model_weights: memory@21c00000" in an386 and "cmx_weight_b: partition@200000" in an386
    assert "&flash0 {" in an386 and "cmx_slot_a: partition@300000" in an386


def _findings(app: Path) -> list[str]:
    (result,) = validate_app(app, only=["devicetree"])
    return [str(f) for f in result.findings]


def test_a_partition_moved_in_the_overlay_is_caught(slot_apps, tmp_path):
    app = _copy(slot_apps("mps2-an386"), tmp_path)
    overlay = _overlay(app)
    overlay.write_text(overlay.read_text().replace("reg = <0x00380000 0x80000>", "reg = <0x00390000 0x70000>"))
    (finding,) = _findings(app)
    assert "partition &cmx_slot_b is 0x390000+0x70000, the board file's slot b 0x380000+0x80000" in finding


def test_a_slot_overlapping_a_partition_of_the_board_is_caught(tmp_path, slot_apps):
    app = _copy(slot_apps("nucleo-h743zi"), tmp_path)
    overlay = _overlay(app)
    # a product's own storage partition laid over slot a
    text = overlay.read_text().replace(
        "\t\tcmx_slot_a:",
        "\t\tmy_storage: partition@17c000 {\n\t\t\treg = <0x0017c000 0x8000>;\n\t\t};\n\t\tcmx_slot_a:",
    )
    overlay.write_text(text)
    findings = _findings(app)
    assert any("partition &cmx_slot_a overlaps" in f and "partition@17c000" in f for f in findings), findings


def test_weights_apart_are_loaded_with_their_slot(slot_apps, tmp_path):
    """The AN386 keeps its slots' weights in the PSRAM: `west build -t run` loads both files by
    default, and `cmx-gen run` both of what model-image wrote."""
    app = _copy(slot_apps("mps2-an386"), tmp_path)
    cmake = (app / "CMakeLists.txt").read_text()
    assert (
        'set(CMX_SLOT_IMAGES "${CMAKE_CURRENT_SOURCE_DIR}/model/model_slot.bin@0x00300000;'
        '${CMAKE_CURRENT_SOURCE_DIR}/model/model_weights.bin@0x21c00000"' in cmake
    )
    assert run_cli("model-image", app, "--slot", "b") == 0
    command = ZephyrApp().runner(AppFolder(app), 60).command(app / "build")
    build = (app / "build").resolve()
    assert (
        command[-1] == f"-DCMX_SLOT_IMAGES={build}/model_slot_b.bin@0x00380000;{build}/model_weights_b.bin@0x21e00000"
    )


def test_run_loads_the_images_model_image_wrote_else_the_apps_own(slot_apps, tmp_path):
    app = _copy(slot_apps("mps3-an547"), tmp_path)
    board = load_board("mps3-an547")
    command = ZephyrApp().runner(AppFolder(app), 60).command(app / "build")
    assert command[-2:] == ["--", f"-DCMX_SLOT_IMAGES={(app / 'model' / 'model_slot.bin').resolve()}@0x7fc00000"]
    assert run_cli("model-image", app, "--slot", "b") == 0
    command = ZephyrApp().runner(AppFolder(app), 60).command(app / "build")
    image = (app / "build" / "model_slot_b.bin").resolve()
    assert command[-1] == f"-DCMX_SLOT_IMAGES={image}@0x{board.model_slots[1].base:08x}"


@pytest.mark.firmware
def test_the_cmakelists_gives_the_emulator_the_slot_image(slot_apps, tmp_path):
    """The stand-in configure: the images become QEMU `-device loader` and FVP `--data` options."""
    defines = _sdk_defines()
    app = _copy(slot_apps("mps3-an547"), tmp_path)
    conf, _ = stub_configure(app, "mps3-an547", tmp_path, defines)
    assert conf.returncode == 0, conf.stdout[-3000:] + conf.stderr[-3000:]
    image = app / "model" / "model_slot.bin"
    assert f"QEMU -device;loader,file={image},addr=0x7fc00000; FVP --data;cpu0={image}@0x7fc00000" in conf.stdout
    # and it compiles: the model API with the slot code, the program check against the module's schema
    build = tmp_path / "build"
    done = subprocess.run(
        ["nice", "cmake", "--build", str(build), "-j", "2", "--target", "app", "cmx_kernels"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    objects = {p.name for p in build.rglob("*.obj")}
    assert {"cmx_slots.cpp.obj", "cmx_slot.c.obj", "cmx_program_check.cpp.obj"} <= objects, sorted(objects)


def test_the_flash_command_model_image_suggests_writes_the_slot(slot_apps, tmp_path, capsys):
    app = _copy(slot_apps("nucleo-h743zi"), tmp_path)
    capsys.readouterr()
    assert run_cli("model-image", app, "--slot", "b") == 0
    (suggested,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("next")]
    flash = suggested.split("   or   ")[1].split()
    assert flash[:2] == ["cmx-gen", "flash"]
    assert run_cli(*flash[1:], "--dry-run") == 0
    (command,) = capsys.readouterr().out.splitlines()
    assert "--format bin --base-address 0x081c0000" in command and command.endswith("model_slot_b.bin")
