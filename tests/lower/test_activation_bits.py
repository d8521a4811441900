"""16-bit activations (`precision = "int16"`, 8w16a, issue 52): the quantizer gives the chosen layers (and
what carries their output on: activations, reshapes, the program's output) int16 specs, cmx-gen's s16 ops take
them before upstream's int8 passes, the backend runs CMSIS-NN's s16 kernels, and the plan's host run gives the
lowering's reference bit for bit. The error against float falls as it should."""

from __future__ import annotations

import collections

import numpy as np
import pytest
import torch
from conftest import ROOT

from cmx_gen.app import project as project_mod
from cmx_gen.app import project_file
from cmx_gen.common.errors import ExportError, ModelSourceError
from cmx_gen.lower.facts import LowerOptions
from cmx_gen.lower.host_models import s16_models
from cmx_gen.model.export import export
from cmx_gen.model.source import load
from cmx_gen.program import plan_reference
from cmx_gen.program.artifacts import lower_model
from cmx_gen.program.report_text import precision_lines

NET = str(ROOT / "tests" / "toy_models" / "int16_models.py") + ":Int16Net"
S16 = {"conv_s16", "depthwise_s16", "linear_s16"}


def test_requantize_s64_is_cmsis_nns():
    # arm_nn_requantize_s64: (acc * REDUCE_MULTIPLIER(m)) >> (14 - shift), then one rounding shift
    mult, shift = 1 << 30, -2  # 0.5 x 2^-2 = 1/8
    acc = np.array([80, 84, -84, 1 << 20], np.int64)
    assert s16_models.reduce_multiplier(mult) == 1 << 14
    assert s16_models.requantize_s64(acc, mult, shift).tolist() == [10, 11, -10, 1 << 17]
    assert s16_models.reduce_multiplier(0x7FFFFFFF) == 0x7FFF  # the top multiplier does not round up to 2^15


@pytest.fixture(scope="module")
def exported():
    return export(load(NET))


def _kinds(artifacts) -> collections.Counter[str]:
    return collections.Counter(layer.kind for layer in artifacts.report.delegated_layers)


@pytest.mark.parametrize("core, isa", [("cortex-m4", "DSP"), ("cortex-m3", "SCALAR"), ("cortex-m55", "MVE")])
def test_int16_layers_run_the_s16_kinds_and_the_plan_gives_the_reference(exported, core, isa):
    int8 = lower_model(exported, core)
    int16 = lower_model(exported, core, LowerOptions(precision="int16"))
    kinds = _kinds(int16)
    assert not S16 & set(_kinds(int8))
    assert kinds["conv_s16"] == 2 and kinds["depthwise_s16"] == 2 and kinds["linear_s16"] == 2, kinds
    assert len(int16.report.schedules) == 1  # one delegate: the flatten is element copies, not a boundary
    inputs = [int16.reference[k] for k in sorted(int16.reference) if k.startswith("input_")]
    outputs = plan_reference.reference(int16.pte, inputs, isa)
    assert np.array_equal(outputs[0], int16.reference["output_0"])
    assert int16.report.lowering_options.precision == "int16"
    # lower/create print it, report.md and the HTML page hold it
    assert precision_lines(int16.report) == [
        "int16: 6 layer(s) run 16-bit activations on CMSIS-NN's s16 kernels: conv_s16 2, depthwise_s16 2, linear_s16 2"
    ]
    assert precision_lines(int8.report) == []


def test_int16_is_closer_to_float_than_int8(exported):
    """The same model, the same calibration: the output's error against float at least halves (the weights
    are int8 in both, and in this small random network their rounding is most of what is left)."""
    float_out = exported.module(*exported.inputs).detach().numpy()
    errors = {}
    for precision in ("int8", "int16"):
        lowered = lower_model(exported, "cortex-m55", LowerOptions(precision=precision))
        errors[precision] = float(np.abs(lowered.reference["output_0"] - float_out).max())
    assert errors["int16"] * 2 < errors["int8"], errors


def test_a_layer_named_keeps_int8_activations(exported):
    mixed = lower_model(exported, "cortex-m4", LowerOptions(precision="int16", precision_for=("head=int8",)))
    layers = {layer.module: layer.kind for layer in mixed.report.delegated_layers if layer.module}
    assert layers["head"] in ("linear", "fully_connected") and layers["fc.1"] == "linear_s16", layers
    inputs = [mixed.reference[k] for k in sorted(mixed.reference) if k.startswith("input_")]
    assert np.array_equal(plan_reference.reference(mixed.pte, inputs, "DSP")[0], mixed.reference["output_0"])


