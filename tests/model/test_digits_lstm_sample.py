"""The digits_lstm sample (samples/digits_lstm, issue 52): a trained LSTM on real data a package ships
(scikit-learn's digits, read 16 half rows a digit). On the 360 test digits, by the lowering's bit-exact host
reference (what the firmware computes, tests/device/test_activation_bits_firmware.py checks the LSTM there): at
int16 the LSTM is one arm_lstm_unidirectional_s16 call and the accuracy is float's; int8's is too, and its
logits are further from float's."""

from __future__ import annotations

import collections
import importlib.util

import pytest
import torch
from conftest import ROOT

from cmx_gen.lower.facts import LowerOptions
from cmx_gen.lower.lowering import lower
from cmx_gen.lower.state import Delegated, Evaluated
from cmx_gen.model.export import export
from cmx_gen.model.source import load

MODEL = str(ROOT / "samples" / "digits_lstm" / "model.py") + ":DigitsLstm"


@pytest.fixture(scope="module")
def sample():
    spec = importlib.util.spec_from_file_location("digits_lstm_sample", ROOT / "samples" / "digits_lstm" / "model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sqnr(got: torch.Tensor, want: torch.Tensor) -> float:
    return float(10 * torch.log10(want.pow(2).sum() / (got - want).pow(2).sum()))


def test_int16_keeps_float_s_accuracy_with_logits_closer_than_int8_s(sample):
    exported = export(load(MODEL))
    x, labels = sample.evaluation_data()
    held_out = [(x[i : i + 1].clone(),) for i in range(len(labels))]
    accuracy, sqnr = {}, {}
    for precision in ("int8", "int16"):
        lowered = lower(exported, "cortex-m4", LowerOptions(precision=precision), evaluate=held_out)
        samples = lowered.get(Evaluated).samples
        got = torch.stack([torch.as_tensor(q[0]).reshape(-1) for _, q, _ in samples])
        want = torch.stack([torch.as_tensor(f[0]).reshape(-1) for _, _, f in samples])
        accuracy[precision] = float((got.argmax(1) == labels).float().mean())
        accuracy["float"] = float((want.argmax(1) == labels).float().mean())
        sqnr[precision] = _sqnr(got, want)
        ops = collections.Counter(layer.op for layer in lowered.get(Delegated).layers)
        assert ops["cmx::quantized_lstm_s16" if precision == "int16" else "cmx::quantized_lstm"] == 1, ops
    print(f"\ndigits_lstm accuracy {accuracy}, logit SQNR against float {sqnr}")
    assert accuracy["float"] >= 0.96
    assert accuracy["int16"] == accuracy["float"] and accuracy["int8"] >= accuracy["float"] - 0.01
    assert sqnr["int16"] > sqnr["int8"] + 1.5
