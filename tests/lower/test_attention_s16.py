"""Attention at 16-bit activations (`precision = "int16"`, issue 52): `torch.bmm` (cmx::bmm) runs on CMSIS-NN's
arm_batch_matmul_s16 (kind bmm_s16), b read as it lies when it is a transpose of its last two dimensions (an
attention's k.transpose(1, 2)) and transposed in the run (cmx_transpose_s16) otherwise; the softmax on
arm_softmax_s16 (kind softmax_s16, Q0.15 out); an int8 operand of an int16 matmul is taken exactly (its values
less its zero point, at its scale); a scaling by a constant (1/sqrt(d)) keeps its integers and is no op at all.
The whole attention is one delegate, and the plan's host run gives the lowering's reference bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import ROOT
from lowered_helpers import kinds, plan_gives_the_reference, source_of
from torch import nn

from cmx_gen.lower.facts import LowerOptions
from cmx_gen.lower.host_models import s16_models
from cmx_gen.model.export import export
from cmx_gen.model.source import load
from cmx_gen.program.artifacts import lower_model

SMALL = str(ROOT / "tests" / "toy_models" / "small.py")


@pytest.mark.parametrize("core", ["cortex-m4", "cortex-m55", "cortex-m3"])
def test_an_attention_at_int16_runs_both_matmuls_on_the_s16_kernel(core):
    exported = export(load(f"{SMALL}:Attention", input_shape="1,8,16", random_calibration=True))
    int16 = lower_model(exported, core, LowerOptions(precision="int16"))
    found = kinds(int16)
    assert found == {"linear_s16": 4, "bmm_s16": 2, "softmax_s16": 1}, found
    ops = [op.name for op in int16.report.operators]
    assert not [op for op in ops if op.startswith("aten::")], ops  # the scaling is gone, nothing left in float
    assert len(int16.report.schedules) == 1
    plan_gives_the_reference(int16, core)


class TwoInputs(nn.Module):
    """torch.bmm of two program inputs, b as given (transposed in the run) or as a transpose (read as it lies)."""

    def __init__(self, transpose: bool) -> None:
        super().__init__()
        self.transpose = transpose

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.bmm(a, b.transpose(1, 2) if self.transpose else b)


@pytest.mark.parametrize("transpose", [False, True])
def test_a_bmm_of_two_inputs_at_int16(transpose):
    g = torch.Generator().manual_seed(0)
    shapes = ((2, 5, 7), (2, 3, 7) if transpose else (2, 7, 3))
    calibration = [tuple(torch.randn(s, generator=g) for s in shapes) for _ in range(8)]
    source = source_of(TwoInputs(transpose), calibration, "test_attention_s16.py:TwoInputs")
    int16 = lower_model(export(source), "cortex-m55", LowerOptions(precision="int16"))
    (layer,) = [layer for layer in int16.report.delegated_layers if layer.kind == "bmm_s16"]
    assert len(int16.report.delegated_layers) == 1, int16.report.delegated_layers
    plan_gives_the_reference(int16, "cortex-m55")


def test_the_bmm_s16_model_sums_exactly_and_requantizes_as_the_s16_kernels():
    a = np.array([[[32767, -32767, 1000]]], np.int16)
    b_t = np.array([[[32767, 32767, 3], [1, 2, 3]]], np.int16)
    mult, shift = 1 << 30, -16  # 0.5 x 2^-16
    acc = np.array([32767 * 32767 - 32767 * 32767 + 3000, 32767 - 65534 + 3000], np.int64)
    want = s16_models.requantize_s64(acc, mult, shift)
    assert s16_models.bmm_s16(a, b_t, mult, shift).reshape(-1).tolist() == want.tolist()


class SoftmaxHead(nn.Module):
    """A linear layer's scores into a softmax over the last dimension, and over the first."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        torch.manual_seed(4)
        self.dim, self.fc = dim, nn.Linear(12, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.fc(x), dim=self.dim)


@pytest.mark.parametrize("dim", [-1, 1])
def test_a_softmax_over_the_last_dimension_runs_at_int16_another_as_at_int8(dim):
    g = torch.Generator().manual_seed(5)
    calibration = [(torch.randn(1, 4, 12, generator=g) * 3,) for _ in range(8)]
    source = source_of(SoftmaxHead(dim), calibration, "test_attention_s16.py:SoftmaxHead")
    int16 = lower_model(export(source), "cortex-m4", LowerOptions(precision="int16"))
    ops = [op.name for op in int16.report.operators]
    if dim == -1:
        assert kinds(int16) == {"linear_s16": 1, "softmax_s16": 1}, kinds(int16)
    else:  # arm_softmax_s16 takes rows of the last dimension: as at int8, a float part, named
        assert "softmax_s16" not in kinds(int16) and "aten::_softmax.out" in ops, ops
        assert [part.ops for part in int16.report.float_parts] == [["aten::_softmax"]]
    plan_gives_the_reference(int16, "cortex-m4")


def test_the_softmax_s16_tables_are_tflites_exp_and_reciprocal():
    # the exp table's ends: exp(-10) (within the half-error correction) and exp(0) in Q0.15 (saturated);
    # 1 / (1 + x) at 0 and 1
    assert abs(s16_models.EXP_TABLE[0] - np.exp(-10) * 32768) <= 1 and s16_models.EXP_TABLE[-1] == 32767
    assert s16_models.ONE_BY_ONE_TABLE[0] == 32767 and s16_models.ONE_BY_ONE_TABLE[-1] == 16384
    scores = np.array([[3000, -2000, 0, 12000]], np.int16)
    mult, shift = s16_models.softmax_s16_multiplier(1e-4)
    want = np.exp(scores * 1e-4) / np.exp(scores * 1e-4).sum()
    assert np.abs(s16_models.softmax_s16(scores, mult, shift) / 32768 - want).max() < 2e-4


def test_an_encoder_block_at_int16_lowers_its_int8_norms_reading_int16_adds():
    # the LayerNorm after a residual add had shared the add's (now int16) quantization: prepare_pt2e failed
    # with a KeyError; it reads an int8 copy of it now
    exported = export(load(f"{SMALL}:EncoderBlock", input_shape="1,16,32", random_calibration=True))
    int16 = lower_model(exported, "cortex-m55", LowerOptions(precision="int16"))
    found = kinds(int16)
    assert found["bmm_s16"] == 2 and found["add_s16"] == 2 and found["layer_norm"] == 2, found
    plan_gives_the_reference(int16, "cortex-m55")
