"""The int8 recurrent layers (issue 34): aten.lstm becomes one cmx::quantized_lstm per layer on
arm_lstm_unidirectional_s8, aten.gru one cmx::quantized_gru on cmx_gru_s8; their host models are
the kernels' arithmetic, and their int8 answers agree with the float model's."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from cmx_gen.lower.host_models import layer_models
from cmx_gen.lower.lowering import LowerOptions, lower
from cmx_gen.lower.ops import lstm
from cmx_gen.lower.state import Delegated, Evaluated, Floats, Referenced, Rewritten
from cmx_gen.model.export import export
from cmx_gen.model.source import ModelSource


class Kws(nn.Module):
    def __init__(self, batch_first: bool = True, layers: int = 1, cell: type[nn.Module] = nn.LSTM) -> None:
        super().__init__()
        torch.manual_seed(1)
        self.batch_first = batch_first
        self.lstm = cell(10, 32, num_layers=layers, batch_first=batch_first)
        self.fc = nn.Linear(32, 12)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y, _ = self.lstm(x)
        return self.fc(y[:, -1] if self.batch_first else y[-1])


def _sequences(count: int, shape: tuple[int, ...], seed: int) -> tuple[tuple[torch.Tensor], ...]:
    """Keyword-spotter-like inputs: smooth random feature tracks, not white noise."""
    g = torch.Generator().manual_seed(seed)
    walk = torch.randn((count, *shape), generator=g).cumsum(dim=-2 if len(shape) == 3 else 0) * 0.3
    return tuple((x.clamp(-3, 3),) for x in walk)


def _lowered(model: nn.Module, shape: tuple[int, ...], evaluate: int = 0) -> object:
    calibration = _sequences(32, shape, seed=2)
    source = ModelSource(
        spec="test_lstm.py:Kws",
        kind="python",
        module=model.eval(),
        example_inputs=calibration[0],
        calibration=list(calibration),
        calibration_source="smooth random tracks",
    )
    return lower(export(source), "cortex-m55", LowerOptions(), evaluate=_sequences(evaluate, shape, seed=3))


def test_sigmoid_table_is_cmsis_nn_s():
    """kernel_models derives the table; CMSIS-NN's own (arm_nntables.c) is the one the target runs."""
    root = os.environ.get("CMSIS_NN_PATH")
    if not root:
        pytest.skip("CMSIS_NN_PATH is not set: CMSIS-NN's sigmoid_table_uint16 was not compared")
    text = (Path(root) / "Source" / "NNSupportFunctions" / "arm_nntables.c").read_text()
    body = text[text.index("sigmoid_table_uint16[256] = {") :]
    table = [int(v) for v in re.findall(r"\d+", body[body.index("{") + 1 : body.index("}")])]
    assert table == layer_models.SIGMOID_TABLE.tolist()


def test_activation_s16_follows_the_float_functions():
    x = np.arange(-32768, 32768, 7)
    sigmoid = layer_models.activation_s16(x, 0, "sigmoid") / 32768.0
    tanh = layer_models.activation_s16(x, 0, "tanh") / 32768.0
    assert np.abs(sigmoid - 1 / (1 + np.exp(-x / 4096.0))).max() < 2e-4
    assert np.abs(tanh - np.tanh(x / 4096.0)).max() < 2e-4
    assert layer_models.activation_s16(np.array([32767]), 0, "tanh")[0] == 32767


@pytest.mark.parametrize("cell, kernel", [(nn.LSTM, "arm_lstm_unidirectional_s8"), (nn.GRU, "cmx_gru_s8")])
def test_keyword_spotter_is_one_int8_call_and_agrees_with_float(cell, kernel):
    kind = cell.__name__.lower()
    lowered = _lowered(Kws(cell=cell), (1, 49, 10), evaluate=200)
    rewrites = lowered.get(Rewritten).rewrites
    assert [r.op for r in rewrites] == [f"aten::{kind}"] and kernel in rewrites[0].what
    layers = lowered.get(Delegated).layers
    assert [layer.op for layer in layers].count(f"cmx::quantized_{kind}") == 1, "all 49 steps in one int8 call"
    samples = lowered.get(Evaluated).samples
    agree = sum(int(f.argmax() == q.argmax()) for _, (q,), (f,) in samples)
    print(f"\ntop-1 agreement of the int8 {cell.__name__} with float: {agree}/{len(samples)}")
    assert len(samples) == 200 and agree >= 198


