"""The host side of the on-target profile and trace, without the SDK (CI): the program's instructions
named from the exported graph, their output locations and expected bytes, the console parsers, the
budget refusal, and the Zephyr options under the offline checks."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import yaml
from conftest import ROOT

from cmx_gen.app import project as project_mod
from cmx_gen.app.folder import AppFolder
from cmx_gen.app.kinds.zephyr.checks import check_compile, check_kconfig, check_twister
from cmx_gen.common.errors import FitError
from cmx_gen.device import profile, trace
from cmx_gen.device.runners.base import parse_result_line
from cmx_gen.fit import memory
from cmx_gen.pipeline.generate import generate
from cmx_gen.program import instructions
from cmx_gen.program.pte import PlanRow
from cmx_gen.program.report import Instruction, load_json

DIGITS = ROOT / "samples" / "digits" / "model.py:DigitsCNN"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """The per-operator program (delegate = false): one instruction per operator."""
    folder = tmp_path_factory.mktemp("digits") / "app"
    generate(
        project_mod.Project.single(
            model=str(DIGITS), board="mps3-an547", rtos="baremetal", output=str(folder), delegate=False
        ),
        folder,
    )
    return folder


@pytest.fixture(scope="module")
def delegated_app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("digits-delegated") / "app"
    generate(
        project_mod.Project.single(model=str(DIGITS), board="mps3-an547", rtos="baremetal", output=str(folder)), folder
    )
    return folder


def test_delegated_program_profiles_and_traces_layer_by_layer(delegated_app):
    """What the backend's layers print in the profile and trace images, parsed against the report."""
    data = load_json(delegated_app / "model" / "report.json")
    rows, layers = data.instructions, data.delegated_layers
    assert [r.op for r in rows] == [
        "cortex_m::quantize_per_tensor.out",
        "<DelegateCall>",
        "cortex_m::dequantize_per_tensor.out",
    ]
    assert [layer.module for layer in layers] == [
        "conv1",
        "conv2",
        "DigitsCNN",
        "conv3",
        "DigitsCNN",
        "conv4",
        "DigitsCNN",
        "fc",
    ]
    assert all(layer.traced for layer in layers)
    blob = (delegated_app / "model" / "trace_reference.bin").read_bytes()
    assert len(blob) == sum(r.output.nbytes for r in rows if r.traced) + sum(layer.nbytes for layer in layers)
    expected, expected_layers = trace.expected_outputs(rows, blob, layers)
    console = []
    for index, payload in expected.items():
        console.append(f"cmx-gen: trace {index} 0 {payload.hex()}")
    for debug, payload in expected_layers.items():
        if debug == layers[3].debug:
            payload = bytes([payload[0] ^ 1]) + payload[1:]
        for at in range(0, len(payload), 32):
            console.append(f"cmx-gen: trace_layer {debug} {at} {payload[at : at + 32].hex()}")
    differences, compared = trace.compare(rows, blob, "\n".join(console), layers)
    assert compared == 2 + len(layers)
    assert differences[0].op == "cmx cortex_m::quantized_conv2d" and differences[0].module == "conv3"
    # profile: the delegate's row keeps the backend's own loop, each layer gets a row after it
    line = "cmx-gen: PASS max_abs_err=0 instr=1000 method=1/2 planned=1/1 temp=1/2\n"
    prof_lines = [f"cmx-gen: prof {i} {c}" for i, c in enumerate([10, 900, 10])]
    prof_lines += [f"cmx-gen: prof_layer {layer.debug} 100" for layer in layers]
    result = parse_result_line(line + "\n".join(prof_lines))
    result.output = line + "\n".join(prof_lines)
    prof = profile.parse(result, rows, layers)
    assert [r.op for r in prof.rows][:3] == [
        "cortex_m::quantize_per_tensor.out",
        "cmx backend (loop)",
        "cmx cortex_m::quantized_conv2d",
    ]
    assert prof.rows[1].count == 900 - 100 * len(layers) and prof.summed == 920


@pytest.fixture(scope="module")
def zephyr_app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("digits-zephyr") / "app"
    generate(
        project_mod.Project.single(model=str(DIGITS), board="mps2-an521", rtos="zephyr", output=str(folder)), folder
    )
    return folder


def report(app) -> dict:
    return json.loads((app / "model" / "report.json").read_text())


def typed_rows(app) -> list[Instruction]:
    """report.json `instructions`, typed as profile.py and trace.py take them."""
    return load_json(app / "model" / "report.json").instructions


