"""Several models in one firmware on QEMU (issue 21): every model PASSes bit-exact in one image,
the shared planned arena in the ELF is the largest model's to the byte, the code is less than two
one-model apps', the user's application calls each model in a loop, separate arenas add up, a
model's state survives the others' calls, and a retrained model rebuilds only its own files.

Needs the firmware SDK (EXECUTORCH_ROOT, CMSIS_NN_PATH; see `cmx-gen sdk`) and qemu-system-arm.
Without them every test here is skipped and says why.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import FIRMWARE, ROOT
from toy_models.weighted import weighted_model

from cmx_gen.app import project as project_mod
from cmx_gen.app.kinds.baremetal import build
from cmx_gen.app.project import ModelEntry
from cmx_gen.device import app_run
from cmx_gen.device.runners import QemuRunner
from cmx_gen.device.runners.base import parse_result_line
from cmx_gen.fit.boards import load_board
from cmx_gen.pipeline.generate import generate
from cmx_gen.program.report import load_json

pytestmark = FIRMWARE

SAMPLES = {
    "digits": ROOT / "samples" / "digits" / "model.py:DigitsCNN",
    "kws": ROOT / "samples" / "ds_cnn" / "model.py:DSCNN",
    "anomaly": ROOT / "samples" / "autoencoder" / "model.py:AutoEncoder",
}


def _app(folder: Path, board: str, names: list[str], separate: bool = False) -> Path:
    app = folder / "app"
    project = project_mod.Project(
        models=[ModelEntry(str(SAMPLES[n]), n) for n in names], board=board, output=str(app), separate_arenas=separate
    )
    generate(project, app)
    return app


def _symbols(elf: Path) -> dict[str, int]:
    """Sizes of the ELF's data symbols (LTO suffixes kept)."""
    out = subprocess.run(["arm-none-eabi-nm", "-S", str(elf)], capture_output=True, text=True, check=True).stdout
    sizes: dict[str, int] = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4:
            sizes[parts[3]] = sizes.get(parts[3], 0) + int(parts[1], 16)
    return sizes


