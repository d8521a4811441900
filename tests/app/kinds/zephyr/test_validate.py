"""cmx-gen validate catches a broken overlay, Kconfig symbol, sample.yaml, manifest and runner source,
each with a message naming the file and the problem."""

from __future__ import annotations

import shutil

import pytest
from zephyr_helpers import digits_lowered, zephyr_app  # noqa: F401  (session fixtures)

from cmx_gen.app.kinds.zephyr.checks import (
    check_compile,
    check_devicetree,
    check_kconfig,
    check_twister,
    check_west,
    twister_schema_path,
)
from cmx_gen.cli import main as cli


@pytest.fixture
def app(zephyr_app, tmp_path):  # noqa: F811
    """A fresh, writable copy of the rendered Corstone-300 FVP app."""
    dst = tmp_path / "digits"
    shutil.copytree(zephyr_app("corstone300-fvp"), dst)
    return dst


@pytest.fixture
def an521(zephyr_app, tmp_path):  # noqa: F811
    dst = tmp_path / "an521"
    shutil.copytree(zephyr_app("mps2-an521"), dst)
    return dst


def messages(result) -> list[str]:
    assert result.status == "fail", f"{result.name} should fail"
    return [str(f) for f in result.findings]


def test_undefined_kconfig_symbol(app):
    with (app / "prj.conf").open("a") as f:
        f.write("CONFIG_EXECUTORCH_ENABLE_FOO=y\n")
    msgs = messages(check_kconfig(app))
    assert any(m.startswith("prj.conf:") and "CONFIG_EXECUTORCH_ENABLE_FOO is undefined" in m for m in msgs), msgs


def test_kconfig_value_that_does_not_stick(an521):
    """CONFIG_FPU=y on AN521 cpu0: Zephyr's SoC has no CPU_HAS_FPU, the build would abort."""
    with (an521 / "boards/mps2_an521_cpu0.conf").open("a") as f:
        f.write("CONFIG_FPU=y\n")
    msgs = messages(check_kconfig(an521))
    assert any(
        "CONFIG_FPU was assigned 'y' but gets 'n'" in m and "CPU_HAS_FPU" in m and "boards/mps2_an521_cpu0.conf" in m
        for m in msgs
    ), msgs


def test_missing_cpp_breaks_executorch_select(app):
    """CONFIG_EXECUTORCH selects REQUIRES_FULL_LIBCPP, which only exists with CONFIG_CPP."""
    prj = app / "prj.conf"
    prj.write_text(prj.read_text().replace("CONFIG_CPP=y\n", ""))
    msgs = messages(check_kconfig(app))
    assert any("REQUIRES_FULL_LIBCPP" in m or "STD_CPP17" in m for m in msgs), msgs


def test_broken_overlay_label(app):
    (app / "boards/mps3_corstone300_fvp.overlay").write_text(
        "/ {\n\tchosen {\n\t\tzephyr,sram = &no_such_ram;\n\t};\n};\n"
    )
    msgs = messages(check_devicetree(app))
    assert any(m.startswith("boards/mps3_corstone300_fvp.overlay:") and "no_such_ram" in m for m in msgs), msgs


def test_overlay_region_overlap(app):
    (app / "boards/mps3_corstone300_fvp.overlay").write_text(
        '/ {\n\tbad: memory@31100000 {\n\t\tcompatible = "zephyr,memory-region";\n'
        '\t\treg = <0x31100000 0x1000>;\n\t\tzephyr,memory-region = "BAD";\n\t};\n};\n'
    )
    msgs = messages(check_devicetree(app))
    assert any("overlaps" in m and "ISRAM" in m and "BAD" in m for m in msgs), msgs


def test_linker_snippet_names_unknown_region(app):
    (app / "linker/cmx_model_pte.ld").write_text(
        "SECTION_DATA_PROLOGUE(cmx_model_pte,,)\n{\n\tKEEP(*(.cmx_model_pte))\n} GROUP_DATA_LINK_IN(NO_SUCH, NO_SUCH)\n"
    )
    msgs = messages(check_devicetree(app))
    assert any(m.startswith("linker/cmx_model_pte.ld:") and "NO_SUCH" in m for m in msgs), msgs


