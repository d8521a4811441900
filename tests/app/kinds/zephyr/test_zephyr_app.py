"""Zephyr app: render for four boards from the real lowered digits sample; every offline check passes.

Zephyr cannot be fetched here, so the checks in cmx_gen/app/kinds/zephyr/checks/ are the build's stand-in:
Twister schema, west manifest, Kconfig (kconfiglib), devicetree (dtlib), runner compile.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from zephyr_helpers import BOARDS, assert_all_checks_pass, digits_lowered, zephyr_app  # noqa: F401  (session fixtures)

from cmx_gen.app.kinds.zephyr.checks import validate_app
from cmx_gen.cli import main as cli
from cmx_gen.common.paths import ROOT
from cmx_gen.fit import boards


@pytest.mark.parametrize("board_id", BOARDS)
def test_every_offline_check_passes(zephyr_app, board_id):
    app = zephyr_app(board_id)
    results = validate_app(app)
    assert [r.name for r in results] == ["twister", "west", "kconfig", "devicetree", "compile"]
    compiled = next(r for r in results if r.name == "compile").checked
    assert "cmx/runner/cmx_runner.cpp" in compiled and "model/model_pte.S" in compiled
    assert_all_checks_pass(results, board_id)


@pytest.mark.parametrize("board_id", BOARDS)
def test_app_layout(zephyr_app, board_id):
    app = zephyr_app(board_id)
    for rel in (
        "CMakeLists.txt",
        "prj.conf",
        "Kconfig",
        "sample.yaml",
        "west.yml",
        "README.md",
        "src/main.c",
        "cmx/runner/cmx_runner.cpp",
        "cmx/platform_zephyr/cmx_platform_zephyr.c",
        "cmx/kernels/CMakeLists.txt",
        "model/model.pte",
        "model/model_pte.S",
        "linker/cmx_model_pte.ld",
    ):
        assert (app / rel).is_file(), rel
    cmake = (app / "CMakeLists.txt").read_text()
    assert "find_package(Zephyr" in cmake and "add_subdirectory(cmx/kernels" in cmake
    # one runner source: the app's src/ holds main() and the Kconfig pool wrapper only
    assert sorted(p.name for p in (app / "src").iterdir()) == ["cmx_model.h", "main.c"]
    assert (app / "Kconfig").read_text().splitlines()[5] == 'source "Kconfig.zephyr"'
    prj = (app / "prj.conf").read_text()
    assert "CONFIG_EXECUTORCH=y" in prj and "CONFIG_CPP=y" in prj
    heap = int(prj.split("CONFIG_HEAP_MEM_POOL_SIZE=")[1].split()[0])
    assert heap > 0
    readme = (app / "README.md").read_text()
    for cmd in ("west init -l", "west update", "west build -b", "west twister -T ."):
        assert cmd in readme


def test_pool_defaults_come_from_the_plan(zephyr_app, digits_lowered):
    app = zephyr_app("corstone300-fvp")
    header = (app / "model" / "cmx_model.h").read_text()
    method = int(header.split("#define CMX_METHOD_POOL_BYTES ")[1].split("u")[0])
    temp = int(header.split("#define CMX_TEMP_POOL_BYTES ")[1].split("u")[0])
    kconfig = (app / "Kconfig").read_text()
    assert (
        f'EXECUTORCH_METHOD_ALLOCATOR_POOL_SIZE\n\tint "ExecuTorch method allocator pool (bytes)"\n\tdefault {method}\n'
        in kconfig
    )
    assert f"default {temp}\n" in kconfig


def test_fpu_only_where_zephyr_allows(zephyr_app):
    assert "CONFIG_FPU=y" in (zephyr_app("corstone300-fvp") / "boards/mps3_corstone300_fvp.conf").read_text()
    assert "CONFIG_FPU=y" in (zephyr_app("nucleo-h743zi") / "boards/nucleo_h743zi.conf").read_text()
    assert "CONFIG_FPU=y" in (zephyr_app("nrf5340dk-cpuapp") / "boards/nrf5340dk_nrf5340_cpuapp.conf").read_text()
    # AN521 cpu0: Zephyr's SoC does not select CPU_HAS_FPU (QEMU: CPU0_FPU = false)
    an521 = (zephyr_app("mps2-an521") / "boards/mps2_an521_cpu0.conf").read_text()
    assert "CONFIG_FPU" not in an521.replace("setting CONFIG_FPU here", "")


def test_twister_scenarios(zephyr_app):
    an521 = yaml.safe_load((zephyr_app("mps2-an521") / "sample.yaml").read_text())
    (name, spec), (app_name, app), (profile_name, profile) = an521["tests"].items()
    assert name.endswith(".qemu") and spec["platform_allow"] == ["mps2/an521/cpu0"]
    assert an521["common"]["harness"] == "console"
    # The check is every scenario's image but the application's (src/main.c, its loop ends).
    assert spec["extra_configs"] == ["CONFIG_CMX_CHECK=y"] and "extra_configs" not in an521["common"]
    assert app_name.endswith(".app") and app["extra_configs"] == ["CONFIG_CMX_APP_ITERATIONS=10"]
    assert app["harness_config"]["regex"] == ["^cmx-gen: done calls=[0-9]+"]
    # The profile scenario: the check with CONFIG_CMX_PROFILE=y, its rows in the Twister log.
    assert profile_name.endswith(".profile") and profile["extra_configs"] == [
        "CONFIG_CMX_CHECK=y",
        "CONFIG_CMX_PROFILE=y",
    ]
    assert profile["platform_allow"] == ["mps2/an521/cpu0"] and profile["harness_config"]["type"] == "multi_line"
    fvp = yaml.safe_load((zephyr_app("corstone300-fvp") / "sample.yaml").read_text())
    assert list(fvp["tests"]) == ["cmx_gen.digits.fvp", "cmx_gen.digits.app", "cmx_gen.digits.profile"]
    hw = yaml.safe_load((zephyr_app("nucleo-h743zi") / "sample.yaml").read_text())
    assert hw["tests"]["cmx_gen.digits.board"]["integration_platforms"] == ["nucleo_h743zi"]


def test_west_manifest_pins_and_allowlist(zephyr_app):
    manifest = yaml.safe_load((zephyr_app("nrf5340dk-cpuapp") / "west.yml").read_text())["manifest"]
    projects = {p["name"]: p for p in manifest["projects"]}
    assert projects["zephyr"]["revision"].startswith("v4.")
    assert {"cmsis_6", "cmsis-nn", "hal_nordic"} <= set(projects["zephyr"]["import"]["name-allowlist"])
    assert projects["executorch"]["path"] == "modules/lib/executorch"
    assert projects["executorch"]["revision"] == "v1.5.1"


def _zephyr_app_for(model: str, shape: str, board_id: str, app: Path):
    from cmx_gen.app.project import Project
    from cmx_gen.pipeline.generate import generate

    small = ROOT / "tests" / "toy_models" / "small.py"
    project = Project.single(
        model=f"{small}:{model}", board=board_id, rtos="zephyr", input_shape=shape, random_calibration=True
    )
    return generate(project, app)


def test_program_too_big_for_itcm_goes_to_ddr_with_an_overlay_node(tmp_path):
    """1.5 MB of weights on Corstone-300: the placement puts the program in DDR; the app gets a
    memory-region node for it and a linker snippet, and passes every offline check."""
    done = _zephyr_app_for("BigLinear", "1,1024", "corstone300-fvp", tmp_path / "app")
    assert done.placement.pte_region == "ddr"
    app = tmp_path / "app"
    overlay = (app / "boards/mps3_corstone300_fvp.overlay").read_text()
    assert 'zephyr,memory-region = "CMX_DDR"' in overlay and "reg = <0x70000000 0x10000000>" in overlay
    assert "GROUP_DATA_LINK_IN(CMX_DDR, CMX_DDR)" in (app / "linker/cmx_model_pte.ld").read_text()
    assert_all_checks_pass(validate_app(app), "corstone300-fvp DDR")


def test_activations_too_big_for_dtcm_go_to_sram_with_a_linker_snippet(tmp_path):
    done = _zephyr_app_for("WideConv", "1,3,128,128", "corstone300-fvp", tmp_path / "app")
    region = done.placement.arena_region
    assert done.board.region(region).kind == "sram"
    app = tmp_path / "app"
    assert f"GROUP_LINK_IN({region.upper()})" in (app / "linker/cmx_arena.ld").read_text()
    assert 'CMX_ARENA_SECTION=".cmx_arena"' in (app / "CMakeLists.txt").read_text()
    assert_all_checks_pass(validate_app(app), f"corstone300-fvp arenas in {region}")


def test_west_extension_runs_the_cli(zephyr_app, tmp_path):
    """`west cmx-gen` in a workspace made from the app (zephyr import stubbed: no network here)."""
    west = shutil.which("west") or str(Path(os.sys.executable).parent / "west")
    ws = tmp_path / "ws"
    shutil.copytree(zephyr_app("mps2-an521"), ws / "digits")
    subprocess.run([west, "init", "-l", "digits"], cwd=ws, check=True, capture_output=True)
    zephyr = ws / "zephyr"  # what `west update` would clone: a repo whose west.yml the import reads
    zephyr.mkdir()
    (zephyr / "west.yml").write_text("manifest:\n  projects: []\n")
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    for cmd in (
        ["init", "-q"],
        ["add", "west.yml"],
        ["commit", "-qm", "stub"],
        ["update-ref", "refs/heads/manifest-rev", "HEAD"],
    ):
        subprocess.run(git + cmd, cwd=zephyr, check=True, capture_output=True)
    env = {**os.environ, "PATH": f"{Path(os.sys.executable).parent}:{os.environ['PATH']}"}
    proc = subprocess.run([west, "cmx-gen", "--version"], cwd=ws, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().startswith("cmx-gen ")


def test_west_create_defaults_to_zephyr():
    from cmx_gen.west_command import cli_args

    assert cli_args(["create", "m.py:M", "--board", "mps2-an521"])[-2:] == ["--rtos", "zephyr"]
    assert cli_args(["create", "m.py:M", "--rtos", "baremetal"]) == ["create", "m.py:M", "--rtos", "baremetal"]
    assert cli_args(["lower", "m.py:M"]) == ["lower", "m.py:M"]


def test_pte_section_matches_the_linker_snippet(zephyr_app):  # noqa: F811
    """model/model_pte.S (the kind's pte_section) and the Zephyr linker snippet name the same section."""
    app = zephyr_app("corstone300-fvp")
    section = re.search(r"\.section (\S+),", (app / "model" / "model_pte.S").read_text()).group(1)
    assert f"*({section})" in (app / "linker" / "cmx_model_pte.ld").read_text().replace(" ", "")


def _zephyr_boards_with_layout() -> list[str]:
    from cmx_gen.app.kinds.zephyr.layout import zephyr_boards

    known = zephyr_boards()
    return [b.id for b in boards.load_boards() if b.zephyr and b.zephyr.file_name in known]


@pytest.mark.parametrize("board_id", _zephyr_boards_with_layout())
def test_every_board_with_zephyr_layout_data(zephyr_app, board_id):
    """Every database board cmx-gen has Zephyr layout data for renders an app that passes the checks."""
    assert_all_checks_pass(validate_app(zephyr_app(board_id)), board_id)


def test_boards_without_layout_data_are_refused_before_lowering(tmp_path, capsys):
    """alif-e8-hp names a Zephyr target (Alif's own west module) cmx-gen has no layout data for: a
    Zephyr app for it is refused at once, before the model is even read."""
    missing = [b for b in boards.load_boards() if b.zephyr and b.id not in _zephyr_boards_with_layout()]
    assert "alif-e8-hp" in [b.id for b in missing]
    code = cli.main(
        ["create", "no_such_model.py:Net", "--board", "alif-e8-hp", "--rtos", "zephyr", "-o", str(tmp_path / "app")]
    )
    err = capsys.readouterr().err
    assert code == 2 and "no Zephyr layout data for board target 'ensemble_e8_dk_ae822fa0e5597ls0_rtss_hp'" in err
    assert not (tmp_path / "app").exists()
    # mps2-an505 has no Zephyr board at all
    assert (
        cli.main(
            ["create", "no_such_model.py:Net", "--board", "mps2-an505", "--rtos", "zephyr", "-o", str(tmp_path / "app")]
        )
        == 2
    )
    assert "board mps2-an505 has no Zephyr board target" in capsys.readouterr().err
