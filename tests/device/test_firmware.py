"""Build and run generated bare-metal apps on QEMU: PASS, bit-exact, pools proven by the firmware.

Needs the firmware SDK (EXECUTORCH_ROOT, CMSIS_NN_PATH; see `cmx-gen sdk`) and qemu-system-arm.
Without them every test here is skipped and says why.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIRMWARE, ROOT, read_report, run_cli

from cmx_gen.app import project as project_mod
from cmx_gen.app.folder import AppFolder
from cmx_gen.app.kinds.baremetal import build
from cmx_gen.device.runners import QemuRunner
from cmx_gen.fit.boards import load_board
from cmx_gen.pipeline.generate import generate
from cmx_gen.program.pte import allocator_needs

pytestmark = FIRMWARE

DIGITS = ROOT / "samples" / "digits" / "model.py:DigitsCNN"
DS_CNN = ROOT / "samples" / "ds_cnn" / "model.py:DSCNN"


def create_build_run(model: Path, board_id: str, folder: Path, **project):
    app = folder / "app"
    generate(
        project_mod.Project.single(model=str(model), board=board_id, rtos="baremetal", output=str(app), **project), app
    )
    built = build.build(app, jobs=2)
    result = QemuRunner(load_board(board_id), timeout=300).run(built.elf)
    return app, built, result


def check_pass(app: Path, built: build.BuildResult, result, text_limit: int | None = 120 * 1024) -> None:
    assert result.passed, result.output[-2000:]
    assert result.exit_code == 0, "the semihosting exit status must follow PASS"
    assert result.fields["max_abs_err"] == "0", "on-target output must match the Python reference bit for bit"
    needs = allocator_needs((app / "model" / "model.pte").read_bytes())
    used, allocated = result.pool("method")
    assert used == needs.method_bytes, "cmx_gen.program.method_pool must predict the method allocator exactly"
    assert used <= allocated <= used * 1.05 + 16, "method pool: never short, at most 5 % over"
    used, allocated = result.pool("planned")
    assert used == allocated, "planned buffers are sized exactly from the plan"
    used, allocated = result.pool("temp")
    assert used == needs.temp_used_bytes and used <= allocated
    used, size = result.pool("stack")
    assert 0 < used < size, "the bare-metal platform paints the stack and reports its high-water mark"
    kind, count = result.count
    assert kind == "instr" and count > 1_000
    if text_limit is not None:  # the goal for CMSIS-NN-only models; portable fp32 kernels are larger
        assert built.text_bytes <= text_limit, f".text {built.text_bytes} B exceeds the {text_limit // 1024} KB goal"


@pytest.mark.parametrize("board", ["mps3-an547", "mps2-an386", "mps2-an505"])
def test_digits_pass_bit_exact_on_qemu(tmp_path, board):
    app, built, result = create_build_run(DIGITS, board, tmp_path)
    check_pass(app, built, result)
    print(f"\n{board}: {result.line}  build {built.seconds:.1f} s  .text {built.text_bytes} B")


@pytest.mark.slow
@pytest.mark.parametrize("board", ["mps3-an547", "mps2-an386", "mps2-an505"])
def test_ds_cnn_pass_bit_exact_on_qemu(tmp_path, board):
    app, built, result = create_build_run(DS_CNN, board, tmp_path)
    check_pass(app, built, result)
    if board == "mps3-an547":
        # Issue 4 measured 1.81 M instructions per inference with upstream's runtime build.
        assert result.count[1] < 2_000_000
    print(f"\n{board}: {result.line}  build {built.seconds:.1f} s  .text {built.text_bytes} B")


@pytest.mark.parametrize("board", ["mps3-an547", "mps2-an386", "mps2-an505"])
def test_residual_net_passes_against_the_cmsis_nn_kernels(tmp_path, board, capsys):
    """Its avg_pool2d rounds one LSB apart in ExecuTorch's Python op: the firmware is checked
    bit-exact against the C kernel's arithmetic, and `run` says by how much and where the two part."""
    app, built, result = create_build_run(
        ROOT / "tests" / "toy_models" / "small.py:Residual",
        board,
        tmp_path,
        input_shape="1,3,16,16",
        random_calibration=True,
    )
    check_pass(app, built, result)
    capsys.readouterr()
    assert run_cli("run", app) == 0
    out = capsys.readouterr().out
    assert "cmx-gen: PASS max_abs_err=0" in out
    assert "differs from the CMSIS-NN kernels by 1 LSB" in out and "cortex_m::quantized_avg_pool2d" in out
    print(f"\n{board}: {result.line}")