@pytest.mark.skipif(
    twister_schema_path() is None,
    reason="Twister's schema not found (../shared/zephyr, $ZEPHYR_BASE or $CMX_TWISTER_SCHEMA): not run",
)
def test_broken_sample_yaml(app):
    text = (app / "sample.yaml").read_text()
    (app / "sample.yaml").write_text(text.replace("  harness: console", "  harness: console\n  harnes_config: {}"))
    msgs = messages(check_twister(app))
    assert any(m.startswith("sample.yaml:") and "Twister's schema" in m and "harnes_config" in m for m in msgs), msgs


def test_sample_yaml_without_tests(app):
    text = (app / "sample.yaml").read_text()
    (app / "sample.yaml").write_text(text.split("tests:")[0])
    msgs = messages(check_twister(app))
    assert any("sample.yaml" in m for m in msgs), msgs


def test_broken_west_manifest(app):
    text = (app / "west.yml").read_text()
    (app / "west.yml").write_text(text.replace("remote: pytorch", "remote: no-such-remote"))
    msgs = messages(check_west(app))
    assert any(m.startswith("west.yml:") and "no-such-remote" in m for m in msgs), msgs


def test_unpinned_zephyr(app):
    text = (app / "west.yml").read_text()
    (app / "west.yml").write_text(text.replace("revision: v4.4.0", "revision: main"))
    assert any("not pinned" in m for m in messages(check_west(app)))


def test_runner_compile_error(app):
    runner = app / "cmx/runner/cmx_runner.cpp"
    runner.write_text(runner.read_text() + "\nstatic int broken = undefined_symbol_cmx;\n")
    msgs = messages(check_compile(app))
    assert any(m.startswith("cmx/runner/cmx_runner.cpp:") and "undefined_symbol_cmx" in m for m in msgs), msgs


def test_cli_exit_codes(app, capsys):
    assert cli.main(["validate", str(app)]) == 0
    with (app / "prj.conf").open("a") as f:
        f.write("CONFIG_NOT_A_ZEPHYR_SYMBOL=y\n")
    assert cli.main(["validate", str(app), "--only", "kconfig"]) == 2
    err = capsys.readouterr().err
    assert "CONFIG_NOT_A_ZEPHYR_SYMBOL" in err and "prj.conf" in err


def test_cli_rejects_non_app(tmp_path, capsys):
    assert cli.main(["validate", str(tmp_path)]) == 2
    assert f"{tmp_path} has no cmx.toml: it is not an app `cmx-gen create` made" in capsys.readouterr().err


def test_harness_regex_must_reject_fail(app):
    text = (app / "sample.yaml").read_text()
    (app / "sample.yaml").write_text(text.replace('"^cmx-gen: PASS max_abs_err="', '"^cmx-gen: (PASS|FAIL)"'))
    msgs = messages(check_twister(app))
    assert any("also matches a FAIL line" in m for m in msgs), msgs


def test_promptless_symbol_assigned(app):
    with (app / "boards/mps3_corstone300_fvp.conf").open("a") as f:
        f.write("CONFIG_CPU_HAS_FPU=y\n")
    msgs = messages(check_kconfig(app))
    assert any("CONFIG_CPU_HAS_FPU is assigned but has no prompt" in m for m in msgs), msgs


def test_overlay_region_without_size(app):
    (app / "boards/mps3_corstone300_fvp.overlay").write_text(
        '/ {\n\tcmx_ddr: memory@70000000 {\n\t\tcompatible = "zephyr,memory-region";\n'
        '\t\treg = <0x70000000>;\n\t\tzephyr,memory-region = "CMX_DDR";\n\t};\n};\n'
    )
    msgs = messages(check_devicetree(app))
    assert any("CMX_DDR must be <address size> pairs" in m for m in msgs), msgs


def test_cli_says_a_bare_metal_app_has_no_offline_checks(tmp_path, capsys):
    """validate asks the app's kind (cmx.toml) for its checks; the bare-metal kind has none."""
    (tmp_path / "cmx.toml").write_text(
        '[model]\nsource = "m.py:N"\n[target]\nboard = "mps3-an547"\nrtos = "baremetal"\n'
    )
    assert cli.main(["validate", str(tmp_path)]) == 2
    assert "is a baremetal app, which has no offline checks" in capsys.readouterr().err
