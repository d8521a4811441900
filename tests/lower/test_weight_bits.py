"""4-bit weights (`weights = "int4"`, issue 52): the quantizer observes the chosen layers' weights over
[-8, 7], the backend stores them two a byte and runs CMSIS-NN's s4 kernels, and the plan's host run
(which unpacks them) gives the lowering's reference bit for bit. Overrides name layers as --keep-fp32
does; cmx.toml keeps both."""

from __future__ import annotations

import collections

import numpy as np
import pytest
from conftest import ROOT

from cmx_gen.app import project as project_mod
from cmx_gen.app import project_file
from cmx_gen.common.errors import ModelSourceError
from cmx_gen.lower.facts import LowerOptions
from cmx_gen.lower.weight_bits import pack_int4, unpack_int4
from cmx_gen.model.export import export
from cmx_gen.model.source import load
from cmx_gen.program import plan_reference
from cmx_gen.program.artifacts import lower_model

NET = str(ROOT / "tests" / "toy_models" / "int4_models.py") + ":Int4Net"


def test_packing_is_cmsis_nns_and_reads_back():
    assert pack_int4(np.array([1, 2, 3, 4], np.int8)) == bytes([0x21, 0x43])  # arm_fully_connected_s4's example
    assert pack_int4(np.array([-8, 7, -1], np.int8)) == bytes([0x78, 0x0F])  # an odd count: the last byte half
    values = np.random.default_rng(0).integers(-8, 8, 1001).astype(np.int8)
    assert np.array_equal(unpack_int4(pack_int4(values), values.size), values)


@pytest.fixture(scope="module")
def exported():
    return export(load(NET))


def _kinds(artifacts) -> collections.Counter[str]:
    return collections.Counter(layer.kind for layer in artifacts.report.delegated_layers)


S4 = {"conv_s4", "depthwise_s4", "linear_s4", "fully_connected_s4"}


@pytest.mark.parametrize("core, isa", [("cortex-m4", "DSP"), ("cortex-m3", "SCALAR"), ("cortex-m55", "MVE")])
def test_int4_layers_run_the_s4_kinds_and_the_plan_gives_the_reference(exported, core, isa):
    int8 = lower_model(exported, core)
    int4 = lower_model(exported, core, LowerOptions(weights="int4"))
    kinds = _kinds(int4)
    assert not S4 & set(_kinds(int8))
    depthwise = 0 if isa == "MVE" else 2  # Helium's s4 depthwise path: the int8 kind on the 4-bit values
    fc = "fully_connected_s4" if isa == "DSP" else "linear_s4"  # cmx-gen's s4 kernel on the DSP cores
    assert kinds["conv_s4"] == 2 and kinds["depthwise_s4"] == depthwise and kinds[fc] == 2, kinds
    # the 6 layers' 1,133 weights take 567 bytes, not 1,133 (nor int8 kernels' own layouts, larger on the M4)
    assert len(int8.pte) - len(int4.pte) >= 566 - (0 if depthwise else 130), (len(int8.pte), len(int4.pte))
    # the firmware's plan, run on the host from its bytes (the weights unpacked), is the lowering's reference
    inputs = [int4.reference[k] for k in sorted(int4.reference) if k.startswith("input_")]
    outputs = plan_reference.reference(int4.pte, inputs, isa)
    assert np.array_equal(outputs[0], int4.reference["output_0"])
    assert int4.report.lowering_options.weights == "int4"


def test_a_layer_named_keeps_int8_weights(exported):
    int4 = lower_model(exported, "cortex-m4", LowerOptions(weights="int4", weights_for=("head=int8",)))
    layers = {layer.module: layer.kind for layer in int4.report.delegated_layers if layer.module}
    assert layers["head"] in ("linear", "fully_connected") and layers["fc.1"] == "fully_connected_s4", layers
    only = lower_model(exported, "cortex-m4", LowerOptions(weights_for=("stem=int4",)))
    assert _kinds(only)["conv_s4"] == 1 and not _kinds(only)["linear_s4"], _kinds(only)


def test_an_override_that_names_no_layer_is_refused(exported):
    with pytest.raises(ModelSourceError, match="names no convolution or linear layer"):
        lower_model(exported, "cortex-m4", LowerOptions(weights="int4", weights_for=("nothing=int8",)))


