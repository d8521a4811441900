"""Sigmoid and tanh at 16-bit activations (issue 52): after a layer that requantizes its output (a linear
layer, a convolution, an add, a multiplication, a matmul), that output's scale is rounded up to a power of
two (observers.PowerOfTwoMinMaxObserver) so CMSIS-NN's arm_nn_activation_s16 reads it as Q3.12 after a left
shift (kind activation_s16), into Q0.15; the plan's host run gives the lowering's reference bit for bit, and
the output is closer to float's than with int8's tables."""

from __future__ import annotations

import math

import pytest
import torch
from conftest import ROOT
from lowered_helpers import kinds, plan_gives_the_reference, source_of
from torch import nn

from cmx_gen.lower.facts import LowerOptions
from cmx_gen.lower.lowering import lower
from cmx_gen.lower.observers import PowerOfTwoMinMaxObserver
from cmx_gen.lower.state import Evaluated
from cmx_gen.model.export import export
from cmx_gen.model.source import load
from cmx_gen.program.artifacts import lower_model

GATE = str(ROOT / "tests" / "toy_models" / "int16_models.py") + ":Int16Gate"


@pytest.fixture(scope="module")
def exported():
    return export(load(GATE))


@pytest.mark.parametrize("core", ["cortex-m4", "cortex-m55", "cortex-m3"])
def test_a_gate_at_int16_runs_sigmoid_and_tanh_on_arm_nn_activation_s16(exported, core):
    int16 = lower_model(exported, core, LowerOptions(precision="int16"))
    assert kinds(int16) == {"linear_s16": 3, "activation_s16": 2, "mul_s16": 1}, kinds(int16)
    plan_gives_the_reference(int16, core)


def test_int16_squashing_is_closer_to_float_than_int8_tables(exported):
    samples = [(torch.randn(1, 6, 12, generator=torch.Generator().manual_seed(s)) * 2,) for s in range(40)]
    sqnr = {}
    for precision in ("int8", "int16"):
        lowered = lower(exported, "cortex-m4", LowerOptions(precision=precision), evaluate=samples)
        got = torch.cat([torch.as_tensor(q[0]) for _, q, _ in lowered.get(Evaluated).samples])
        want = torch.cat([torch.as_tensor(f[0]) for _, _, f in lowered.get(Evaluated).samples])
        sqnr[precision] = float(10 * torch.log10(want.pow(2).sum() / (got - want).pow(2).sum()))
    print(f"\nInt16Gate output SQNR against float: {sqnr}")
    # 25.9 dB at int8, 31.7 at int16: the three linear layers' per-tensor int8 weights cap both
    assert sqnr["int16"] > sqnr["int8"] + 4


def test_the_power_of_two_observer_rounds_the_scale_up():
    observer = PowerOfTwoMinMaxObserver(
        dtype=torch.int16, quant_min=-32767, quant_max=32767, qscheme=torch.per_tensor_symmetric
    )
    observer(torch.tensor([-3.0, 5.0]))
    scale, zero_point = observer.calculate_qparams()
    assert math.log2(float(scale)) == round(math.log2(float(scale))) and int(zero_point) == 0
    assert 5.0 / 32767 <= float(scale) < 2 * 5.0 / 32767


class Squash(nn.Module):
    """A sigmoid and a tanh of the program's input (upstream's activation cases)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x) + torch.tanh(x)


def test_a_sigmoid_of_the_program_input_reads_it_at_a_power_of_two_scale():
    g = torch.Generator().manual_seed(3)
    calibration = [(torch.randn(1, 4, 8, generator=g) * 3,) for _ in range(8)]
    source = source_of(Squash(), calibration, "test_squashing_s16.py:Squash")
    int16 = lower_model(export(source), "cortex-m55", LowerOptions(precision="int16"))
    assert kinds(int16) == {"activation_s16": 2, "add_s16": 1}, kinds(int16)
    plan_gives_the_reference(int16, "cortex-m55")


class SiluLike(nn.Module):
    """sigmoid(g) * g: the linear layer's output read by the sigmoid and by the multiplication."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(2)
        self.a = nn.Linear(12, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        g = self.a(x)
        return torch.sigmoid(g) * g


def test_a_layer_another_reader_reads_keeps_its_scale_and_the_sigmoid_stays_int8():
    g = torch.Generator().manual_seed(4)
    calibration = [(torch.randn(1, 4, 12, generator=g),) for _ in range(8)]
    int16 = lower_model(
        export(source_of(SiluLike(), calibration, "test_squashing_s16.py:SiluLike")),
        "cortex-m4",
        LowerOptions(precision="int16"),
    )
    assert "activation_s16" not in kinds(int16) and kinds(int16)["mul_s16"] == 1, kinds(int16)
    plan_gives_the_reference(int16, "cortex-m4")