def _planned(app: Path, name: str) -> int:
    """A model's planned buffers as its pools slice them (16-byte aligned each)."""
    return sum((s + 15) // 16 * 16 for s in load_json(app / "model" / name / "report.json").memory.planned_buffer_sizes)


def _check(app: Path, board: str, elf: Path, names: list[str]):
    result = QemuRunner(load_board(board), timeout=600).run(elf)
    assert result.passed and result.fields["models"] == str(len(names)), result.output[-3000:]
    lines = {parse_result_line(line).fields["model"]: parse_result_line(line) for line in result.model_lines}
    assert list(lines) == names
    for line in lines.values():
        assert line.passed and line.fields["max_abs_err"] == "0", line.line
    assert result.count[1] == sum(line.count[1] for line in lines.values())
    return result, lines


@pytest.mark.parametrize("board", ["mps3-an547", "mps2-an386"])
def test_digits_and_ds_cnn_in_one_image(tmp_path, board):
    app = _app(tmp_path / "two", board, ["digits", "kws"])
    built = build.build(app, jobs=2)
    result, lines = _check(app, board, built.elf, ["digits", "kws"])

    # the shared planned arena is the largest model's, to the byte; each model keeps its method pool
    symbols = _symbols(built.elf)
    assert symbols["cmx_shared_planned_pool"] == max(_planned(app, "digits"), _planned(app, "kws"))
    assert result.pool("planned") == (
        max(lines[n].pool("planned")[0] for n in lines),
        symbols["cmx_shared_planned_pool"],
    )
    assert result.pool("method")[1] == sum(lines[n].pool("method")[1] for n in lines)

    # one runtime and each kernel once: less code than the two one-model apps
    singles = {}
    for name in ("digits", "kws"):
        one = tmp_path / name / "app"
        generate(project_mod.Project.single(model=str(SAMPLES[name]), board=board, output=str(one)), one)
        singles[name] = build.build(one, jobs=2).text_bytes
    assert built.text_bytes < sum(singles.values()), (built.text_bytes, singles)

    # the user's application calls both models in a loop through the API
    output, code = QemuRunner(load_board(board), timeout=600).run_app(build.find_elf(app / "build", user_app=True))
    run = app_run.parse(output, code)
    assert run.error is None and run.done == 10 and code == 0, output[-2000:]
    for name in ("digits", "kws"):
        calls = run.of_model(name).calls
        assert [c.index for c in calls] == list(range(10))
        assert calls[0].outputs[0] == (app / "model" / name / "reference_output_0.bin").read_bytes()
        assert run.of_model(name).pools_move_after(0) == []
    print(f"\n{board}: {result.line}; .text {built.text_bytes} vs {singles}")


def test_three_models_on_m55(tmp_path):
    names = ["digits", "kws", "anomaly"]
    app = _app(tmp_path, "mps3-an547", names)
    built = build.build(app, jobs=2)
    _check(app, "mps3-an547", built.elf, names)
    assert _symbols(built.elf)["cmx_shared_planned_pool"] == max(_planned(app, n) for n in names)


def test_separate_arenas_add_up_and_pass(tmp_path):
    app = _app(tmp_path, "mps3-an547", ["digits", "kws"], separate=True)
    built = build.build(app, jobs=2)
    result, lines = _check(app, "mps3-an547", built.elf, ["digits", "kws"])
    symbols = _symbols(built.elf)
    assert "cmx_shared_planned_pool" not in symbols
    planned = {k: v for k, v in symbols.items() if "planned_pool" in k}
    assert sum(planned.values()) == _planned(app, "digits") + _planned(app, "kws"), planned
    assert result.pool("planned")[1] == sum(lines[n].pool("planned")[1] for n in lines)


# The user's code around two models: A runs, then B, then A's outputs are read, then A runs again.
STATE_MAIN = r"""
#include <string.h>
#include "cmx.h"
#include "cmx_app.h"
#include "cmx_models.h"

static uint8_t first[256];

static void run(cmx_model* m) {
  const void* ref; size_t n; cmx_tensor in;
  cmx_reference_input(m, 0, &ref, &n);
  cmx_input(m, 0, &in);
  memcpy(in.data, ref, n);
  cmx_invoke(m);
}

int main(void) {
  cmx_model* a = &cmx_model_digits;
  cmx_model* b = &cmx_model_kws;
  cmx_tensor out;
  if (cmx_app_init() != 0 || cmx_init(a) != CMX_OK || cmx_init(b) != CMX_OK) return 1;
  run(a);
  cmx_output(a, 0, &out);
  size_t nbytes = out.nbytes;
  memcpy(first, out.data, nbytes);
  run(b);
  cmx_status after_b = cmx_output(a, 0, &out);
  int kept = after_b == CMX_OK && memcmp(out.data, first, nbytes) == 0;
  run(a);
  int again = cmx_output(a, 0, &out) == CMX_OK && memcmp(out.data, first, nbytes) == 0;
  char line[96] = "state after_b=";
  strcat(line, cmx_status_name(after_b));
  strcat(line, kept ? " kept=1" : " kept=0");
  strcat(line, again ? " again=1" : " again=0");
  cmx_app_puts(line);
  cmx_app_print_done(3);
  return 0;
}
"""


@pytest.mark.parametrize("separate", [False, True])
def test_a_model_keeps_its_state_while_another_runs(tmp_path, separate):
    """Shared arena: A's outputs are gone once B ran, and the API says so (arena_reused) instead of
    handing back B's bytes; separate arenas: they are kept. Either way A's next call is exact."""
    app = _app(tmp_path, "mps3-an547", ["digits", "kws"], separate=separate)
    (app / "user" / "main.c").write_text(STATE_MAIN)
    build.build(app, jobs=2)
    output, code = QemuRunner(load_board("mps3-an547"), timeout=600).run_app(
        build.find_elf(app / "build", user_app=True)
    )
    expected = "state after_b=ok kept=1 again=1" if separate else "state after_b=arena_reused kept=0 again=1"
    assert expected in output and code == 0, output[-2000:]


def test_a_retrained_model_rebuilds_only_its_files(tmp_path):
    first = weighted_model(tmp_path / "first", seed=1)
    second = weighted_model(tmp_path / "second", seed=2)
    app = tmp_path / "app"
    project = project_mod.Project(
        models=[ModelEntry(first, "first"), ModelEntry(second, "second")], board="mps3-an547", output=str(app)
    )
    generate(project, app)
    build.build(app, jobs=2)
    weighted_model(tmp_path / "second", seed=3)  # retrained
    generate(project_mod.load(app), app)
    plan = subprocess.run(["ninja", "-C", str(app / "build"), "-n"], capture_output=True, text=True, check=True).stdout
    compiled = [line for line in plan.splitlines() if " Building " in line]
    assert compiled and all("cmx_model_second.dir/" in line for line in compiled), plan  # its handle, I/O, program
    rebuilt = build.build(app, jobs=2)
    _check(app, "mps3-an547", rebuilt.elf, ["first", "second"])


@pytest.mark.parametrize("image", ["check", "app"])
def test_zephyr_app_of_two_models_configures_and_compiles(tmp_path, image):
    """The Zephyr app of digits + DS-CNN against the stand-in Zephyr CMake package: each model's
    handle, reference and program compiled once, the shared arena, the check or the application."""
    from zephyr_helpers import configure_and_compile, object_names

    from cmx_gen.device import sdk

    app = tmp_path / "app"
    generate(
        project_mod.Project(
            models=[ModelEntry(str(SAMPLES["digits"]), "digits"), ModelEntry(str(SAMPLES["kws"]), "kws")],
            board="mps3-an547",
            rtos="zephyr",
            output=str(app),
        ),
        app,
    )
    prj = app / "prj.conf"
    prj.write_text(
        prj.read_text().replace("CONFIG_EXECUTORCH=y", "CONFIG_EXECUTORCH=n")
        + ("CONFIG_CMX_CHECK=y\n" if image == "check" else "")
    )
    found = sdk.find()
    assert found.ok, found.problems
    _, paths = configure_and_compile(app, "mps3-an547", tmp_path, found.cmake_defines())
    for name in ("digits", "kws"):
        assert any(f"cmx_model_{name}.dir/" in p and p.endswith("cmx_model_instance.cpp.obj") for p in paths), sorted(
            paths
        )
        assert any(p.endswith(f"model/{name}/model_pte.S.obj") for p in paths), sorted(paths)
    names = object_names(paths)
    assert "cmx_shared_pools.c" in names and "cmx_api.cpp" in names
    assert ({"cmx_runner.cpp"} if image == "check" else {"main.c", "cmx_app.c"}) <= names


def test_profile_trace_and_data_run_one_model_at_a_time(tmp_path, capsys):
    """run --profile / --trace on an app of several models: one run per model, each from a one-model
    app of it (build-models/<name>/, the same program); the app's page shows each model's profile.
    run --data --model NAME streams a data set through that model's one-model app, bit-exact."""
    from conftest import digits_split, run_cli

    app = _app(tmp_path / "two", "mps3-an547", ["digits", "anomaly"])
    capsys.readouterr()
    assert run_cli("run", app, "--profile", "--trace") == 0
    out = capsys.readouterr().out
    for name in ("digits", "anomaly"):
        assert f"model      {name} (its one-model app: {app / 'build-models' / name})" in out, out
        one = app / "build-models" / name
        assert (one / "build-profile" / "profile.json").is_file()
        assert (
            load_json(one / "model" / "report.json").pte.sha256
            == load_json(app / "model" / name / "report.json").pte.sha256
        ), "the one-model app runs the same program"
    assert out.count("trace: all") == 2, out
    page = (app / "report.html").read_text()
    assert 'id="profile-chart-digits"' in page and 'id="profile-chart-anomaly"' in page

    some = digits_split(tmp_path, 16)
    capsys.readouterr()
    assert run_cli("run", app, "--data", some, "--model", "digits") == 0
    out = capsys.readouterr().out
    assert "model      digits (its one-model app:" in out and "bit-exact  16/16 outputs equal the host reference" in out
