"""Bare-metal apps without the ExecuTorch sources (CI): real renders of the digits sample, checked
with the real Arm toolchain and CMake.

- the app's own sources (runner, generated kernel registration, startup, platform, reference data)
  compile with arm-none-eabi-g++/gcc -fsyntax-only against the headers in the executorch wheel;
- the generated linker script links the startup, platform and embedded program for each board,
  and every section lands in the region the placement chose;
- CMake configures the app as far as it can and stops with the one clear SDK error.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import RESULT_STUB, ROOT, cpu_flags, link_with_stub, placement

from cmx_gen.app import codegen
from cmx_gen.app import project as project_mod
from cmx_gen.app.kinds.baremetal import build
from cmx_gen.common import dim_order
from cmx_gen.common.errors import SdkError
from cmx_gen.device import build_tool, sdk
from cmx_gen.device.runners import QemuRunner, parse_result_line
from cmx_gen.fit.boards import load_board
from cmx_gen.pipeline.generate import generate
from cmx_gen.program.pte import allocator_needs, operator_names

DIGITS = ROOT / "samples" / "digits" / "model.py:DigitsCNN"
# One board per CMSIS-NN code path and kind of memory map: MVE in TCMs, DSP on MPS2 (M4) and
# TrustZone MPS2 (M33), a flash+RAM hardware board (M7), a board without QEMU.
BOARDS = ["mps3-an547", "mps2-an386", "mps2-an505", "nucleo-h743zi"]
GCC = shutil.which("arm-none-eabi-gcc")
needs_gcc = pytest.mark.skipif(GCC is None, reason="arm-none-eabi-gcc is not installed")


def wheel_include() -> Path:
    import executorch

    return Path(next(iter(executorch.__path__))) / "include"


@pytest.fixture(scope="module")
def apps(tmp_path_factory):
    """board id -> rendered bare-metal app of the digits sample (lowered once per core)."""
    old = os.environ.get("CMX_GEN_CACHE")
    os.environ["CMX_GEN_CACHE"] = str(tmp_path_factory.mktemp("cache"))
    out: dict[str, Path] = {}
    try:
        for board in BOARDS:
            app = tmp_path_factory.mktemp(board) / "app"
            project = project_mod.Project.single(model=str(DIGITS), board=board, rtos="baremetal", output=str(app))
            generate(project, app)
            out[board] = app
    finally:
        if old is None:
            os.environ.pop("CMX_GEN_CACHE", None)
        else:
            os.environ["CMX_GEN_CACHE"] = old
    return out


@needs_gcc
@pytest.mark.parametrize("board", BOARDS)
def test_app_sources_compile_against_wheel_headers(apps, board):
    app = apps[board]
    inc = wheel_include()
    common = cpu_flags(board) + [
        "-fsyntax-only",
        "-Wall",
        "-Wextra",
        "-Werror",
        f"-I{app / 'cmx/runner'}",
        f"-I{app / 'cmx/api'}",
        f"-I{app / 'cmx/app'}",
        f"-I{app / 'model'}",
    ]
    cxx = common + [
        "-std=c++17",
        "-fno-exceptions",
        "-fno-rtti",
        "-Wno-unused-parameter",
        "-DC10_USING_CUSTOM_GENERATED_MACROS",
        '-DCMX_ARENA_SECTION=".cmx_arena"',
        f"-I{inc}",
        f"-I{inc / 'executorch/runtime/core/portable_type/c10'}",
    ]
    # the runner also as the profile and trace images compile it (CMX_PROFILE / CMX_TRACE + the hooks)
    for source, extra in [
        ("cmx/runner/cmx_runner.cpp", []),
        ("model/cmx_kernels.cpp", []),
        ("cmx/api/cmx_api.cpp", []),
        ("cmx/api/cmx_model_instance.cpp", []),
        ("cmx/runner/cmx_runner.cpp", ["-DCMX_PROFILE=1", "-DET_EVENT_TRACER_ENABLED"]),
        ("cmx/runner/cmx_runner.cpp", ["-DCMX_TRACE=1", "-DET_EVENT_TRACER_ENABLED"]),
    ]:
        done = subprocess.run(["arm-none-eabi-g++", *cxx, *extra, str(app / source)], capture_output=True, text=True)
        # ExecuTorch's own headers are not -Wextra clean: only our files must be warning-free.
        ours = [l for l in done.stderr.splitlines() if str(app) in l and ("error" in l or "warning" in l)]
        assert done.returncode == 0 or not ours, f"{source}:\n{done.stderr[-3000:]}"
        assert not ours, "\n".join(ours)
    for source in [
        "platform/startup.c",
        "platform/platform.c",
        "model/cmx_model_io.c",
        "user/main.c",
        "cmx/app/cmx_app.c",
        "cmx/runner/cmx_check_main.c",
    ]:
        done = subprocess.run(["arm-none-eabi-gcc", *common, str(app / source)], capture_output=True, text=True)
        assert done.returncode == 0, f"{source}:\n{done.stderr[-3000:]}"


@needs_gcc
@pytest.mark.parametrize("board", BOARDS)
def test_linker_script_places_every_section_where_the_placement_says(apps, board, tmp_path):
    """Link startup + platform + the embedded program + a stub runner with the generated script."""
    app = apps[board]
    stub = tmp_path / "stub.c"
    stub.write_text(
        '#include "cmx_platform.h"\n'
        'static volatile unsigned char pool[4096] __attribute__((section(".cmx_arena"), aligned(16)));\n'
        "extern const unsigned char cmx_model_pte[];\n"
        "int cmx_run(void) { cmx_platform_init(); pool[0] = cmx_model_pte[4]; return pool[0] == 'E' ? 0 : 1; }\n"
    )
    elf = link_with_stub(app, board, stub, tmp_path / "stub.elf")
    regions, sections = build.memory_use(elf, app / "linker.ld")
    where = {}
    for s in sections:
        if "ALLOC" in s.flags and s.size:
            where[s.name] = next(r.name.lower() for r in regions if r.contains(s.vma))
    plan = placement(app)
    assert where[".text"] == plan["code_region"]
    assert where[".cmx_model"] == plan["pte_region"]
    assert where[".stack"] == plan["data_region"]
    assert where[".cmx_arena"] == plan["arena_region"]
    by_name = {s.name: s for s in sections}
    assert by_name[".cmx_model"].vma % 16 == 0, "Program::load needs the .pte aligned"
    assert by_name[".cmx_model"].size >= (app / "model" / "model.pte").stat().st_size
    assert by_name[".stack"].size >= plan["stack_bytes"]
    for r in regions:
        assert r.used <= r.length, f"region {r.name} overflows"


def test_cmake_configure_without_sdk_stops_with_the_fix(apps, tmp_path):
    if shutil.which("cmake") is None or GCC is None:
        pytest.skip("cmake or arm-none-eabi-gcc is not installed")
    app = apps["mps3-an547"]
    env = {k: v for k, v in os.environ.items() if k not in ("EXECUTORCH_ROOT", "CMSIS_NN_PATH")}
    done = subprocess.run(
        ["cmake", "-S", str(app), "-B", str(tmp_path / "b"), "-G", "Ninja"], capture_output=True, text=True, env=env
    )
    assert done.returncode != 0
    assert "cmx-gen: the ExecuTorch/CMSIS-NN SDK is missing" in done.stderr
    assert "EXECUTORCH_ROOT" in done.stderr and "cmx-gen sdk --clone" in done.stderr
    assert "CMSIS_NN_PATH" in done.stderr
    # the toolchain file and project() worked: it got as far as the SDK check
    assert "arm-none-eabi-gcc" in (tmp_path / "b" / "CMakeCache.txt").read_text()


def test_sdk_errors_name_the_fix(tmp_path):
    with pytest.raises(SdkError) as err:
        sdk.require({"EXECUTORCH_ROOT": str(tmp_path), "PATH": os.environ.get("PATH", "")})
    line = err.value.one_line()
    assert "is not an ExecuTorch source checkout" in line and "CMSIS_NN_PATH is not set" in line
    assert "cmx-gen sdk --clone" in line and "EXECUTORCH_ROOT=" in line


def test_build_refuses_a_folder_that_is_not_an_app(tmp_path):
    from cmx_gen.common.errors import BuildError

    with pytest.raises(BuildError, match="not a generated bare-metal app"):
        build.build(tmp_path)


def test_model_files_match_the_program(apps):
    app = apps["mps3-an547"]
    pte = (app / "model" / "model.pte").read_bytes()
    report = json.loads((app / "model" / "report.json").read_text())
    header = (app / "model" / "cmx_model.h").read_text()
    needs = allocator_needs(pte)
    method = int(re.search(r"CMX_METHOD_POOL_BYTES (\d+)u", header).group(1))
    assert needs.method_bytes <= method <= needs.method_bytes * 1.05, "method pool: never short, at most 5 % over"
    parts = dict(needs.parts)
    assert sum(parts.values()) == needs.method_bytes and {"values", "tensors", "instructions"} <= set(parts) <= {
        "values",
        "tensors",
        "lists",
        "instructions",
    }
    planned = re.search(r"CMX_PLANNED_BUFFER_SIZES \{([^}]*)\}", header).group(1)
    assert [int(x.strip().rstrip("u")) for x in planned.split(",")] == report["memory"]["planned_buffer_sizes"]
    ops = (app / "model" / "cmx_ops.cmake").read_text()
    kset = codegen.split_ops(operator_names(pte))
    assert kset.cortex_m and f"set(CMX_CORTEX_M_OPS {' '.join(chr(34) + o + chr(34) for o in kset.cortex_m)})" in ops
    assert f"Kernels: {kset.kernel_count}." in (app / "model" / "cmx_kernels.cpp").read_text()
    asm = (app / "model" / "model_pte.S").read_text()
    assert ".balign 16" in asm and '.incbin "model.pte"' in asm and "cmx_model_pte_end" in asm


def test_reference_data_is_in_the_programs_dim_order():
    import numpy as np

    x = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    laid = dim_order.to_layout(x, [0, 2, 3, 1])
    assert laid.tobytes() == np.ascontiguousarray(x.transpose(0, 2, 3, 1)).tobytes()
    assert dim_order.to_layout(x, [0, 1, 2, 3]).tobytes() == x.tobytes()


def test_registration_source_registers_exactly_the_given_ops():
    ops = ["cortex_m::quantized_linear.out", "dim_order_ops::_clone_dim_order.out", "executorch_prim::add.Scalar"]
    kset = codegen.split_ops(ops)
    assert kset.cortex_m == ("quantized_linear",) and kset.portable == ("_clone_dim_order",) and kset.prim_ops
    text = codegen.registration_source(ops)
    assert text.count("Kernel(") == 2 and '"cortex_m::quantized_linear.out"' in text
    assert 'extern "C" int cmx_register_kernels(void)' in text


# ops_cmake reads only the core, its ISA and the executorch version of a report
_REPORT = SimpleNamespace(target=SimpleNamespace(core="cortex-m55", isa="MVE"), executorch_version="1.5.1")


def test_a_float_programs_operator_links_the_optimized_librarys_kernel(monkeypatch, tmp_path):
    """aten::linear.out (upstream's flow without --quantize) has no portable or cortex_m kernel. Without
    the SDK the error says it is a float program's operator, how to get an int8 one, and that with
    EXECUTORCH_ROOT cmx-gen links the optimized library's; with an SDK whose optimized.yaml has it, the
    kernel is registered and kernels/ builds kernels/optimized/cpu/op_linear.cpp (issue 36)."""
    from cmx_gen.app import shared_files
    from cmx_gen.common.errors import RenderError

    monkeypatch.delenv("EXECUTORCH_ROOT", raising=False)
    monkeypatch.setenv("CMX_GEN_CACHE", str(tmp_path / "cache"))
    with pytest.raises(RenderError) as err:
        codegen.registration_source(["aten::linear.out"])
    line = err.value.one_line()
    assert "float operator(s) aten::linear.out of an unquantized program" in line and "EXECUTORCH_ROOT" in line
    assert "quantizes it to int8" in line and "version that renders" not in line
    assert codegen.split_ops(["aten::linear.out"]).optimized == ()

    sdk = tmp_path / "executorch"
    (sdk / "kernels" / "optimized").mkdir(parents=True)
    (sdk / "kernels" / "optimized" / "optimized.yaml").write_text(
        "- op: linear.out\n  kernels:\n    - arg_meta: null\n      kernel_name: torch::executor::opt_linear_out\n"
        "- op: add.out\n  kernels:\n    - arg_meta: null\n      kernel_name: torch::executor::opt_add_out\n"
    )
    monkeypatch.setenv("EXECUTORCH_ROOT", str(sdk))
    kset = codegen.split_ops(["aten::linear.out", "aten::add.out"])
    assert kset.optimized == ("linear",) and kset.portable == ("add",), "portable's own kernel wins where it has one"
    text = codegen.registration_source(["aten::linear.out"])
    assert '"aten::linear.out"' in text and "opt_linear_out(" in text
    assert 'set(CMX_OPTIMIZED_OPS "linear")' in shared_files.ops_cmake(_REPORT, kset)
    with pytest.raises(RenderError) as err:
        codegen.registration_source(["aten::lgamma.out"])
    assert "neither portable, cortex_m nor the optimized library" in err.value.one_line()


def test_result_line_parsing():
    out = "boot\ncmx-gen: PASS max_abs_err=0 instr=1810234 method=11552/11776 planned=20464/20464 temp=212/448\n"
    result = parse_result_line(out)
    assert result and result.passed and result.count == ("instr", 1810234)
    assert result.pool("method") == (11552, 11776) and result.pool("temp") == (212, 448)
    assert parse_result_line(out.strip() + " stack=2472/16384").pool("stack") == (2472, 16384)
    fail = parse_result_line("cmx-gen: FAIL error=load_method:0x14 method=100/50 planned=0/0 temp=0/448")
    assert fail and not fail.passed and fail.fields["error"] == "load_method:0x14"
    assert parse_result_line("no verdict here") is None


def test_qemu_command_counts_instructions_and_exits_via_semihosting():
    cmd = QemuRunner(load_board("mps3-an547")).command(Path("fw.elf"))
    assert cmd[:5] == ["qemu-system-arm", "-M", "mps3-an547", "-cpu", "cortex-m55"]
    joined = " ".join(cmd)
    assert "-icount shift=0" in joined and "-semihosting-config enable=on,target=native" in joined
    assert cmd[-2:] == ["-kernel", "fw.elf"]


def test_toolchain_flags_match_the_board_model_for_every_board():
    """The template's -mcpu/-mfpu rules must agree with cmx_gen.fit.boards (a core without DSP or FPU
    running DSP/FP code faults: mps2-an521's M33 has neither)."""
    import jinja2

    from cmx_gen.fit.boards import load_boards

    src = (ROOT / "templates/baremetal_app/{{cookiecutter.app_dir}}/cmake/arm-none-eabi.cmake").read_text()
    for board in load_boards():
        out = jinja2.Environment().from_string(src).render(cookiecutter={"board": board.model_dump(mode="json")})
        want = " ".join(board.core.gcc_flags) + " -mthumb"
        assert f'set(CMX_CPU_FLAGS "{want}")' in out, board.id


def test_sdk_command_reports_what_is_missing(capsys, monkeypatch):
    from conftest import run_cli

    monkeypatch.delenv("EXECUTORCH_ROOT", raising=False)
    monkeypatch.delenv("CMSIS_NN_PATH", raising=False)
    assert run_cli("sdk") == 1
    out = capsys.readouterr().out
    assert "missing: EXECUTORCH_ROOT is not set" in out and "cmx-gen sdk --clone" in out
    assert "arm-none-eabi-gcc" in out and "flatc" in out


@needs_gcc
@pytest.mark.parametrize("pal_provided,defines_pal", [(False, True), (True, False)])
def test_runner_defines_the_pal_hooks_only_without_a_platform_pal(apps, tmp_path, pal_provided, defines_pal):
    """ExecuTorch's Zephyr module brings strong et_pal_* hooks: the runner must then leave them out."""
    app = apps["mps3-an547"]
    inc = wheel_include()
    obj = tmp_path / "runner.o"
    cmd = [
        "arm-none-eabi-g++",
        *cpu_flags("mps3-an547"),
        "-c",
        "-std=c++17",
        "-fno-exceptions",
        "-fno-rtti",
        "-DC10_USING_CUSTOM_GENERATED_MACROS",
        '-DCMX_ARENA_SECTION=".cmx_arena"',
        f"-I{app / 'cmx/runner'}",
        f"-I{app / 'cmx/api'}",
        f"-I{app / 'model'}",
        f"-I{inc}",
        f"-I{inc / 'executorch/runtime/core/portable_type/c10'}",
        *(["-DCMX_PAL_PROVIDED=1"] if pal_provided else []),
        str(app / "cmx/runner/cmx_runner.cpp"),
        "-o",
        str(obj),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    symbols = subprocess.run(["arm-none-eabi-nm", "--defined-only", str(obj)], capture_output=True, text=True).stdout
    defined = {line.split()[-1] for line in symbols.splitlines() if line.split()[-1].startswith("et_pal_")}
    assert (defined == {"et_pal_current_ticks", "et_pal_emit_log_message", "et_pal_abort"}) is defines_pal, defined


# ----------------------------------------------------------------- console on the board's UART


@needs_gcc
@pytest.mark.skipif(shutil.which("qemu-system-arm") is None, reason="qemu-system-arm is not installed")
@pytest.mark.parametrize("board", ["mps3-an547", "mps2-an386", "mps2-an505"])
def test_uart_console_runs_stand_alone_on_qemu(apps, board, tmp_path):
    """-D CMX_CONSOLE=uart -D CMX_SEMIHOSTING=OFF (preset "board"): the result line goes out on the
    board's CMSDK UART, the image makes no semihosting call (it would stop a core without a
    debugger), and `cmx-gen run` stops the emulator once the line is printed."""
    app = apps[board]
    stub = tmp_path / "stub.c"
    stub.write_text(RESULT_STUB)
    alone = link_with_stub(app, board, stub, tmp_path / "alone.elf", "-DCMX_CONSOLE_UART=1", "-DCMX_SEMIHOSTING=0")
    disassembly = subprocess.run(["arm-none-eabi-objdump", "-d", str(alone)], capture_output=True, text=True).stdout
    assert "bkpt" not in disassembly, "a stand-alone image must not contain semihosting calls"
    result = QemuRunner(load_board(board), timeout=60).run(alone)
    assert result.passed and result.exit_code is None, result.output
    # The same line through the UART but the exit through semihosting: QEMU exits with PASS's 0.
    hosted = link_with_stub(app, board, stub, tmp_path / "hosted.elf", "-DCMX_CONSOLE_UART=1")
    result = QemuRunner(load_board(board), timeout=60).run(hosted)
    assert result.passed and result.exit_code == 0


@needs_gcc
def test_uart_console_is_refused_where_the_board_has_none(apps):
    app = apps["nucleo-h743zi"]
    assert load_board("nucleo-h743zi").uart is None
    done = subprocess.run(
        [
            "arm-none-eabi-gcc",
            *cpu_flags("nucleo-h743zi"),
            "-fsyntax-only",
            "-DCMX_CONSOLE_UART=1",
            f"-I{app / 'cmx/runner'}",
            str(app / "platform/platform.c"),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0 and "nucleo-h743zi has no UART cmx-gen drives" in done.stderr
    cmake = (app / "CMakeLists.txt").read_text()
    assert "CMX_CONSOLE=uart: nucleo-h743zi has no UART" in cmake
    assert '"board"' not in (app / "CMakePresets.json").read_text(), "no stand-alone preset without a UART"
    assert '"name": "board"' in (apps["mps3-an547"] / "CMakePresets.json").read_text()


def test_build_errors_quote_the_cmake_message():
    log = [
        "-- Configuring incomplete",
        "CMake Error at CMakeLists.txt:40 (message):",
        "  CMX_CONSOLE=uart: nucleo-h743zi has no UART cmx-gen drives; use",
        "  semihosting",
        "",
        "-- Configuring incomplete, errors occurred!",
    ]
    assert build_tool.error_summary(log) == (
        "CMake Error at CMakeLists.txt:40 (message): CMX_CONSOLE=uart: "
        "nucleo-h743zi has no UART cmx-gen drives; use semihosting"
    )
    assert (
        build_tool.error_summary(["[3/9] Building C", "foo.c:1:1: error: bad", "ninja: build stopped"])
        == "foo.c:1:1: error: bad"
    )


def test_runner_gives_up_at_its_timeout_with_the_last_output(tmp_path):
    """A firmware that hangs before its result line: a one-line RunError with what it printed."""
    from cmx_gen.common.errors import RunError

    class Hangs(QemuRunner):
        def command(self, elf: Path) -> list[str]:
            return ["sh", "-c", "echo booting; sleep 30"]

    with pytest.raises(RunError, match=r"did not finish within 1 s; last output: 'booting'"):
        Hangs(load_board("mps3-an547"), timeout=1).run(tmp_path / "none.elf")


@needs_gcc
@pytest.mark.skipif(shutil.which("qemu-system-arm") is None, reason="qemu-system-arm is not installed")
def test_code_outside_the_boot_region_boots_and_runs_on_qemu(apps, tmp_path):
    """A placement whose code does not fit the ITCM (575 KiB of fp32 fallbacks, issue 11): the
    vector table stays in the ITCM where the core boots, .text goes to SRAM, and the image runs."""
    from reports import big_fallback_report

    from cmx_gen.app.render import render_app
    from cmx_gen.fit.memory import plan

    board = load_board("mps3-an547")
    placement = plan(big_fallback_report(575 * 1024), board)
    assert placement.code_region == "isram"
    app = tmp_path / "app"
    project = project_mod.Project.single(model=str(DIGITS), board=board.id, rtos="baremetal", output=str(app))
    done = generate(project, app)
    render_app(project, [done.artifacts], board, placement, app, force=True)
    stub = tmp_path / "stub.c"
    stub.write_text(RESULT_STUB)
    elf = link_with_stub(app, "mps3-an547", stub, tmp_path / "far.elf")
    regions, sections = build.memory_use(elf, app / "linker.ld")
    where = {
        s.name: next(r.name.lower() for r in regions if r.contains(s.vma))
        for s in sections
        if "ALLOC" in s.flags and s.size
    }
    assert where[".vectors"] == "itcm" and where[".text"] == "isram"
    result = QemuRunner(board, timeout=60).run(elf)
    assert result.passed and result.exit_code == 0, result.output


def test_a_project_named_like_an_application_keeps_its_check_image(tmp_path):
    """Issue 55: `cmx-gen create model.py:Net` in the model's own folder names the project `cmx_app`;
    its check image `cmx_app.elf` was taken for the user's application and `build` found "no .elf".
    The CMake cache names the project: `<name>.elf` is the check, `<name>_app.elf` the application."""
    (tmp_path / "CMakeCache.txt").write_text("CMAKE_PROJECT_NAME:STATIC=cmx_app\n")
    for name in ("cmx_app.elf", "cmx_app_app.elf"):
        (tmp_path / name).write_bytes(b"\x7fELF")
    assert build.find_elf(tmp_path).name == "cmx_app.elf"
    assert build.find_elf(tmp_path, user_app=True).name == "cmx_app_app.elf"
    (tmp_path / "cmx_app.elf").unlink()
    with pytest.raises(Exception, match="no .elf"):
        build.find_elf(tmp_path)