def test_an_override_that_names_no_layer_is_refused(exported):
    with pytest.raises(
        ModelSourceError, match="names no convolution, linear layer, add, multiplication, LSTM, batch matmul or softmax"
    ):
        lower_model(exported, "cortex-m4", LowerOptions(precision="int16", precision_for=("nothing=int8",)))


def test_int16_needs_the_backend_and_a_float_boundary(exported):
    with pytest.raises(ExportError, match="cmx-gen's backend only"):
        lower_model(exported, "cortex-m4", LowerOptions(precision="int16", delegate=False))
    with pytest.raises(ExportError, match="input 0 is int16"):
        lower_model(exported, "cortex-m4", LowerOptions(precision="int16", io="int8"))


def test_cmx_toml_keeps_the_precision(tmp_path):
    project = project_mod.Project.single(
        NET, board="mps2-an386", precision="int16", precision_for=("head=int8",), output=str(tmp_path)
    )
    path = tmp_path / "cmx.toml"
    path.write_text(project_file.dumps(project, tmp_path))
    again = project_mod.load(path)
    assert again.models[0].precision == "int16" and again.models[0].precision_for == ("head=int8",)
    path.write_text(path.read_text().replace('"int16"', '"int12"'))
    with pytest.raises(ModelSourceError, match="precision = 'int12' is not an activation precision"):
        project_mod.load(path)