@pytest.mark.parametrize("board", ["mps3-an547", "mps2-an386"])
def test_one_input_channel_conv_runs_as_a_convolution(tmp_path, board):
    """CMSIS-NN's convolution, not its depthwise kernel with a channel multiplier (conv_choice.py): bit-exact."""
    app, built, result = create_build_run(
        ROOT / "tests" / "toy_models" / "small.py:OneChannelIn",
        board,
        tmp_path,
        input_shape="1,1,20,12",
        random_calibration=True,
    )
    check_pass(app, built, result)
    report = read_report(app / "model")
    convs = [layer["op"] for layer in report["delegated_layers"] if "conv" in layer["op"]]
    assert convs == ["cortex_m::quantized_conv2d"] * 2, "both run CMSIS-NN's convolution inside cmx-gen's backend"


@pytest.mark.parametrize(
    "name, shape", [("EltwiseNet", "1,32"), ("Unsupported", "1,16"), ("OneChannelPool", "1,1,6,6")]
)
def test_elementwise_ops_and_a_portable_fallback_pass_on_m55(tmp_path, name, shape):
    """add/mul/minimum/softmax on CMSIS-NN; cumsum and a dilated max pool on portable kernels."""
    app, built, result = create_build_run(
        ROOT / "tests" / "toy_models" / f"small.py:{name}",
        "mps3-an547",
        tmp_path,
        input_shape=shape,
        random_calibration=True,
    )
    check_pass(app, built, result)
    ops = (app / "model" / "cmx_ops.cmake").read_text()
    if name == "Unsupported":
        assert 'set(CMX_PORTABLE_OPS "cumsum")' in ops
    elif name == "OneChannelPool":  # upstream's maxpool_dilation: stopped with execute:0x12 before
        assert 'set(CMX_PORTABLE_OPS "max_pool2d_with_indices")' in ops
    else:
        assert "set(CMX_PORTABLE_OPS )" in ops


@pytest.mark.parametrize("board", ["mps3-an547", "mps2-an386"])
@pytest.mark.parametrize("name", ["Upsampler", "UpsamplerK4Relu", "UpsamplerK3", "UpsamplerK3Relu"])
def test_strided_padded_transpose_conv_is_rewritten_exactly(tmp_path, board, name):
    """ConvTranspose2d(k=4 or 3, stride=2, padding=1) +- ReLU: was refused (CMSIS-NN places the padding
    elsewhere); now computed with padding 0 on CMSIS-NN and cropped, bit-exact on the target."""
    app, built, result = create_build_run(
        ROOT / "tests" / "toy_models" / f"small.py:{name}",
        board,
        tmp_path,
        input_shape="1,4,5,5",
        random_calibration=True,
    )
    check_pass(app, built, result)
    report = __import__("json").loads((app / "model" / "report.json").read_text())
    assert [r["op"] for r in report["rewrites"]] == ["aten::conv_transpose2d"]
    names = [op["name"] for op in report["operators"]]
    # the crop: a slice, which cmx-gen's backend runs as its copy_region layer (42cc4c3)
    assert "cortex_m::quantized_transpose_conv2d.out" in names
    assert "cmx::copy_region" in names or "aten::slice_copy.Tensor_out" in names
    assert ("cortex_m::quantized_activation.out" in names) is False, "the ReLU stays fused into the convolution"


def test_cli_build_and_run_follow_pass(tmp_path, capsys):
    from conftest import run_cli

    app = tmp_path / "app"
    assert run_cli("create", str(DIGITS), "--board", "mps3-an547", "--rtos", "baremetal", "-o", app) == 0
    assert run_cli("build", app) == 0
    out = capsys.readouterr().out
    assert ".text" in out and "itcm" in out and "dtcm" in out
    assert run_cli("run", app) == 0
    out = capsys.readouterr().out
    assert "cmx-gen: PASS max_abs_err=0 instr=" in out
    # The app README's example line predicted this run's method and planned pools exactly.
    import re

    example = re.search(r"^cmx-gen: PASS .*$", (app / "README.md").read_text(), re.M).group(0)
    for pool in ("method", "planned"):
        assert re.search(rf" {pool}=(\S+)", example).group(1) == re.search(rf" {pool}=(\S+)", out).group(1)
    assert run_cli("run", app, "--dry-run") == 0
    assert "-icount shift=0" in capsys.readouterr().out
    # A build that fails leaves no image behind for `run` to report on as if it were this code.
    main_c = app / "user" / "main.c"
    main_c.write_text(main_c.read_text() + "\n#error a broken edit\n")
    assert run_cli("build", app) == 2
    assert not list((app / "build").glob("*.elf"))
    capsys.readouterr()
    assert run_cli("run", app) == 2
    assert "cmx-gen build" in capsys.readouterr().err