@pytest.mark.parametrize("batch_first, layers, cell", [(False, 1, nn.LSTM), (True, 2, nn.LSTM), (False, 2, nn.GRU)])
def test_time_major_and_stacked_layers_lower_to_one_call_per_layer(batch_first, layers, cell):
    shape = (1, 8, 10) if batch_first else (8, 1, 10)
    lowered = _lowered(Kws(batch_first, layers, cell), shape)
    kind = cell.__name__.lower()
    assert [layer.op for layer in lowered.get(Delegated).layers].count(f"cmx::quantized_{kind}") == layers
    # the .pte's plan run on the host from its integers (host_run's lstm and gru) is the reference
    from cmx_gen.program import plan_reference

    inputs = [x.numpy() for x in lowered.given.exported.inputs]
    (got,) = plan_reference.reference(lowered.pte, inputs, "MVE")
    (want,) = lowered.get(Referenced).runs.kernel_exact
    assert np.array_equal(got, want.numpy()), np.abs(got - want.numpy()).max()


def test_quantize_folds_the_zero_points_into_the_effective_biases():
    torch.manual_seed(0)
    w_ih, w_hh, b_ih, b_hh = torch.randn(16, 3), torch.randn(16, 4), torch.randn(16), torch.randn(16)
    quant = lstm.quantize((w_ih, w_hh, b_ih, b_hh), (0.02, 5), (0.01, -3), -11)
    gate = quant.gates["forget"]
    assert gate.input_weights.shape == (4, 3) and gate.hidden_weights.shape == (4, 4)
    assert (gate.hidden_effective_bias == 3 * gate.hidden_weights.astype(np.int64).sum(axis=1)).all()
    assert quant.input_offset == -5 and quant.output_offset == -3 and quant.cell_scale_power == -11
    assert [g.activation for g in quant.gates.values()] == ["sigmoid", "sigmoid", "tanh", "sigmoid"]


def test_without_the_backend_the_lstm_stays_pytorchs_float_one():
    """--no-delegate: cmx-gen's int8 ops run in its backend only, so the LSTM is lowered as before
    (float on portable kernels), named as a float part."""
    calibration = _sequences(8, (1, 6, 10), seed=2)
    source = ModelSource(
        spec="t", kind="python", module=Kws().eval(), example_inputs=calibration[0], calibration=list(calibration)
    )
    lowered = lower(export(source), "cortex-m55", LowerOptions(delegate=False))
    assert lowered.get(Rewritten).rewrites == ()
    (part,) = lowered.get(Floats).parts
    assert part.why == "no_int8_kernel" and part.module == "lstm"


class BiRnn(nn.Module):
    """A bidirectional GRU or LSTM as users write one: its final hidden state's two directions
    concatenated (`final`), or every step's output averaged."""

    def __init__(self, cell: type[nn.Module], batch_first: bool, layers: int, final: bool) -> None:
        super().__init__()
        torch.manual_seed(4)
        self.batch_first, self.final = batch_first, final
        self.rnn = cell(10, 16, num_layers=layers, batch_first=batch_first, bidirectional=True)
        self.fc = nn.Linear(32, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y, h = self.rnn(x)
        if self.final:
            h = h[0] if isinstance(h, tuple) else h  # an LSTM's (h, c)
            return self.fc(torch.cat([h[-2], h[-1]], dim=1))
        return self.fc(y.mean(dim=1 if self.batch_first else 0))


@pytest.mark.parametrize(
    "cell, batch_first, layers, final",
    [
        (nn.GRU, True, 1, False),
        (nn.GRU, False, 2, True),
        (nn.GRU, True, 2, True),
        (nn.LSTM, True, 1, True),
        (nn.LSTM, False, 2, False),
    ],
)
def test_a_bidirectional_layer_runs_both_directions_on_int8_calls(cell, batch_first, layers, final):
    """Each direction of each layer one kernel call (the backward one with its steps reversed: in
    cmx_gru_s8, or around arm_lstm_unidirectional_s8 in the backend), their outputs concatenated in the
    backend; the plan's host run is the kernel-exact reference and the int8 answers follow the float
    model's."""
    kind = cell.__name__.lower()
    shape = (1, 8, 10) if batch_first else (8, 1, 10)
    lowered = _lowered(BiRnn(cell, batch_first, layers, final), shape, evaluate=50)
    ops = [layer.op for layer in lowered.get(Delegated).layers]
    assert (
        ops.count(f"cmx::quantized_{kind}") == 2 * layers and "bidirectional" in lowered.get(Rewritten).rewrites[0].what
    )
    assert not lowered.get(Floats).parts, lowered.get(Floats).parts
    from cmx_gen.program import plan_reference

    inputs = [x.numpy() for x in lowered.given.exported.inputs]
    (got,) = plan_reference.reference(lowered.pte, inputs, "MVE")
    (want,) = lowered.get(Referenced).runs.kernel_exact
    assert np.array_equal(got, want.numpy()), np.abs(got - want.numpy()).max()
    samples = lowered.get(Evaluated).samples
    agree = sum(int(f.argmax() == q.argmax()) for _, (q,), (f,) in samples)
    assert agree >= 47, f"top-1 agreement {agree}/50"