def test_every_instruction_is_named_and_located(app):
    rows = report(app)["instructions"]
    assert len(rows) == report(app)["program"]["instructions"] == 9
    assert [r["op"].split("::")[1].split(".")[0] for r in rows] == [
        "quantize_per_tensor",
        "quantized_conv2d",
        "quantized_conv2d",
        "quantized_max_pool2d",
        "quantized_conv2d",
        "quantized_max_pool2d",
        "quantized_conv2d",
        "quantized_linear",
        "dequantize_per_tensor",
    ]
    # module paths from nn_module_stack; functional calls name the class and the line
    assert [r["module"] for r in rows[1:8]] == ["conv1", "conv2", "DigitsCNN", "conv3", "DigitsCNN", "conv4", "fc"]
    assert rows[3]["source"].startswith("model.py:40 ") and "max_pool2d" in rows[3]["source"]
    planned = report(app)["memory"]["planned_buffer_sizes"]
    for row in rows:
        out = row["output"]
        assert out["reference"] and out["mem_id"] == 1
        assert out["offset"] + out["nbytes"] <= planned[0], "every output lies inside its planned buffer"


def test_trace_reference_is_each_output_in_the_programs_dim_order(app):
    rows = typed_rows(app)
    blob = (app / "model" / "trace_reference.bin").read_bytes()
    assert len(blob) == sum(r.output.nbytes for r in rows)
    expected, _ = trace.expected_outputs(rows, blob)
    # The last instruction's output is the program's output: the reference the firmware checks.
    last = np.frombuffer(expected[8], dtype=np.float32)
    io = (app / "model" / "cmx_model_io.c").read_text()
    first_bytes = ", ".join(f"0x{b:02x}" for b in expected[8][:16])
    assert first_bytes in io, "the traced program output equals the embedded expected output"
    assert last.shape == (10,)
    # The header gives the firmware the same locations.
    header = (app / "model" / "cmx_model.h").read_text()
    assert "#define CMX_NUM_INSTRUCTIONS 9" in header
    first = rows[1].output
    assert f"{{{first.mem_id}u, {first.offset}u, {first.nbytes}u}}" in header


def firmware_console(
    rows: list[Instruction], blob: bytes, corrupt: int | None = None, stop_after: int | None = None
) -> str:
    """What a CMX_TRACE image prints (cmx_runner.cpp print_hex), for the expected bytes."""
    lines = []
    for index, data in trace.expected_outputs(rows, blob)[0].items():
        if stop_after is not None and index > stop_after:
            break
        data = bytearray(data)
        if index == corrupt:
            data[5] = (data[5] + 3) % 256
        for at in range(0, len(data), 32):
            lines.append(f"cmx-gen: trace {index} {at} {bytes(data[at : at + 32]).hex()}")
    return "\n".join(lines + ["cmx-gen: PASS max_abs_err=0 instr=278718 method=1/2 planned=1/1 temp=1/2"])


def test_trace_names_the_first_instruction_that_differs(app):
    rows = typed_rows(app)
    blob = (app / "model" / "trace_reference.bin").read_bytes()
    differences, compared = trace.compare(rows, blob, firmware_console(rows, blob))
    assert differences == [] and compared == 9
    assert trace.summary(differences, compared) == "trace: all 9 traced instructions match the host bit for bit"
    differences, _ = trace.compare(rows, blob, firmware_console(rows, blob, corrupt=4))
    (first,) = differences
    assert (first.index, first.module, first.unit, first.elements, first.max_err) == (4, "conv3", "LSB", 1, 3.0)
    assert trace.summary(differences, 9).startswith(
        "trace: first difference at instruction #4 cortex_m::quantized_conv2d.out (conv3, model.py:41 "
    )
    differences, _ = trace.compare(rows, blob, firmware_console(rows, blob, stop_after=6))
    assert [d.index for d in differences] == [7, 8] and differences[0].missing
    assert "printed no output" in differences[0].describe()


def test_float_rounding_alone_is_told_apart_from_a_difference():
    """A float output a few last places off (the target's expf in a softmax) is said to be rounding,
    and the first difference named is the first that is not: it was the softmax's 3 ulp before a
    convolution 235 LSB off."""

    def diff(index: int, want: list[float], got: list[float], dtype: str = "float32") -> trace.Difference:
        common = dict(index=index, op=f"op{index}", module="", source="")
        found = trace._difference(
            common, np.dtype(dtype), np.array(want, dtype).tobytes(), np.array(got, dtype).tobytes()
        )
        assert found is not None
        return found

    soft = np.float32(0.25)
    softmax = diff(27, [soft, 0.75], [soft + 3 * np.spacing(np.float32(0.75)), 0.75])
    conv = diff(45, [3, 4], [3, -120], "int8")
    assert softmax.rounding and softmax.ulps == 3 and not conv.rounding
    line = trace.summary([softmax, conv], 50)
    assert line.startswith("trace: first difference at instruction #45 op45: max abs err 124 LSB"), line
    assert "1 float output(s) differ by float rounding only" in line
    assert trace.summary([softmax], 50).startswith("trace: only float rounding differs")
    assert not diff(3, [1.0, 2.0], [1.0, 2.5]).rounding


