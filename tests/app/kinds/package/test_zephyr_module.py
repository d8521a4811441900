"""A model package as a Zephyr module in a team's own Zephyr application (issue 56).

`user_zephyr_app/` is an application as a user writes one (CMakeLists.txt, prj.conf, west.yml,
src/main.c; nothing from cmx-gen): its west.yml lists the package (modules/lib/cmx_model) and its
prj.conf enables it. Offline, as Zephyr's tools would: `cmx-gen validate` on the package, the
application's west.yml and its Kconfig with the module's. With the SDK: configured and compiled
against the Zephyr stand-in (the user's main.c through cmx.h, the module's library, the kernels), and
a board of another core refused by the module in one line at configure time.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from zephyr_helpers import _sdk_defines, object_names, stub_configure

from cmx_gen.app.kinds.zephyr.checks import check_kconfig, check_west
from cmx_gen.app.kinds.zephyr.checks.compile import check_compile
from cmx_gen.app.project import ModelEntry, Project
from cmx_gen.cli import main as cli
from cmx_gen.common.paths import ROOT
from cmx_gen.pipeline.generate import generate

USER = Path(__file__).parent / "user_zephyr_app"
DIGITS = str(ROOT / "samples" / "digits" / "model.py:DigitsCNN")
BOARD = "corstone300-fvp"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """A west workspace: the user's application (the manifest repository) and the package where
    its west.yml puts it."""
    top = tmp_path_factory.mktemp("ws")
    shutil.copytree(USER, top / "app")
    package = top / "modules" / "lib" / "cmx_model"
    generate(
        Project(models=[ModelEntry(DIGITS, "digits")], board=BOARD, rtos="zephyr-module", output=str(package)), package
    )
    return top


def test_the_package_is_a_module_and_passes_the_offline_checks(workspace, capsys):
    package = workspace / "modules" / "lib" / "cmx_model"
    assert (package / "zephyr" / "module.yml").is_file() and not (package / "src").exists()
    assert cli.main(["validate", str(package)]) == 0, capsys.readouterr().out
    out = capsys.readouterr().out
    assert re.search(r"^module\s+PASS", out, re.M) and re.search(r"^kconfig\s+PASS", out, re.M), out
    assert re.search(r"^compile\s+(PASS|SKIPPED)", out, re.M), out


def test_the_users_application_lists_and_enables_it(workspace):
    app = workspace / "app"
    assert check_west(app).status == "pass", [str(f) for f in check_west(app).findings]
    result = check_kconfig(app)  # prj.conf + the board's .conf, with the module's Kconfig as Zephyr sources it
    assert result.status == "pass", [str(f) for f in result.findings]


def test_enabling_it_without_cpp_is_what_zephyr_would_refuse(workspace, tmp_path):
    app = tmp_path / "app"
    shutil.copytree(workspace / "app", app)
    (app / "prj.conf").write_text((app / "prj.conf").read_text().replace("CONFIG_CPP=y\n", ""))
    shutil.copytree(workspace / "modules", tmp_path / "modules")
    findings = [str(f) for f in check_kconfig(app).findings]
    assert any("CONFIG_CMX_MODEL was assigned 'y' but gets 'n'" in f and "CPP" in f for f in findings), findings


@pytest.mark.firmware
def test_the_users_application_configures_and_compiles_with_the_module(workspace, tmp_path):
    defines = _sdk_defines()
    package = workspace / "modules" / "lib" / "cmx_model"
    conf, build = stub_configure(workspace / "app", BOARD, tmp_path, defines, modules=[package])
    assert conf.returncode == 0, conf.stdout[-3000:] + conf.stderr[-3000:]
    assert "cmx-stub: module cmx_digits" in conf.stdout and "pools 2" in conf.stdout
    done = __import__("subprocess").run(
        ["nice", "cmake", "--build", str(build), "-j", "2", "--target", "app", "cmx_model", "cmx_kernels"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    objects = object_names({p.relative_to(build).as_posix() for p in build.rglob("*.obj")})
    assert {"main.c", "cmx_api.cpp", "cmx_model_instance.cpp", "model_pte.S", "cmx_backend.cpp"} <= objects, objects


@pytest.mark.firmware
@pytest.mark.parametrize("board, fpu_conf, has", [("nucleo-h743zi", True, "CPU_CORTEX_M55=n"), (BOARD, False, "FPU=n")])
def test_a_board_of_another_core_or_without_the_fpu_is_refused_in_one_line(workspace, tmp_path, board, fpu_conf, has):
    defines = _sdk_defines()
    app = tmp_path / "app"
    shutil.copytree(workspace / "app", app)
    if not fpu_conf:  # the Corstone-300 without its board .conf: CONFIG_FPU=n, soft-float, no Helium
        shutil.rmtree(app / "boards")
    package = workspace / "modules" / "lib" / "cmx_model"
    (tmp_path / "modules" / "lib").mkdir(parents=True)
    (tmp_path / "modules" / "lib" / "cmx_model").symlink_to(package)
    conf, _ = stub_configure(app, board, tmp_path, defines, modules=[package])
    assert conf.returncode != 0
    errors = [line for line in re.sub(r"\n  ", " ", conf.stderr).splitlines() if "cmx-gen:" in line]
    assert len(errors) == 1, conf.stderr
    assert "made for cortex-m55 (MVE kernels, with FPU" in errors[0], errors[0]
    assert f"this build has CONFIG_{has}" in errors[0] or f", CONFIG_{has}" in errors[0], errors[0]


def test_compiled_for_another_code_path_it_stops_at_its_first_source(workspace, tmp_path):
    """Whatever builds it: cmx_model_instance.cpp refuses flags whose code path (Helium, DSP, plain
    C) is not the program's, in one #error line (here the M55 package with an M4's flags)."""
    package = tmp_path / "cmx_model"
    shutil.copytree(workspace / "modules" / "lib" / "cmx_model", package)
    placement = package / "model" / "placement.json"  # the board it says it was made for
    placement.write_text(placement.read_text().replace(f'"board_id": "{BOARD}"', '"board_id": "mps2-an386"'))
    result = check_compile(package)
    if result.status == "skipped":
        pytest.skip(f"compile check not run: {result.note}")
    errors = [str(f) for f in result.findings]
    assert any("cmx-gen: this model was made for another core's code path" in f for f in errors), errors


def test_a_package_is_not_built_or_run_by_cmx_gen(workspace, capsys):
    package = workspace / "modules" / "lib" / "cmx_model"
    for command in (["build"], ["run"], ["run", "--cycles"], ["flash", "--dry-run"]):
        assert cli.main([*command, str(package)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "built, run and flashed by your firmware's own build" in err[0], err
    page = (package / "report.html").read_text()  # how it is checked, on its page too
    assert "cmx_self_test()" in page and "cmx-gen build APP" not in page


@pytest.mark.firmware
def test_the_pools_go_to_the_region_its_kconfig_names(workspace, tmp_path):
    defines = _sdk_defines()
    app = tmp_path / "app"
    shutil.copytree(workspace / "app", app)
    (app / "prj.conf").write_text((app / "prj.conf").read_text() + 'CONFIG_CMX_MODEL_ARENA_REGION="SRAM"\n')
    assert check_kconfig(app).status == "fail"  # the module is not in this copy's workspace: the symbol is unknown
    shutil.copytree(workspace / "modules", tmp_path / "modules")
    assert check_kconfig(app).status == "pass"
    conf, build = stub_configure(app, BOARD, tmp_path, defines, modules=[tmp_path / "modules" / "lib" / "cmx_model"])
    assert conf.returncode == 0, conf.stdout[-3000:] + conf.stderr[-3000:]
    assert "pools 2" in conf.stdout and "in .cmx_arena" in conf.stdout, conf.stdout[-2000:]
    snippet = re.search(r"linker snippets: ;SECTIONS:(\S+)", conf.stdout).group(1)
    assert "GROUP_LINK_IN(SRAM)" in Path(snippet).read_text()
