"""cmx-gen's CMSIS-NN backend ahead of time: the plan format (Python and C agree field by field),
the working-memory placement, and real lowerings with and without the backend."""

from __future__ import annotations

import random
import re
import struct

import pytest
from conftest import ROOT, read_report

from cmx_gen.lower.delegate import plan as plan_mod
from cmx_gen.lower.delegate import plan_fields
from cmx_gen.lower.delegate.work_memory import Buffer, place
from cmx_gen.program import pte

HEADER_H = ROOT / "kernels" / "backend" / "cmx_plan.h"
RECORDS_H = ROOT / "kernels" / "backend" / "cmx_plan_records.h"  # generated from plan_fields.py
# CMSIS-NN structs as their int32 words (arm_nn_types.h), spelled as plan.py spells them.
EXPANSIONS = {
    "cmsis_nn_conv_params": plan_fields.CONV_PARAMS,
    "cmsis_nn_dw_conv_params": plan_fields.DW_PARAMS,
    "cmsis_nn_pool_params": plan_fields.POOL_PARAMS,
    "cmsis_nn_fc_params": plan_fields.FC_PARAMS,
    "cmsis_nn_per_tensor_quant_params": ("multiplier", "shift"),
    "cmx_conv_row_params": plan_fields.ROW_PARAMS,
}
NN_H = ROOT / "kernels" / "nn" / "cmx_nn_layout.h"


def c_structs() -> dict[str, list[str]]:
    """cmx_layer_<kind> -> its int32 words after the head, in order, from the C records."""
    text = RECORDS_H.read_text()
    out = {}
    for body, name in re.findall(r"typedef struct \{([^}]*)\} (cmx_layer_\w+);", text):
        words: list[str] = []
        for line in body.strip().splitlines():
            line = line.strip().rstrip(";")
            if not line or line.startswith("cmx_layer_head"):
                continue
            ctype, names = line.split(None, 1)
            for member in (n.strip() for n in names.split(",")):
                if ctype == "int32_t":
                    words.append(member)
                elif ctype == "cmsis_nn_dims":
                    words += [f"{member.removesuffix('_dims')}_{d}" for d in "nhwc"]
                else:
                    words += list(EXPANSIONS[ctype])
        out[name.removeprefix("cmx_layer_")] = words
    for same, name in re.findall(r"typedef (cmx_layer_\w+) (cmx_layer_\w+);", text):  # a kind with another's record
        out[name.removeprefix("cmx_layer_")] = out[same.removeprefix("cmx_layer_")]
    return out


def test_c_and_python_plan_layouts_agree():
    structs = c_structs()
    assert set(structs) - {"head"} == set(plan_mod.FIELDS)
    for kind, fields in plan_mod.FIELDS.items():
        assert structs[kind] == list(fields), f"{kind}: cmx_plan_records.h and plan.py differ"
    text = HEADER_H.read_text()
    assert f"0x{plan_mod.MAGIC:08X}u" in text and f"CMX_PLAN_VERSION {plan_mod.VERSION}u" in text
    assert f"CMX_PLAN_CORE_BYTES {plan_mod.CORE_BYTES}" in text
    body = re.search(r"typedef struct \{([^}]*)\} cmx_conv_row_params;", NN_H.read_text())
    assert body and re.findall(r"int32_t (\w+);", body.group(1)) == list(plan_fields.ROW_PARAMS)


def test_every_layer_kind_names_what_it_calls():
    assert plan_mod.kernel_label("conv_row") == "cmx_conv_row_s8 (cmx-gen)"
    assert plan_mod.kernel_label("conv") == "arm_convolve_wrapper_s8 (CMSIS-NN)"


def test_packed_plan_reads_back_and_rebases_constants():
    layer = plan_mod.Layer("copy", {"input": -1, "output": -3, "nbytes": 10}, debug=7)
    conv_fields = {name: i for i, name in enumerate(plan_mod.FIELDS["conv"])}
    conv_fields.update(weight=0, bias=16, multipliers=plan_mod.NONE)
    conv = plan_mod.Layer("conv", conv_fields, debug=3)
    blob = plan_mod.Plan(
        "cortex-m4", (layer, conv), b"\1" * 32, n_inputs=1, n_outputs=1, work_bytes=64, io_bytes=(10, 10)
    ).pack()
    head = plan_mod.read_header(blob)
    assert head["magic"] == plan_mod.MAGIC and head["core"] == "cortex-m4" and head["plan_bytes"] == len(blob)
    assert head["data_offset"] % 16 == 0 and blob[head["data_offset"] :] == b"\1" * 32
    (kind0, f0), (kind1, f1) = plan_mod.read_layers(blob)
    assert (kind0, f0["debug"], f0["nbytes"]) == ("copy", 7, 10)
    assert kind1 == "conv" and f1["weight"] == head["data_offset"] and f1["bias"] == head["data_offset"] + 16
    assert f1["multipliers"] == plan_mod.NONE, "a missing constant stays -1, not rebased"
    with pytest.raises(ValueError, match="missing"):
        plan_mod.Layer("copy", {"input": 0}).pack()