def test_cmx_toml_keeps_the_weights(tmp_path):
    project = project_mod.Project.single(
        NET, board="mps2-an386", weights="auto", weights_for=("head=int8",), sqnr_target=20.5, output=str(tmp_path)
    )
    (tmp_path / "cmx.toml").write_text(project_file.dumps(project, tmp_path))
    (model,) = project_mod.load(tmp_path / "cmx.toml").models
    assert (model.weights, model.weights_for, model.sqnr_target) == ("auto", ("head=int8",), 20.5)
    (tmp_path / "cmx.toml").write_text(
        (tmp_path / "cmx.toml").read_text().replace('weights = "auto"', 'weights = "int3"')
    )
    with pytest.raises(ModelSourceError, match="weights = 'int3' is not a weight precision"):
        project_mod.load(tmp_path / "cmx.toml")


def test_a_depthwise_layer_with_a_multiplier_keeps_the_int8_kind():
    """arm_depthwise_conv_wrapper_s4 sends a channel multiplier to arm_depthwise_conv_s4, which computed
    other results on QEMU (upstream's depthwise_conv2d_multiplier case): that layer runs the int8 kind on
    its 4-bit values, the convolutions around it their s4 kind, and the plan still gives the reference."""
    spec = str(ROOT / "tests" / "toy_models" / "int4_models.py") + ":Int4Multiplier"
    source = load(spec, input_shape="1,3,6,6", random_calibration=True)
    lowered = lower_model(export(source), "cortex-m4", LowerOptions(weights="int4"))
    kinds = _kinds(lowered)
    assert kinds["conv_s4"] == 2 and not kinds["depthwise_s4"] and kinds["depthwise_conv"] == 1, kinds
    inputs = [lowered.reference[k] for k in sorted(lowered.reference) if k.startswith("input_")]
    assert np.array_equal(plan_reference.reference(lowered.pte, inputs, "DSP")[0], lowered.reference["output_0"])


def test_auto_takes_the_layers_that_keep_the_target(exported):
    """weights = "auto": each layer alone at int4 says what its 4 bits cost; the layers go to int4 in the
    order of SQNR lost per byte saved while the output keeps the target, and the plan runs them on the s4
    kinds. A target above the int8 program's takes none; one below the all-int4 program's takes all."""
    int8 = lower_model(exported, "cortex-m4", LowerOptions(weights="auto", sqnr_target=99.0)).report
    choice = int8.weight_choice
    assert choice is not None and not any(layer.weights == "int4" for layer in choice.layers)
    assert choice.int4_db < choice.chosen_db == choice.int8_db < 99.0
    middle = (choice.int8_db + choice.int4_db) / 2
    mixed = lower_model(exported, "cortex-m4", LowerOptions(weights="auto", sqnr_target=middle))
    picked = mixed.report.weight_choice
    assert picked is not None and picked.chosen_db >= middle
    taken = [layer.module for layer in picked.layers if layer.weights == "int4"]
    assert 0 < len(taken) < len(picked.layers), picked
    assert [layer.weights for layer in picked.layers] == sorted(
        (layer.weights for layer in picked.layers), key=lambda w: w != "int4"
    ), "a prefix of the order"
    kinds = {layer.module: layer.kind for layer in mixed.report.delegated_layers if layer.module}
    assert all(kinds[m].endswith("_s4") for m in taken if m in kinds), kinds
    assert mixed.report.lowering_options.weights == "auto"
    everything = lower_model(exported, "cortex-m4", LowerOptions(weights="auto", sqnr_target=0.0)).report
    assert everything.weight_choice is not None and everything.weight_choice.trials == 2
    assert all(layer.weights == "int4" for layer in everything.weight_choice.layers)


def test_the_report_says_each_layers_weights(exported):
    """`lower`/`create` print, and report.md holds, which layers run 4-bit weights and, with auto, why."""
    from cmx_gen.program.report_text import markdown, table

    int4 = lower_model(exported, "cortex-m4", LowerOptions(weights="int4")).report
    assert "weights    int4: 6 layer(s) run 4-bit weights" in table(int4)
    assert (
        "weights" not in table(lower_model(exported, "cortex-m4").report).split("worst layers")[0].split("compute")[1]
    )
    auto = lower_model(exported, "cortex-m4", LowerOptions(weights="auto", sqnr_target=0.0)).report
    text = markdown(auto)
    assert "## Weights" in text and "auto took 6 of 6 to int4" in text and "- stem.0: int4" in text, text


def test_an_auto_choice_lowers_again_to_the_same_program(exported):
    """`run --data` lowers an auto app again from its recorded choice (weight_choice.resolved_options), not a
    new search: the same program comes out."""
    from cmx_gen.lower.lowering import lower
    from cmx_gen.lower.weight_choice import resolved_options

    options = LowerOptions(weights="auto", sqnr_target=0.0, weights_for=("head=int8",))
    made = lower_model(exported, "cortex-m4", options)
    assert made.report.weight_choice is not None
    again = lower(exported, "cortex-m4", resolved_options(options, made.report.weight_choice))
    assert again.pte == made.pte
