"""The user's application through the model API, on QEMU (issue 20): 10 calls whose first output
equals the check's reference bytes, calls 2..10 within 1 % in instructions, the pools' high-water
marks flat after call 1; a data set streamed through it with every sample bit-exact.

Needs the firmware SDK (EXECUTORCH_ROOT, CMSIS_NN_PATH; see `cmx-gen sdk`) and qemu-system-arm.
Without them every test here is skipped and says why.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import FIRMWARE, ROOT, digits_split, run_cli

from cmx_gen.app import project as project_mod
from cmx_gen.app.kinds.baremetal import build
from cmx_gen.device import app_run
from cmx_gen.device.runners import QemuRunner
from cmx_gen.fit.boards import load_board
from cmx_gen.pipeline.generate import generate

pytestmark = FIRMWARE

DIGITS = ROOT / "samples" / "digits" / "model.py:DigitsCNN"
DS_CNN = ROOT / "samples" / "ds_cnn" / "model.py:DSCNN"


def _build(model: Path, board: str, folder: Path, **project) -> tuple[Path, build.BuildResult]:
    app = folder / "app"
    generate(
        project_mod.Project.single(model=str(model), board=board, rtos="baremetal", output=str(app), **project), app
    )
    return app, build.build(app, jobs=2)


def _check_app_run(app: Path, board: str) -> app_run.AppRun:
    elf = build.find_elf(app / "build", user_app=True)
    output, code = QemuRunner(load_board(board), timeout=300).run_app(elf)
    run = app_run.parse(output, code)
    assert run.error is None and run.done == 10 and code == 0, output[-2000:]
    assert [c.index for c in run.calls] == list(range(10))
    reference = (app / "model" / "reference_output_0.bin").read_bytes()
    assert run.calls[0].outputs[0] == reference, "the application's first output must equal the check's bytes"
    assert run.spread() is not None and run.spread() <= 1.0, f"calls 2..10 differ by {run.spread():.2f} %"
    assert run.pools_move_after(0) == [], "a pool's high-water mark moved after call 1"
    first = run.calls[0]
    assert first.pools["method"][0] <= first.pools["method"][1] and first.pools["temp"][0] <= first.pools["temp"][1]
    assert run.stack is not None and 0 < run.stack[0] < run.stack[1], "the done line reports the stack high-water mark"
    return run


@pytest.mark.parametrize("board", ["mps3-an547", "mps2-an386"])
def test_digits_application_on_qemu(tmp_path, board):
    app, built = _build(DIGITS, board, tmp_path)
    check = QemuRunner(load_board(board), timeout=300).run(built.elf)
    assert check.passed and check.fields["max_abs_err"] == "0", check.output[-2000:]
    run = _check_app_run(app, board)
    # the check and the application call the same API: one inference costs the same within 1 %
    assert abs(run.calls[1].count - check.count[1]) <= 0.01 * check.count[1]
    print(f"\n{board}: calls {run.counts()}  check {check.line}")


def test_no_heap_unless_asked(tmp_path):
    """Nothing cmx-gen generates allocates: the image reserves no heap; CMX_HEAP_BYTES gives your code one."""
    app, built = _build(DIGITS, "mps3-an547", tmp_path)
    heap = {s.name: s.size for s in build.elf_sections(built.elf)}.get(".heap", 0)
    assert heap == 0
    with_heap = build.build(app, tmp_path / "build-heap", defines=["CMX_HEAP_BYTES=2048"], jobs=2)
    assert {s.name: s.size for s in build.elf_sections(with_heap.elf)}[".heap"] == 2048
    check = QemuRunner(load_board("mps3-an547"), timeout=300).run(with_heap.elf)
    assert check.passed, check.output[-2000:]


@pytest.mark.slow
def test_ds_cnn_application_on_m4(tmp_path):
    app, _ = _build(DS_CNN, "mps2-an386", tmp_path)
    run = _check_app_run(app, "mps2-an386")
    print(f"\nDS-CNN M4: {run.counts()}")


def test_an_application_whose_input_is_the_callers_buffer(tmp_path, capsys):
    """input_memory = "caller": the check and the application bind the reference input where it lies
    in flash (cmx_input_bind) and both equal the host reference; --data, which writes samples into
    planned input buffers, is refused in one line."""
    app, built = _build(DIGITS, "mps3-an547", tmp_path, input_memory="caller")
    check = QemuRunner(load_board("mps3-an547"), timeout=300).run(built.elf)
    assert check.passed and check.fields["max_abs_err"] == "0", check.output[-2000:]
    _check_app_run(app, "mps3-an547")
    capsys.readouterr()
    assert run_cli("run", app, "--data", digits_split(tmp_path, 4)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "caller's buffers" in err[0], err


def test_data_set_through_the_application_bit_exact(tmp_path, capsys):
    """The digits test split (360 images) on M55: every output bit-exact with the host reference,
    target accuracy = host int8 accuracy."""
    app, _ = _build(DIGITS, "mps3-an547", tmp_path)
    data = digits_split(tmp_path)
    capsys.readouterr()
    assert run_cli("run", app, "--data", data) == 0
    out = capsys.readouterr().out
    assert "bit-exact  360/360 outputs equal the host reference" in out, out
    m = re.search(r"accuracy   target (\S+)  host int8 (\S+)  host float (\S+)", out)
    assert m and m.group(1) == m.group(2), out
    print(out)


def test_data_set_over_the_uart_of_a_stand_alone_image(tmp_path, capsys):
    """An image without semihosting (a board's, CMX_SEMIHOSTING=OFF) reads the samples as CMX1
    frames on its UART: QEMU's stdio here, as a host's serial port would send them."""
    app = tmp_path / "app"
    generate(project_mod.Project.single(model=str(DIGITS), board="mps3-an547", rtos="baremetal", output=str(app)), app)
    build.build(app, jobs=2, defines=["CMX_CONSOLE=uart", "CMX_SEMIHOSTING=OFF"])
    some = digits_split(tmp_path, 24)
    capsys.readouterr()
    assert run_cli("run", app, "--data", some) == 0
    assert "bit-exact  24/24 outputs equal the host reference" in capsys.readouterr().out


def test_the_applications_own_lines_show_under_run_app(tmp_path, capsys):
    """A main.c that prints lines of its own through cmx_app_puts sees them under `run --app`, after
    the model's call lines, and the page's "Last result" says the line is the application's (issue 36)."""
    app = tmp_path / "app"
    generate(project_mod.Project.single(model=str(DIGITS), board="mps3-an547", rtos="baremetal", output=str(app)), app)
    main_c = app / "user" / "main.c"
    text = main_c.read_text()
    done = "\tcmx_app_print_done(call);"
    assert done in text
    own = (
        '\tfor (int i = 0; i < 100; ++i) {\n\t\tchar line[32];\n\t\tsnprintf(line, sizeof line, "my line %d", i);\n'
        "\t\tcmx_app_puts(line);\n\t}\n"
    )
    main_c.write_text("#include <stdio.h>\n" + text.replace(done, own + done))
    assert run_cli("build", app) == 0
    capsys.readouterr()
    assert run_cli("run", app, "--app") == 0
    out = capsys.readouterr().out
    shown = [line for line in out.splitlines() if line.startswith("app says")]
    assert shown == [f"app says   my line {i}" for i in range(100)], out[-3000:]
    assert out.index("call 0") < out.index("app says   my line 0")
    page = (app / "report.html").read_text()
    assert (
        "10 call(s); call 0 equals the check&#39;s reference bytes" in page
        or "10 call(s); call 0 equals the check's reference bytes" in page
    )
    assert "(from your application)" in page
