"""Shared kernel-library builds (kernels/cmx_runtime_cache.cmake) and model-only relinks, with the
real SDK: a second app links the first one's library and compiles nothing of it; an SDK whose
sources differ by one line, or other flags, never gets that library; a model change with the same
operators recompiles only the model's own files. Timings are in bench/build.py, not here."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
from pathlib import Path

import pytest
from conftest import ROOT

from cmx_gen.app import project as project_mod
from cmx_gen.app.kinds.baremetal import build
from cmx_gen.device.runners import QemuRunner
from cmx_gen.fit.boards import load_board
from cmx_gen.pipeline.generate import generate

pytestmark = [
    pytest.mark.firmware,
    pytest.mark.skipif(
        not os.environ.get("EXECUTORCH_ROOT"),
        reason="needs EXECUTORCH_ROOT and CMSIS_NN_PATH (ExecuTorch + CMSIS-NN sources): not run",
    ),
]

DIGITS = ROOT / "samples" / "digits" / "model.py:DigitsCNN"


def origin(result: build.BuildResult) -> str:
    """What the kernels package said about its library: compiled here / shared build <key>."""
    return re.search(r"cmx-gen kernels: .*registry: \d+; (.*)", (result.build_dir / "cmx-build.log").read_text()).group(
        1
    )


def key(result: build.BuildResult) -> str:
    return re.search(r"([0-9a-f]{32})", origin(result)).group(1)


def compiled_sources(result: build.BuildResult) -> list[str]:
    return re.findall(r"Building \w+ object (\S+)", (result.build_dir / "cmx-build.log").read_text())


@pytest.fixture
def project():
    return project_mod.Project.single(model=str(DIGITS), board="mps3-an547", rtos="baremetal")


def test_a_second_app_links_the_first_ones_library(tmp_path, project):
    cache = tmp_path / "runtime"
    first, second = tmp_path / "first", tmp_path / "second"
    generate(dataclasses.replace(project, output=str(first)), first)
    built = build.build(first, jobs=2, runtime_cache=cache)
    assert origin(built).startswith("compiled here, then shared as")
    assert (cache / key(built) / "libcmx_kernels.a").is_file()
    generate(dataclasses.replace(project, output=str(second)), second)
    warm = build.build(second, jobs=2, runtime_cache=cache)
    assert origin(warm) == f"shared build {key(built)}: nothing to compile"
    assert not [s for s in compiled_sources(warm) if "cmx_kernels" in s], compiled_sources(warm)
    result = QemuRunner(load_board("mps3-an547"), timeout=120).run(warm.elf)
    assert result.passed and result.fields["max_abs_err"] == "0"
    # other options, another library
    small = build.build(second, second / "build-small", jobs=2, runtime_cache=cache, defines=["CMX_ET_LOG=OFF"])
    assert key(small) != key(built) and origin(small).startswith("compiled here")


def test_an_sdk_that_differs_by_one_line_never_gets_the_shared_library(tmp_path, project):
    """The same SDK with one comment changed in a runtime header: another key, compiled again."""
    real = Path(os.environ["EXECUTORCH_ROOT"]).resolve()
    overlay = tmp_path / "executorch"
    overlay.mkdir()
    for entry in real.iterdir():
        if entry.name != "runtime":
            (overlay / entry.name).symlink_to(entry)
    shutil.copytree(real / "runtime", overlay / "runtime", symlinks=True)
    header = overlay / "runtime" / "core" / "error.h"
    cache = tmp_path / "runtime-cache"
    app = tmp_path / "app"
    generate(dataclasses.replace(project, output=str(app)), app)
    env = {**os.environ, "EXECUTORCH_ROOT": str(overlay)}
    before = key(build.build(app, app / "build-a", jobs=2, runtime_cache=cache, env=env))
    header.write_text(header.read_text() + "\n// one more line\n")
    after = build.build(app, app / "build-b", jobs=2, runtime_cache=cache, env=env)
    assert key(after) != before and origin(after).startswith("compiled here")
    hashed = (after.build_dir / "cmx_kernels" / "runtime_key.txt").read_text()
    assert "executorch:runtime/core/error.h=" in hashed
    # cmx-gen's own kernels' headers decide the library too (cmx_nn.h's structs are the plan's records)
    assert "kernels:nn/cmx_nn.h=" in hashed and "kernels:nn/cmx_requantize.h=" in hashed
    # ... and an edit after configuring re-runs CMake (every hashed file is a configure dependency)
    after_key = key(after)
    header.write_text(header.read_text() + "// and another\n")
    again = build.build(app, app / "build-b", jobs=2, runtime_cache=cache, env=env)
    assert key(again) not in (before, after_key) and origin(again).startswith("compiled here")


def test_a_model_only_change_recompiles_only_the_models_files(tmp_path, project):
    app = tmp_path / "app"
    cache = tmp_path / "runtime"
    generate(dataclasses.replace(project, output=str(app)), app)
    first = origin(build.build(app, jobs=2, runtime_cache=cache))
    pte = (app / "model" / "model.pte").read_bytes()
    randomized = (dataclasses.replace(project.models[0], random_calibration=True),)  # new weights, same ops
    generate(dataclasses.replace(project, output=str(app), models=randomized), app)
    assert (app / "model" / "model.pte").read_bytes() != pte
    relinked = build.build(app, jobs=2, runtime_cache=cache)
    compiled = compiled_sources(relinked)
    # the model files, and what is compiled from model/cmx_model.h: the check and the model's API handle
    assert compiled and all(re.search(r"(model/|cmx_runner|cmx_model_instance)", s) for s in compiled), compiled
    # the same operators: CMake does not even re-run, the shared library stays linked
    assert "Re-running CMake" not in (relinked.build_dir / "cmx-build.log").read_text()
    assert first.startswith("compiled here")
    result = QemuRunner(load_board("mps3-an547"), timeout=120).run(relinked.elf)
    assert result.passed and result.fields["max_abs_err"] == "0"