@pytest.mark.parametrize("board", ["mps3-an547", "mps2-an386"])
def test_stand_alone_uart_image_passes(tmp_path, board):
    """The "board" preset's settings: result line on the UART, no semihosting anywhere in the image."""
    app = tmp_path / "app"
    generate(project_mod.Project.single(model=str(DIGITS), board=board, rtos="baremetal", output=str(app)), app)
    built = build.build(app, jobs=2, defines=["CMX_CONSOLE=uart", "CMX_SEMIHOSTING=OFF"])
    result = QemuRunner(load_board(board), timeout=300).run(built.elf)
    assert result.passed and result.fields["max_abs_err"] == "0", result.output[-2000:]
    assert result.exit_code is None, "a stand-alone image never exits: the runner stops it after the line"
    print(f"\n{board} (uart, no semihosting): {result.line}")


def test_attention_with_keep_fp32_passes_on_m55(tmp_path):
    """Issue 11: the pass that fails on the second bmm is avoided by leaving that line in float;
    its float linear becomes portable addmm (ExecuTorch has no portable linear) and the app runs."""
    from conftest import SMALL, second_bmm_line

    app, built, result = create_build_run(
        f"{SMALL}:Attention",
        "mps3-an547",
        tmp_path,
        input_shape="1,8,16",
        random_calibration=True,
        keep_fp32=[second_bmm_line()],
    )
    check_pass(app, built, result, text_limit=None)
    ops = (app / "model" / "cmx_ops.cmake").read_text()
    assert "addmm" in ops and "bmm" in ops


@pytest.mark.parametrize("board", ["mps3-an547", "mps2-an386"])
def test_attention_with_a_float_island_passes(tmp_path, board, capsys, monkeypatch):
    """Issue 34: with the bmm on upstream's cortex_m path (cmx-gen's own cmx::bmm turned off), the
    bmm upstream's pass fails on becomes a float island on its own (float_islands.py): the app builds
    and runs bit-exact, and create's output, report.json and the HTML page name the island, the pass
    and the user's line."""
    from conftest import SMALL, second_bmm_line

    from cmx_gen.lower.ops import own_ops
    from cmx_gen.lower.rewrites import exact_rewrites

    monkeypatch.setattr(
        exact_rewrites, "REWRITES", tuple(r for r in exact_rewrites.REWRITES if r is not own_ops.as_own_op)
    )
    app = tmp_path / "app"
    args = ("--input-shape", "1,8,16", "--random-calibration", "--board", board, "--no-cache", "-o", app)
    assert run_cli("create", f"{SMALL}:Attention", *args) == 0
    out = capsys.readouterr().out
    assert f"float      aten::bmm (Attention, {second_bmm_line()} " in out and "left in float by cmx-gen" in out
    islands = [p for p in AppFolder(app).report().float_parts if p.why == "island"]
    assert [p.ops for p in islands] == [["aten::bmm"]] and "ReplaceScalarWithTensorArgPass" in islands[0].reason
    page = (app / "report.html").read_text()
    assert 'id="float-parts"' in page and "ReplaceScalarWithTensorArgPass failed on it" in page
    built = build.build(app, jobs=2)
    result = QemuRunner(load_board(board), timeout=300).run(built.elf)
    check_pass(app, built, result, text_limit=None)
    ops = (app / "model" / "cmx_ops.cmake").read_text()
    assert "bmm" in ops, "the island's float bmm is on a portable kernel"
    print(f"\n{board} (attention, bmm island): {result.line}")


@pytest.mark.parametrize("board", ["mps3-an547", "mps2-an386"])
@pytest.mark.parametrize("model, shape", [("Attention", "1,8,16"), ("EncoderBlock", "1,16,32")])
def test_attention_and_encoder_run_all_int8(tmp_path, board, model, shape):
    """Issue 34: bmm on arm_batch_matmul_s8, the attention's scale as a table, LayerNorm and the mean
    on cmx-gen's kernels: nothing computes in float but the input's quantize and the output's
    dequantize, and the run is bit-exact."""
    from conftest import SMALL

    app, built, result = create_build_run(
        f"{SMALL}:{model}", board, tmp_path, input_shape=shape, random_calibration=True
    )
    check_pass(app, built, result)
    report = AppFolder(app).report()
    assert report.float_parts == [] and report.fallbacks == []
    boundaries = {op.name: op.count for op in report.operators if op.class_ == "quant_boundary"}
    assert boundaries == {"cortex_m::quantize_per_tensor.out": 1, "cortex_m::dequantize_per_tensor.out": 1}
    print(f"\n{board} ({model}, all int8): {result.line}")


