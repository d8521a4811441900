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
    ],
)
def test_a_fuzzed_failure_lowers_and_its_plan_matches_the_reference(tmp_path, name, core):
    out = tmp_path / name
    assert run_cli("lower", f"{FUZZED}:{name}", "--target", core, "-o", str(out)) == 0
    plan_matches_the_reference(out)
    ops = [row["op"] for row in read_report(out)["instructions"]]
    assert not any(op.startswith("aten::hardswish") for op in ops), ops