def test_work_memory_never_overlaps_live_buffers_and_reaches_the_peak_on_chains():
    rng = random.Random(31)
    for _ in range(300):
        n = rng.randint(1, 12)
        buffers = []
        for i in range(n):
            first = rng.randint(0, 10)
            buffers.append(Buffer(f"b{i}", rng.choice([0, 1, 7, 16, 100, 4096]), first, first + rng.randint(0, 4)))
        work = place(buffers)
        for a in buffers:
            assert work.offsets[a.key] % 16 == 0
            assert work.offsets[a.key] + a.nbytes <= work.nbytes
            for b in buffers:
                if a is b or not (a.nbytes and b.nbytes) or a.last < b.first or b.last < a.first:
                    continue
                oa, ob = work.offsets[a.key], work.offsets[b.key]
                assert oa + a.nbytes <= ob or ob + b.nbytes <= oa, (a, b, work)
        peak = max(sum(-(-b.nbytes // 16) * 16 for b in buffers if b.first <= t <= b.last) for t in range(15))
        assert work.nbytes >= peak
    # a chain of layers (each output read once, by the next): the lower bound is reached
    chain = [Buffer(f"t{i}", size, i, i + 1) for i, size in enumerate([96, 160, 64, 160, 32])]
    assert place(chain).nbytes == 256  # the largest pair alive at once: 96 + 160


def test_convnet_runs_delegated_and_per_operator(lowered_dir):
    delegated = lowered_dir("ConvNet")
    per_op = lowered_dir("ConvNet", "--no-delegate")
    data, base = (delegated / "model.pte").read_bytes(), (per_op / "model.pte").read_bytes()
    program = pte.read(data)
    # conv .. max pool, then pw .. linear: the pad and the layout copy between stay on their kernels
    assert {d.id for d in pte.forward_plan(program).delegates} == {"CmxCmsisNNBackend"}
    assert not pte.forward_plan(pte.read(base)).delegates
    kinds = pte.backend_layers(data)
    assert "conv_helium" in kinds and not any(
        op.startswith("cortex_m::quantized_conv2d") for op in pte.operator_names(data)
    )
    head = plan_mod.read_header(pte.delegate_plans(program)[0])
    assert head["core"] == "cortex-m55" and head["version"] == plan_mod.VERSION
    report, base_report = read_report(delegated), read_report(per_op)
    assert report["lowering_options"]["delegate"] is True and base_report["lowering_options"]["delegate"] is False
    assert any(op["name"] == "cmx::conv_helium" and op["class"] == "cmsis_nn" for op in report["operators"])
    assert report["memory"]["method_allocator_bytes"] < base_report["memory"]["method_allocator_bytes"]
    # the host reference is the same program either way: the delegate may not change a bit
    import numpy as np

    ref, base_ref = np.load(delegated / "reference.npz"), np.load(per_op / "reference.npz")
    for key in ref.files:
        if key.startswith("output_"):
            assert np.array_equal(ref[key], base_ref[key])


def test_plan_made_for_m4_names_its_core(lowered_dir):
    data = (lowered_dir("ConvNet", target="cortex-m4") / "model.pte").read_bytes()
    blob = pte.delegate_plans(pte.read(data))[0]
    assert plan_mod.read_header(blob)["core"] == "cortex-m4"
    assert struct.unpack_from("<I", blob, 0)[0] == plan_mod.MAGIC


def test_delegate_option_in_cmx_toml(tmp_path):
    """`[options] delegate = false` round-trips through the project file; a non-boolean is one line."""
    from cmx_gen.app import project as project_mod
    from cmx_gen.app import project_file
    from cmx_gen.common.errors import ModelSourceError

    base = '[model]\nsource = "m.py:Net"\n[target]\nboard = "mps3-an547"\n'
    (tmp_path / "cmx.toml").write_text(base)
    assert project_mod.load(tmp_path / "cmx.toml").delegate is True
    (tmp_path / "cmx.toml").write_text(base + "[options]\ndelegate = false\n")
    off = project_mod.load(tmp_path / "cmx.toml")
    assert off.delegate is False and "delegate = false" in project_file.dumps(off, tmp_path)
    default = project_mod.Project(models=off.models, board=off.board)
    assert "delegate" not in project_file.dumps(default, tmp_path), (
        "the default is not written: projects read as before"
    )
    (tmp_path / "cmx.toml").write_text(base + '[options]\ndelegate = "no"\n')
    with pytest.raises(ModelSourceError, match="delegate = 'no' is not true or false"):
        project_mod.load(tmp_path / "cmx.toml")


def test_every_constant_of_a_record_is_rebased():
    """A field naming plan data (weights, biases, sums) must be in CONSTANT_FIELDS, else the runtime
    reads it from the wrong place (the GRU's gates did, until this test)."""
    for kind, fields in plan_mod.FIELDS.items():
        for name in fields:
            data = ("weights", "_bias", "weight", "multipliers", "shifts", "kernel_sum", "gains", "biases", "table")
            if name.endswith(data) or name == "bias":
                assert name in plan_mod.CONSTANT_FIELDS, f"{kind}.{name} is plan data but is not rebased"


def test_every_layer_kind_runs_on_the_host():
    """Issue 55: a .pte with any layer kind of the backend gets a bit-exact host reference (host_run),
    not RAN for a kind the host cannot run."""
    from cmx_gen.lower.delegate import host_run, plan

    assert set(host_run.RUN) == set(plan.OPS)


def test_a_gelu_and_token_transposes_stay_in_the_delegate(tmp_path):
    """An MLP-Mixer's GELUs (upstream's cortex_m::quantized_activation: a 256-entry table) run as the
    backend's `lut` layers and its int8 token transposes (`.transpose(1, 2)`: cortex_m::transpose and
    aten::permute_copy) as `transpose` layers: one delegate, where each had ended one (six)."""
    from conftest import run_cli

    user = ROOT / "tests" / "toy_models" / "user_models.py"
    args = ("--target", "cortex-m55", "--random-calibration", "-o", tmp_path)
    assert run_cli("lower", f"{user}:TinyMlpMixer", *args) == 0
    data = (tmp_path / "model.pte").read_bytes()
    assert len(pte.delegate_plans(pte.read(data))) == 1
    kinds = pte.backend_layers(data)
    assert kinds.count("lut") == 2 and kinds.count("transpose") == 4, kinds
    assert not any("activation" in op or "transpose" in op or "permute" in op for op in pte.operator_names(data))


def test_a_hardswish_clamp_stays_in_the_delegate(tmp_path):
    """A hardswish after a convolution is upstream's minimum of the tensor and one constant (at 3)
    times the tensor (DecomposeHardswishPass): the minimum runs as the backend's `lut` layer, so a
    MobileNetV3 block is one delegate (it was three, each hardswish ending one)."""
    from conftest import run_cli

    user = ROOT / "tests" / "toy_models" / "user_models.py"
    args = ("--target", "cortex-m4", "--random-calibration", "-o", tmp_path)
    assert run_cli("lower", f"{user}:SqueezeExciteBlock", *args) == 0
    data = (tmp_path / "model.pte").read_bytes()
    assert len(pte.delegate_plans(pte.read(data))) == 1
    assert pte.backend_layers(data).count("lut") == 2
    assert not any("minimum" in op for op in pte.operator_names(data))


def test_a_delegate_without_working_memory_says_so():
    """A delegate whose layers all read and write its own inputs and outputs (an MLP-Mixer's LayerNorm alone
    between two cuts, before its GELU joined the delegate) has no peak layer: the line says so instead of
    'peak 0 B at ' with no name."""
    from cmx_gen.lower.facts import Schedule
    from cmx_gen.program.report_text import schedule_line

    empty = schedule_line(Schedule(delegate=1, work_bytes=0, layer_by_layer_bytes=0, floor_bytes=512, floor_at="n1"))
    assert "no layer needs working memory" in empty and "peak" not in empty, empty
    busy = Schedule(delegate=0, work_bytes=96, layer_by_layer_bytes=96, floor_bytes=96, peak_bytes=96, peak_at="fc")
    assert "peak 96 B at fc" in schedule_line(busy)