# The float fallbacks issue 34 measured against (QEMU M55, --keep-fp32 on the recurrent line):
# LSTM 39,091,563 instructions, GRU 29,682,406; the bars are 20x and 10x fewer.
RECURRENT_BARS = {
    "LstmKws": ("cmx::quantized_lstm", 39_091_563 // 20),
    "GruKws": ("cmx::quantized_gru", 29_682_406 // 10),
}


@pytest.mark.parametrize("board", ["mps3-an547", "mps2-an386"])
@pytest.mark.parametrize("model", sorted(RECURRENT_BARS))
def test_recurrent_keyword_spotter_runs_as_one_int8_call(tmp_path, board, model):
    """Issue 34: the 49-step LSTM (arm_lstm_unidirectional_s8) and GRU (cmx_gru_s8) keyword spotters,
    bit-exact, all steps in one int8 call, within the bars' instructions, both pools within 8 KB."""
    from conftest import SMALL

    app, built, result = create_build_run(
        f"{SMALL}:{model}", board, tmp_path, input_shape="1,49,10", random_calibration=True
    )
    check_pass(app, built, result)
    op, bar = RECURRENT_BARS[model]
    assert [layer.op for layer in AppFolder(app).report().delegated_layers].count(op) == 1
    assert result.count[1] <= bar, result.line
    assert result.pool("method")[0] <= 8 * 1024 and result.pool("planned")[0] <= 8 * 1024, result.line
    print(f"\n{board} ({model} 49 x 10 -> 32 -> 12): {result.line}")


@pytest.mark.parametrize("board", ["mps3-an547", "mps2-an386"])
def test_int8_io_digits_passes_bit_exact(tmp_path, board):
    """--io int8: int8 in, int8 out, no quantize/dequantize kernels; checked in integer steps."""
    app, built, result = create_build_run(DIGITS, board, tmp_path, io="int8")
    check_pass(app, built, result)
    ops = (app / "model" / "cmx_ops.cmake").read_text()
    assert "quantize_per_tensor" not in ops
    assert "#define CMX_IO_INT8 1" in (app / "model" / "cmx_model.h").read_text()
    print(f"\n{board} (--io int8): {result.line}  .text {built.text_bytes} B")


@pytest.mark.parametrize("board", ["mps3-an547", "mps2-an386"])
@pytest.mark.parametrize("model, shape", [("NormOut", "1,8,16"), ("TableOut", "1,8,16"), ("NormMean", "1,8,24")])
def test_int8_io_output_of_an_own_int8_op_passes_bit_exact(tmp_path, board, model, shape):
    """--io int8 where the model returns a LayerNorm, a table or a mean (cmx-gen's int8 ops): the op's
    int8 is the output (was refused at delegation)."""
    from conftest import SMALL

    app, built, result = create_build_run(
        f"{SMALL}:{model}", board, tmp_path, input_shape=shape, random_calibration=True, io="int8"
    )
    check_pass(app, built, result)
    print(f"\n{board} ({model}, --io int8): {result.line}")


def test_uart_image_passes_through_a_serial_port(tmp_path, capsys):
    """The real digits image, UART console, read by `cmx-gen run --serial` from a pty that QEMU's
    UART feeds: the same verdict as under QEMU, through the serial path a board on a desk uses."""
    from conftest import run_serial_fed_by_qemu

    app = tmp_path / "app"
    generate(project_mod.Project.single(model=str(DIGITS), board="mps2-an386", rtos="baremetal", output=str(app)), app)
    built = build.build(app, jobs=2, defines=["CMX_CONSOLE=uart", "CMX_SEMIHOSTING=OFF"])
    code = run_serial_fed_by_qemu(app, built.elf, "mps2-an386", timeout=120)
    out = capsys.readouterr().out
    assert code == 0, out
    assert "cmx-gen: PASS max_abs_err=0 instr=" in out
    print(f"\nserial: {out.splitlines()[0]}")


def test_app_in_a_path_with_a_space_and_non_ascii_letters(tmp_path, capsys):
    """create/build/run/regen through the CLI in `my app ü/`, and the printed `next` line pastes
    into a shell as it is (issue 22)."""
    import shlex

    app = tmp_path / "my app ü" / "digits app"
    assert run_cli("create", DIGITS, "--board", "mps3-an547", "--rtos", "baremetal", "-o", app) == 0
    next_line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("next"))
    assert shlex.split(next_line.split(None, 1)[1])[:3] == ["cmx-gen", "build", str(app)]
    assert run_cli("build", app) == 0
    assert run_cli("run", app) == 0
    assert run_cli("run", app, "--app") == 0
    assert run_cli("regen", app) == 0