def test_profile_rows_are_named_and_grouped(app):
    rows = typed_rows(app)
    counts = [875, 28344, 47562, 4813, 25906, 2937, 4157, 1562, 969]
    output = "cmx-gen: PASS max_abs_err=0 instr=117812 method=6156/6352 planned=1856/1856 temp=212/448\n" + "\n".join(
        f"cmx-gen: prof {i} {c}" for i, c in enumerate(counts)
    )
    result = parse_result_line(output)
    result.output = output
    prof = profile.parse(result, rows)
    assert prof.summed == sum(counts) and prof.total == 117812 and prof.counter == "instr"
    kinds = prof.by_kind()
    assert kinds[0][0] == "conv2d" and kinds[0][1] == 28344 + 47562 + 25906 + 4157  # conv1: one input channel
    text = profile.table(prof)
    assert "conv2" in text and "99.4%" in text and "by kind    conv2d 89.9 %" in text
    assert json.loads(json.dumps(prof.to_dict()))["rows"][1]["module"] == "conv1"
    result.output = output.split("\n")[0]
    with pytest.raises(Exception, match="no profile"):
        profile.parse(result, rows)


def test_a_board_without_room_for_the_profile_is_refused(app):
    placement = AppFolder(app).placement()
    memory.check_diagnostic_fit(placement, "profile", 9)
    full = dataclasses.replace(
        placement.use(placement.data_region), used=placement.use(placement.data_region).size - 40
    )
    placement = dataclasses.replace(placement, uses=[full if u.region == full.region else u for u in placement.uses])
    with pytest.raises(
        FitError, match=r"profile image needs 81 B more counters \(9 instructions x 9 B\) in dtcm, which has 40 B free"
    ):
        memory.check_diagnostic_fit(placement, "profile", 9)
    memory.check_diagnostic_fit(placement, "trace", 9)  # streams: no buffer


def test_zephyr_options_pass_the_offline_checks(zephyr_app):
    tests = yaml.safe_load((zephyr_app / "sample.yaml").read_text())["tests"]
    assert tests["cmx_gen.digits.profile"]["extra_configs"] == ["CONFIG_CMX_CHECK=y", "CONFIG_CMX_PROFILE=y"]
    kconfig = check_kconfig(zephyr_app)
    assert kconfig.status == "pass" and "sample.yaml cmx_gen.digits.profile extra_configs" in kconfig.checked
    assert check_twister(zephyr_app).status in ("pass", "skipped")
    if check_compile(zephyr_app).status != "skipped":
        compiled = check_compile(zephyr_app)
        assert compiled.status == "pass", compiled.findings
        assert "cmx/runner/cmx_runner.cpp (CONFIG_CMX_PROFILE)" in compiled.checked
        assert "cmx/runner/cmx_runner.cpp (CONFIG_CMX_TRACE)" in compiled.checked


def test_a_broken_scenario_config_is_caught(zephyr_app, tmp_path):
    import shutil

    app = tmp_path / "app"
    shutil.copytree(zephyr_app, app)
    sample = (app / "sample.yaml").read_text().replace("CONFIG_CMX_PROFILE=y", "CONFIG_CMX_PROFILES=y")
    (app / "sample.yaml").write_text(sample)
    result = check_kconfig(app)
    assert result.status == "fail" and any("CMX_PROFILES" in str(f) for f in result.findings), result.findings


def test_node_names_ignore_a_folded_node_whose_handle_collides():
    rows = [PlanRow(0, "cortex_m::quantized_linear.out")]
    named = {0: {"node": "view", "module": "m", "source": "", "op": "aten::view_copy"}}
    assert instructions.describe(rows, named)[0].node == ""
    named = {0: {"node": "linear", "module": "fc", "source": "m.py:3", "op": "cortex_m::quantized_linear"}}
    assert instructions.describe(rows, named)[0].module == "fc"


def test_trace_reference_survives_a_regen_unchanged(app):
    before = (app / "model" / "trace_reference.bin").read_bytes()
    generate(project_mod.load(app / "cmx.toml"), app)
    assert (app / "model" / "trace_reference.bin").read_bytes() == before
