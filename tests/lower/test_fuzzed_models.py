"""The fuzzer's shrunk failures (tests/toy_models/fuzzed_models.py) lower on both cores, and each
plan run on the host at its planned offsets gives the reference bit for bit."""

from __future__ import annotations

import pytest
from conftest import ROOT, plan_matches_the_reference, read_report, run_cli

FUZZED = ROOT / "tests" / "toy_models" / "fuzzed_models.py"


@pytest.mark.parametrize("core", ["cortex-m55", "cortex-m4"])
@pytest.mark.parametrize(
    "name",
    [
        "TokensTimesConv",
        "DilatedDepthwise",
        "PoolHardswish",
        "OneChannelUpsample",
        "StandaloneBatchNorm",
        "UpsampleThenPool",
        "ActivationsBeforeBatchNorm",
        "TwoBatchNorms",
        "OneChannelRelu6",
        "ConvHardswish",
        "LeakyReluTokens",
        "OneChannelSkipConcat",
        "HardsigmoidSkipConcat",
    ],
)
def test_a_fuzzed_failure_lowers_and_its_plan_matches_the_reference(tmp_path, name, core):
    out = tmp_path / name
    assert run_cli("lower", f"{FUZZED}:{name}", "--target", core, "-o", str(out)) == 0
    plan_matches_the_reference(out)
    ops = [row["op"] for row in read_report(out)["instructions"]]
    # no int8 kernel, no portable kernel, or a portable one that refuses a channels-last tensor beside a constant
    float_only = ("aten::hardswish", "aten::hardsigmoid", "aten::convolution", "aten::minimum")
    assert not any(op.startswith(float_only) for op in ops), ops


@pytest.mark.parametrize("core", ["cortex-m55", "cortex-m4"])
def test_upstreams_transpose_kernel_gets_contiguous_tensors(tmp_path, core):
    """op_transpose.cpp permutes the bytes of the logical shape whatever the dim order: a permute of a
    channels-last image FAILed on QEMU (212 LSB) while the host, running the Python op, agreed with
    the reference. Its input and output are laid out contiguous now (without the backend, which since
    2026-11-29 runs this permute itself: a batch of 2-D transposes, cmx_transpose_s8)."""
    alone = tmp_path / "alone"
    assert run_cli("lower", f"{FUZZED}:PermutedImage", "--target", core, "--no-delegate", "-o", str(alone)) == 0
    rows = read_report(alone)["instructions"]
    transposes = [row for row in rows if row["op"].startswith("cortex_m::transpose")]
    assert transposes and all(row["output"]["dim_order"] == [0, 1, 2, 3] for row in transposes), rows
    out = tmp_path / "permuted"
    assert run_cli("lower", f"{FUZZED}:PermutedImage", "--target", core, "-o", str(out)) == 0
    report = read_report(out)
    assert not [row for row in report["instructions"] if row["op"].startswith("cortex_m::transpose")]
    layouts = [layer for layer in report["delegated_layers"] if layer["op"] == "dim_order_ops::_clone_dim_order"]
    assert [layer["dim_order"] for layer in layouts] == [[0, 1, 2, 3]], "the conv's image laid out contiguous first"
    assert any(
        layer["kind"] == "transpose" and layer["op"] == "cortex_m::transpose" for layer in report["delegated_layers"]
    )
    plan_matches_the_reference(out)


def test_without_the_backend_a_conv_hardswish_is_refused_with_its_reason(tmp_path, capsys):
    """Upstream's decomposition leaves `minimum(conv, q(3))` to the portable kernel, which stops on the
    conv's channels-last output beside the constant (QEMU: execute error 0x12): with the backend it is
    a table; without it, cmx-gen refuses in one line instead of building firmware that stops."""
    out = tmp_path / "refused"
    code = run_cli("lower", f"{FUZZED}:ConvHardswish", "--target", "cortex-m4", "--no-delegate", "-o", str(out))
    err = capsys.readouterr().err
    assert code == 2 and "aten::minimum" in err and "neither all contiguous nor all channels-last" in err, err


def test_a_delegate_boundary_laid_out_otherwise_than_its_plan_is_refused(tmp_path):
    """Seed 7010: ExecuTorch derived the concat's output order again from its inputs (a one-channel
    image beside a channels-last one: contiguous) while the backend wrote channels-last (FAIL 149 LSB
    on QEMU). The concat carries its order now; a program whose delegate call passes a tensor laid out
    otherwise than the plan is refused at serialization, named, instead of built."""
    import torch

    from cmx_gen.common.errors import ExportError
    from cmx_gen.lower import lowering, target_checks
    from cmx_gen.lower.delegate.preprocess import is_delegate_call
    from cmx_gen.lower.state import Serialized
    from cmx_gen.model import source
    from cmx_gen.model.export import export

    lowered = lowering.lower(export(source.load(f"{FUZZED}:OneChannelSkipConcat")), "cortex-m4")
    module = lowered.get(Serialized).program.exported_program().graph_module
    target_checks.check_serialized(module)  # as lowered: the plan and the program agree
    call = [node for node in module.graph.nodes if is_delegate_call(node)][-1]
    out = call.meta["val"][0]
    with out.fake_mode:
        call.meta["val"] = [torch.empty_strided(out.shape, torch.empty(out.shape).stride(), dtype=out.dtype)]
    with pytest.raises(ExportError, match=r"delegate 1's output 0 \[1, 2, 12, 12\] lies in dim order \[0, 2, 3, 1\]"):
        target_checks.check_serialized(module)