def test_the_host_model_is_the_arithmetic_it_claims():
    """conv2d_s16 against a direct integer loop on random values (int64 accumulate, requantize_s64)."""
    g = torch.Generator().manual_seed(0)
    x = torch.randint(-32767, 32768, (1, 3, 5, 5), generator=g, dtype=torch.int16)
    w = torch.randint(-127, 128, (4, 3, 3, 3), generator=g, dtype=torch.int8)
    b = torch.randint(-(1 << 20), 1 << 20, (4,), generator=g, dtype=torch.int32)
    mults, shifts = [1 << 30, 1500000000, 1234567890, 2000000000], [-9, -10, -8, -11]
    out = s16_models.conv2d_s16(x, w, b, [1, 1], [1, 1], [1, 1], 1, mults, shifts, -32767, 32767)
    padded = np.pad(x.numpy().astype(np.int64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    for c in range(4):
        for i in range(5):
            for j in range(5):
                acc = int((padded[0, :, i : i + 3, j : j + 3] * w[c].numpy().astype(np.int64)).sum()) + int(b[c])
                want = int(np.clip(s16_models.requantize_s64(np.array([acc]), mults[c], shifts[c])[0], -32767, 32767))
                assert int(out[0, c, i, j]) == want


RESIDUAL = str(ROOT / "tests" / "toy_models" / "int16_models.py") + ":Int16Residual"


@pytest.mark.parametrize("core, isa", [("cortex-m4", "DSP"), ("cortex-m55", "MVE")])
def test_a_residual_add_and_pools_run_their_s16_kinds(core, isa):
    lowered = lower_model(export(load(RESIDUAL)), core, LowerOptions(precision="int16"))
    kinds = _kinds(lowered)
    assert kinds["add_s16"] == kinds["mul_s16"] == kinds["max_pool_s16"] == kinds["avg_pool_s16"] == 1, kinds
    inputs = [lowered.reference[k] for k in sorted(lowered.reference) if k.startswith("input_")]
    assert np.array_equal(plan_reference.reference(lowered.pte, inputs, isa)[0], lowered.reference["output_0"])


class PaddedAverage(torch.nn.Module):
    """A 3x3 average pool with padding counted (PyTorch's default): arm_avgpool_s16 leaves padding out."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 1)
        self.pool = torch.nn.AvgPool2d(3, stride=1, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(self.conv(x))


def test_a_layer_with_no_s16_kernel_is_refused_in_one_line(tmp_path):
    model = tmp_path / "padded.py"
    model.write_text(
        "import torch\nfrom test_activation_bits import PaddedAverage as Net\n"
        "def example_inputs():\n    return (torch.rand(1, 3, 6, 6),)\n"
    )
    import sys

    sys.path.insert(0, str(ROOT / "tests" / "lower"))
    try:
        with pytest.raises(ExportError, match="average pool .* has no s16 kernel") as refused:
            lower_model(
                export(load(f"{model}:Net", random_calibration=True)), "cortex-m4", LowerOptions(precision="int16")
            )
        assert "--precision-for PART=int8" in refused.value.one_line() and "test_activation_bits.py" in str(
            refused.value
        )
    finally:
        sys.path.remove(str(ROOT / "tests" / "lower"))


def test_auto_takes_the_fewest_layers_that_reach_the_target(exported):
    """Between the all-int8 and all-int16 programs' SQNR: auto takes the layers of a prefix of its order to
    int16 but those the others made unneeded (tried without, the target held), the program reaches the target,
    no layer it kept could go (tried without, it fell short), and the recorded choice lowers again to the same
    program (how `run --data` lowers an auto app)."""
    from cmx_gen.lower import precision_choice

    int8 = lower_model(exported, "cortex-m4").report.layers
    assert int8
    options = LowerOptions(precision="auto", sqnr_target=None)
    resolved, choice = precision_choice.resolve(exported, "cortex-m4", options)
    taken = [layer.module for layer in choice.layers if layer.precision == "int16"]
    assert choice.int8_db < choice.target_db <= choice.chosen_db <= choice.int16_db + 1e-6, choice
    assert choice.target_db == pytest.approx(choice.int16_db - 1.0, abs=1e-3)
    last = max(i for i, layer in enumerate(choice.layers) if layer.precision == "int16")
    for layer in choice.layers[:last]:  # the prefix: each tried without, int8 exactly where the target held
        assert layer.without_db is not None and (layer.without_db >= choice.target_db) == (layer.precision == "int8")
    assert all(layer.without_db is None for layer in choice.layers[last:])
    assert resolved.precision == "int8" and resolved.precision_for == tuple(f"{m}=int16" for m in taken)
    artifacts = lower_model(exported, "cortex-m4", options)
    assert artifacts.report.precision_choice == choice
    again = lower_model(exported, "cortex-m4", precision_choice.resolved_options(options, choice))
    assert again.pte == artifacts.pte
    assert precision_lines(artifacts.report)[0].startswith("auto: ") and len(precision_lines(artifacts.report)) == 7


def test_auto_says_when_no_choice_reaches_the_target(exported):
    """A target above the all-int16 program's SQNR: every layer int16, no lowering spent trying layers without
    (none can go), and the report line says the target was not reached."""
    from cmx_gen.lower import precision_choice

    options = LowerOptions(precision="auto", sqnr_target=200.0)
    _, choice = precision_choice.resolve(exported, "cortex-m4", options)
    assert all(layer.precision == "int16" and layer.without_db is None for layer in choice.layers), choice
    assert choice.chosen_db < choice.target_db
    assert "not reached" in precision_lines(lower_model(exported, "cortex-m4", options).report)[0]


@pytest.mark.parametrize(
    "args, says",
    [
        (("--precision", "int12"), "invalid choice: 'int12'"),
        (("--precision-for", "head"), "'head' is not PART=int8 or PART=int16: write e.g. head=int16"),
        (("--precision-for", "nothing=int16"), "--precision-for nothing=int16 names no convolution"),
    ],
)
def test_bad_precision_arguments_are_one_line(tmp_path, capsys, args, says):
    from conftest import run_cli

    try:
        code = run_cli("lower", NET, "--target", "cortex-m4", "-o", tmp_path / "out", *args)
    except SystemExit as exit_info:  # argparse's own refusals
        code = exit_info.code
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert says in err[-1] and "Traceback" not in "\n".join(err), err


def test_an_int8_output_beside_an_int16_one_stays_int8():
    """Two outputs, the fine head at int16: its output is quantized to int16 at the program's edge, the coarse
    head's stays int8 (its int8 kernel writes int8), and the plan gives the reference."""
    two = export(load(str(ROOT / "tests" / "toy_models" / "int16_models.py") + ":TwoHeads"))
    lowered = lower_model(two, "cortex-m4", LowerOptions(precision_for=("fine=int16",)))
    layers = {layer.module: layer.kind for layer in lowered.report.delegated_layers if layer.module}
    assert layers["fine"] == "linear_s16" and layers["coarse"] in ("linear", "fully_connected"), layers
    inputs = [lowered.reference[k] for k in sorted(lowered.reference) if k.startswith("input_")]
    outputs = plan_reference.reference(lowered.pte, inputs, "DSP")
    assert all(np.array_equal(outputs[i], lowered.reference[f"output_{i}"]) for i in range(2))
