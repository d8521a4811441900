"""Every sample renders a bare-metal and a Zephyr app from its cmx.toml, and both pass the offline checks."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import ROOT
from zephyr_helpers import assert_all_checks_pass

from cmx_gen.app import project as project_mod
from cmx_gen.app.kinds.zephyr.checks import check_compile, validate_app
from cmx_gen.pipeline.generate import generate

SAMPLES = sorted(p.parent.name for p in (ROOT / "samples").glob("*/cmx.toml"))


def sample_project(name: str, rtos: str) -> project_mod.Project:
    base = project_mod.load(ROOT / "samples" / name / project_mod.FILE_NAME)
    return dataclasses.replace(base, rtos=rtos)


def test_every_sample_has_a_project_file():
    assert SAMPLES == [
        "autoencoder",
        "denoiser",
        "digits",
        "digits_lstm",
        "ds_cnn",
        "kws_digits",
        "mobilenet_v1_025",
        "resnet8",
        "tc_resnet8",
    ]


@pytest.mark.parametrize("name", SAMPLES)
def test_sample_renders_both_app_kinds_that_pass_offline_checks(name, tmp_path):
    bare = generate(sample_project(name, "baremetal"), tmp_path / "baremetal")
    assert bare.artifacts.report.fallbacks == []
    compiled = check_compile(tmp_path / "baremetal")
    assert compiled.status == "pass", [str(f) for f in compiled.findings]
    assert "cmx/runner/cmx_runner.cpp" in compiled.checked

    zephyr = generate(sample_project(name, "zephyr"), tmp_path / "zephyr")
    assert zephyr.from_cache, "the Zephyr app reuses the lowering of the bare-metal app (same core)"
    programs = sorted(
        p.relative_to(tmp_path / "baremetal") for p in (tmp_path / "baremetal" / "model").rglob("model.pte")
    )
    assert len(programs) == max(1, len(bare.models))  # kws_digits: model/kws/, model/digits/
    for pte in programs:
        assert (tmp_path / "zephyr" / pte).read_bytes() == (tmp_path / "baremetal" / pte).read_bytes()
    assert_all_checks_pass(validate_app(tmp_path / "zephyr"), f"{name} on {zephyr.board.id}")
