"""Per-channel fully connected weights (`per_channel_linear = true`, issue 52): each int8 linear layer's
weights take a scale per output channel (upstream's per-channel spec) and run on CMSIS-NN's
arm_fully_connected_per_channel_s8 (kind linear_per_channel); the plan's host run gives the lowering's
reference bit for bit; a layer whose rows differ in range keeps each row's bits; int16 layers keep their
kernel; the option is a project value and needs cmx-gen's backend."""

from __future__ import annotations

import pytest
import torch
from conftest import ROOT
from lowered_helpers import kinds, plan_gives_the_reference, source_of
from torch import nn

from cmx_gen.app import project as project_mod
from cmx_gen.common.errors import ExportError, ModelSourceError
from cmx_gen.lower.facts import LowerOptions
from cmx_gen.lower.lowering import lower
from cmx_gen.lower.state import Evaluated
from cmx_gen.model.export import export
from cmx_gen.model.source import load
from cmx_gen.program.artifacts import lower_model

AUTOENCODER = str(ROOT / "samples" / "autoencoder" / "model.py") + ":AutoEncoder"


@pytest.fixture(scope="module")
def autoencoder():
    return export(load(AUTOENCODER))


@pytest.mark.parametrize("core", ["cortex-m4", "cortex-m55", "cortex-m3"])
def test_the_autoencoder_runs_every_layer_per_channel(autoencoder, core):
    made = lower_model(autoencoder, core, LowerOptions(per_channel_linear=True))
    assert kinds(made) == {"linear_per_channel": 10}, kinds(made)
    assert made.report.lowering_options.per_channel_linear
    plan_gives_the_reference(made, core)


class UnevenRows(nn.Module):
    """A linear layer whose output rows span three orders of magnitude (one scale for the tensor leaves the
    small rows a few levels)."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(11)
        self.fc = nn.Linear(24, 12)
        with torch.no_grad():
            self.fc.weight.mul_(torch.logspace(-3, 0, 12)[:, None])
            self.fc.bias.zero_()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)


def test_rows_of_uneven_range_keep_their_bits_per_channel():
    g = torch.Generator().manual_seed(12)
    calibration = [(torch.randn(1, 24, generator=g),) for _ in range(16)]
    source = source_of(UnevenRows(), calibration, "test_linear_per_channel.py:UnevenRows")
    exported = export(source)
    held_out = [(torch.randn(1, 24, generator=g),) for _ in range(32)]
    small_row_error = {}
    for per_channel in (False, True):
        lowered = lower(exported, "cortex-m4", LowerOptions(per_channel_linear=per_channel), evaluate=held_out)
        got = torch.cat([torch.as_tensor(q[0]) for _, q, _ in lowered.get(Evaluated).samples])
        want = torch.cat([torch.as_tensor(f[0]) for _, _, f in lowered.get(Evaluated).samples])
        small_row_error[per_channel] = float((got - want)[:, :4].abs().max() / want[:, :4].abs().max())
    print(f"\nthe small rows' error, relative to their range: {small_row_error}")
    # the output's one int8 scale bounds both; per channel, the small rows' weights are no longer zeros
    assert small_row_error[True] < small_row_error[False] / 2


def test_int16_layers_keep_their_kernel():
    net = str(ROOT / "tests" / "toy_models" / "int16_models.py") + ":Int16Gate"
    made = lower_model(export(load(net)), "cortex-m4", LowerOptions(precision="int16", per_channel_linear=True))
    assert kinds(made)["linear_s16"] == 3 and "linear_per_channel" not in kinds(made), kinds(made)


def test_per_channel_linear_needs_the_backend(autoencoder):
    with pytest.raises(ExportError, match="cmx-gen's backend only"):
        lower_model(autoencoder, "cortex-m4", LowerOptions(per_channel_linear=True, delegate=False))


def test_cmx_toml_keeps_per_channel_linear_and_refuses_a_non_boolean(tmp_path):
    toml = tmp_path / "cmx.toml"
    toml.write_text(
        f'[model]\nsource = "{AUTOENCODER}"\n[target]\nboard = "mps2-an386"\n[options]\nper_channel_linear = true\n'
    )
    assert project_mod.load(toml).models[0].per_channel_linear
    toml.write_text(
        f'[model]\nsource = "{AUTOENCODER}"\n[target]\nboard = "mps2-an386"\n[options]\nper_channel_linear = "yes"\n'
    )
    with pytest.raises(ModelSourceError, match="per_channel_linear = 'yes' is not true or false"):
        project_mod.load(toml)
