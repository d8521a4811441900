"""Models as users write them (issue 53), lowered on the host: a U-Net's torch.cat (the backend
concatenates in the tensors' memory order, each input requantized to the concat's parameters first;
the portable cat does not) and nn.Upsample (int8 copies on the backend), a ViT's flattened patch
embedding and position embedding, upstream's silero_vad_16k."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import ROOT, plan_matches_the_reference, read_report, run_cli

from cmx_gen.common.noise import quiet_third_party
from cmx_gen.lower.rewrites import concat

quiet_third_party()
import torchao.quantization.pt2e.quantize_pt2e  # noqa: E402,F401  (registers quantized_decomposed)

USER = ROOT / "tests" / "toy_models" / "user_models.py"
Q = torch.ops.quantized_decomposed


def _qdq(x: torch.Tensor, scale: float, zp: int) -> torch.Tensor:
    return Q.dequantize_per_tensor.default(
        Q.quantize_per_tensor.default(x, scale, zp, -128, 127, torch.int8), scale, zp, -128, 127, torch.int8
    )


class _TwoScales(torch.nn.Module):
    """A converted graph whose concat inputs were observed apart: 0.05 and 0.2 in, 0.1 out."""

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return _qdq(torch.ops.aten.cat.default([_qdq(x, 0.05, 0), _qdq(y, 0.2, 3)], 1), 0.1, -2)


def test_share_quantization_requantizes_only_the_inputs_of_other_parameters_and_changes_no_value():
    graph = torch.fx.symbolic_trace(_TwoScales())
    x, y = torch.randn(2, 3, 4) * 4, torch.randn(2, 5, 4) * 20
    before = graph(x, y)
    concat.share_quantization(graph)
    cat = next(n for n in graph.graph.nodes if n.target == torch.ops.aten.cat.default)
    params = [tuple(d.args[1:3]) for d in cat.args[0]]
    assert params == [(0.1, -2), (0.1, -2)], "each input now dequantized at the concat's own parameters"
    assert torch.equal(graph(x, y), before), "the quantize after the concat rounds alike: no value changes"


def _lower(tmp_path, name: str, *extra: str) -> tuple[int, object]:
    out = tmp_path / name
    return run_cli("lower", f"{USER}:{name}", "--target", "cortex-m4", "-o", str(out), *extra), out


def test_a_unet_concat_runs_on_the_backend_and_its_plan_matches_the_reference(tmp_path):
    code, out = _lower(tmp_path, "TinyUNet")
    assert code == 0
    report = read_report(out)
    kinds = {layer["op"]: layer["kind"] for layer in report["delegated_layers"]}
    assert kinds.get("cmx::quantized_cat") == "copy_region", kinds
    # nn.Upsample on the backend too (it was a float island that cut the call in two)
    assert kinds.get("cmx::quantized_upsample_nearest") == "copy_region", kinds
    ops = [row["op"] for row in report["instructions"]]
    assert ops.count("<DelegateCall>") == 1 and not any("upsample" in op for op in ops), ops
    plan_matches_the_reference(out)


def test_a_vit_with_a_position_embedding_lowers_and_its_flatten_is_a_transpose(tmp_path):
    """A constant operand (the position embedding added) keeps its add outside the backend, where it
    was a KeyError; the channels-last patch embedding flattened is a transpose on the backend. Its
    plan (layer norms, tables, batch matmuls) runs on the host bit-exact."""
    code, out = _lower(tmp_path, "TinyViT")
    assert code == 0
    report = read_report(out)
    kinds = {(layer["op"], layer["kind"]) for layer in report["delegated_layers"]}
    assert ("aten::view_copy", "transpose") in kinds, kinds
    assert not any(
        layer["op"] == "cortex_m::quantized_add" and "pos" in layer["source"] for layer in report["delegated_layers"]
    )
    assert {"layer_norm"} <= {kind for _, kind in kinds}, kinds
    plan_matches_the_reference(out)


def test_a_flatten_of_a_channels_last_image_on_the_portable_kernel_is_refused_in_one_line(tmp_path, capsys):
    code, _ = _lower(tmp_path, "TinyViT", "--no-delegate")
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert "aten::view_copy" in err[-1] and "drop --no-delegate" in err[-1]


def test_a_channel_concat_on_the_portable_kernel_is_refused_in_one_line(tmp_path, capsys):
    code, _ = _lower(tmp_path, "SkipConcat", "--no-delegate")
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert "aten::cat" in err[-1] and "drop --no-delegate" in err[-1] and "Traceback" not in "\n".join(err)


def test_upstreams_silero_vad_lowers_again(tmp_path):
    """A regression of the release: its one-channel layout copy ([1, 1, 1, 640], dim order [0, 2, 1, 3])
    was refused for the portable kernel although cmx-gen's backend runs it as a plain copy."""
    out = tmp_path / "silero"
    model = ROOT / "tests" / "toy_models" / "upstream_models.py:SileroVad"
    assert run_cli("lower", str(model), "--target", "cortex-m55", "--random-calibration", "-o", str(out)) == 0
    clones = [
        layer for layer in read_report(out)["delegated_layers"] if layer["op"] == "dim_order_ops::_clone_dim_order"
    ]
    assert any(layer["shape"] == [1, 1, 1, 640] and layer["kind"] == "copy" for layer in clones), clones


@pytest.mark.parametrize("size, out", [((4, 5), (8, 10)), ((3, 3), (9, 6)), ((2, 7), (2, 14)), ((3, 4), (5, 4))])
def test_int8_nearest_upsampling_picks_what_torchs_float_one_picks(size, out):
    """cmx::quantized_upsample_nearest against torch's float nearest upsampling of the same values, and
    which of them the backend copies (whole repeats only: 3 -> 5 rows stays the float island)."""
    from cmx_gen.lower.rewrites import upsample

    x = torch.randint(-128, 128, (1, 3, *size), dtype=torch.int8).contiguous(memory_format=torch.channels_last)
    want = torch.nn.functional.interpolate(x.float(), size=out, mode="nearest").to(torch.int8)
    got = torch.ops.cmx.quantized_upsample_nearest(x, list(out))
    assert torch.equal(got, want) and got.is_contiguous(memory_format=torch.channels_last)
    assert (upsample._factors(x.shape, got.shape) is None) == (out == (5, 4))


def _field_positions(blob: bytes) -> list[dict[str, int]]:
    """Each layer record's fields by their byte position in the plan (plan.py's packing: op, size,
    debug, then the kind's FIELDS in order, 4 bytes each)."""
    import struct

    from cmx_gen.lower.delegate.plan import FIELDS, OPS, read_header

    kinds = {code: name for name, code in OPS.items()}
    at, found = int(read_header(blob)["layers_offset"]), []
    for _ in range(int(read_header(blob)["n_layers"])):
        op, size, _debug = struct.unpack_from("<3i", blob, at)
        found.append({"kind": op, **{name: at + 12 + 4 * k for k, name in enumerate(FIELDS[kinds[op]])}})
        at += size
    return found


def test_a_schedule_that_writes_over_a_live_tensor_fails_its_host_run(tmp_path):
    """Issue 53: the host run of a plan executes in the planned working memory at the planned offsets,
    so a schedule that overlaps a live tensor fails on the host, with no SDK. Made so here: the U-Net's
    skip (the encoder's output, live until the concat) is where a middle layer now writes and its
    consumer now reads, so the branch itself still computes right and only the skip is overwritten."""
    import struct

    from cmx_gen.lower.delegate.plan import read_layers
    from cmx_gen.program import plan_reference
    from cmx_gen.program import pte as pte_mod

    code, out = _lower(tmp_path, "TinyUNet")
    assert code == 0
    data = bytearray((out / "model.pte").read_bytes())
    blob = pte_mod.delegate_plans(pte_mod.read(bytes(data)))[0]
    layers, positions, base = read_layers(blob), _field_positions(blob), bytes(data).index(blob)
    skip = layers[0][1]["output"]  # the encoder's output, read again by the concat's last copy
    reader = max(k for k, (kind, f) in enumerate(layers) if kind == "copy_region" and f["input"] == skip)
    skip_bytes = layers[reader][1]["rows"] * layers[reader][1]["row_bytes"]
    k = next(k for k, (kind, f) in enumerate(layers) if kind == "depthwise_conv")
    moved = layers[k][1]["input"]
    assert layers[k - 1][1]["output"] == moved and 0 < k - 1 < reader
    f = layers[k][1]
    size = f["input_n"] * f["input_h"] * f["input_w"] * f["input_c"]
    assert size <= skip_bytes, "the moved tensor fits the skip"
    reference = np.load(out / "reference.npz")
    inputs = [reference[k] for k in sorted(reference.files) if k.startswith("input_")]

    def output_with(at: int) -> np.ndarray:
        moved_plan = bytearray(data)
        for position in (positions[k - 1]["output"], positions[k]["input"]):
            struct.pack_into("<i", moved_plan, base + position, at)
        (got,) = plan_reference.reference(bytes(moved_plan), inputs, "DSP")
        return got

    assert not np.array_equal(output_with(skip), reference["output_0"]), "writing over the live skip shows"
    # the control: moved where nothing is live yet (the upsampling's output, written after both)
    free = next(f["output"] for kind, f in layers[k + 1 :] if kind == "copy_region")
    assert free + size <= skip or free >= skip + skip_bytes
    assert np.array_equal(output_with(free), reference["output_0"]), "a move that overlaps nothing live is harmless"


def test_a_relu_sharing_a_concats_quantization_fuses_and_tokens_made_an_image_are_laid_out_channels_last(tmp_path):
    """A trained denoiser as one writes it (AttentionDenoiser): its first conv stayed a float
    aten::convolution (its ReLU's quantization, the concat's, starts above -128, so upstream did not fuse
    it: refused at create, execute error 0x12); the image made back from the attention's tokens is
    contiguous and a conv read it as NHWC (a FAIL on the target, 235 LSB). Now every conv is int8, the
    concat and the upsampling run on the backend, and the plan matches the reference on the host."""
    code, out = _lower(tmp_path, "AttentionDenoiser")
    assert code == 0
    report = read_report(out)
    ops = [row["op"] for row in report["instructions"]]
    assert not any("convolution" in op or op.startswith("aten::cat") for op in ops), ops
    kinds = {layer["op"]: layer["kind"] for layer in report["delegated_layers"]}
    assert kinds.get("cmx::quantized_cat") == "copy_region" and "dim_order_ops::_clone_dim_order" in kinds, kinds
    plan_matches_the_reference(out)


def test_an_activations_quantization_is_narrowed_to_what_it_produces_and_no_value_changes():
    from cmx_gen.lower.rewrites import activation_range

    class ReluSharing(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = torch.ops.aten.relu.default(_qdq(x, 0.05, 0))
            return Q.dequantize_per_tensor.default(
                Q.quantize_per_tensor.default(y, 0.1, -20, -128, 127, torch.int8), 0.1, -20, -128, 127, torch.int8
            )

    graph = torch.fx.symbolic_trace(ReluSharing())
    x = torch.randn(4, 64) * 5
    before = graph(x)
    activation_range.narrow(graph)
    q = next(n for n in graph.graph.nodes if n.target == Q.quantize_per_tensor.default and n.args[2] == -20)
    dq = next(iter(q.users))
    assert q.args[3:5] == (-20, 127) and dq.args[3:5] == (-20, 127), "quantize(0) = -20 is the least it produces"
    assert torch.equal(graph(x), before)


def test_the_traces_expected_bytes_are_what_each_instruction_writes(tmp_path):
    """The trace image compares each instruction's output with the host reference's value of its node,
    found by name. to_backend and to_executorch name the nodes anew (the first expand_copy left after
    delegation is `aten_expand_copy_default`, whichever it was), so the trace of a PASSing attention
    model said "first difference at aten::expand_copy" (0.6 on 1023 of 1024 elements): the value of
    another expand. Every expected output now equals what the plan's host run writes there (an
    attention whose mask is no run of keys a row: its core is still float, several expand_copy nodes
    among them)."""
    from cmx_gen.program import plan_reference

    out = tmp_path / "dilated"
    model = ROOT / "tests" / "toy_models" / "attention_models.py:DilatedMaskSdpa"
    assert run_cli("lower", str(model), "--target", "cortex-m4", "-o", str(out)) == 0
    reference = np.load(out / "reference.npz")
    inputs = [reference[k] for k in sorted(reference.files) if k.startswith("input_")]
    written: dict[int, bytes] = {}
    plan_reference.PlanRunner((out / "model.pte").read_bytes(), "DSP").run(inputs, trace=written)
    expected = {
        int(k.removeprefix("trace_")): reference[k]
        for k in reference.files
        if k.startswith("trace_") and "layer" not in k
    }
    ops = {row["index"]: row["op"] for row in read_report(out)["instructions"]}
    assert sum(op.startswith("aten::expand_copy") for op in (ops[i] for i in expected)) >= 2, "the expands are traced"
    differ = [ops[i] for i, data in expected.items() if data.tobytes() != written[i]]
    assert not differ, differ


@pytest.mark.parametrize(
    "model",
    [f"{USER}:AttentionDenoiser", f"{USER}:TinyViT", f"{ROOT}/tests/toy_models/attention_models.py:EncoderPreNorm"],
)
def test_attention_without_a_mask_runs_on_int8(tmp_path, model):
    """nn.MultiheadAttention (and TransformerEncoderLayer's) without a mask: scaled_dot_product_attention
    as cmx::bmm, a scale table, arm_softmax_s8 and cmx::bmm in the backend; it was 21-25 portable float
    operators (bmm, _safe_softmax's eq/logical_not/any/where) per attention. The plan matches the reference."""
    out = tmp_path / "attention"
    assert run_cli("lower", model, "--target", "cortex-m4", "-o", str(out)) == 0
    report = read_report(out)
    float_ops = [row["op"] for row in report["instructions"] if row["op"].split("::")[0] == "aten"]
    assert not any(op.split(".")[0] in ("aten::bmm", "aten::_softmax", "aten::where", "aten::any") for op in float_ops)
    heads = [r for r in report["instructions"] if r["op"].startswith(PERMUTES) and "attn" in r["module"]]
    assert not heads, "the head split and merge are the backend's strided copies"
    kinds = [layer["kind"] for layer in report["delegated_layers"]]
    assert "bmm" in kinds and "softmax" in kinds, kinds
    assert any("scaled_dot_product_attention" in r["op"] for r in report["rewrites"])
    plan_matches_the_reference(out)


PERMUTES = ("aten::permute_copy", "cortex_m::transpose")


@pytest.mark.parametrize("name", ["CausalSdpa", "MaskedSdpa", "MhaCausalMask", "CausalDecoderLayer"])
def test_a_constant_attention_mask_is_folded_and_runs_on_int8(tmp_path, name):
    """is_causal, a boolean sliding window, nn.Transformer's float causal mask given to
    nn.MultiheadAttention and made in forward for a TransformerEncoderLayer: each row's allowed keys
    folded ahead of time, the softmax arm_softmax_s8 over them in the backend; they were 20-24 portable
    float operators (bmm, _softmax, the mask's full/where/logical_not/any). The head split and merge
    (permutes that keep the last dimension) are copy_region records in the backend, not portable
    permute_copy / cortex_m::transpose calls. The plan matches the reference."""
    out = tmp_path / name
    assert (
        run_cli("lower", f"{ROOT}/tests/toy_models/attention_models.py:{name}", "--target", "cortex-m4", "-o", str(out))
        == 0
    )
    report = read_report(out)
    portable = [row["op"] for row in report["instructions"] if row["op"].split("::")[0] == "aten"]
    # the q/k/v split stays upstream's; the head split and merge are the backend's strided copies
    assert all(op.split(".")[0] in ("aten::select_copy", "aten::split_with_sizes_copy") for op in portable), portable
    assert not any(row["op"].startswith(PERMUTES) for row in report["instructions"])
    assert "cmx::quantized_masked_softmax" in [layer["op"] for layer in report["delegated_layers"]]
    assert any("the mask folded" in r["what"] for r in report["rewrites"])
    plan_matches_the_reference(out)


def test_a_mask_of_no_run_of_keys_keeps_upstreams_float_path(tmp_path):
    """Every other token: no [lo, hi) a row, so the attention stays on upstream's (float) path, and passes."""
    out = tmp_path / "dilated"
    assert (
        run_cli(
            "lower",
            f"{ROOT}/tests/toy_models/attention_models.py:DilatedMaskSdpa",
            "--target",
            "cortex-m4",
            "-o",
            str(out),
        )
        == 0
    )
    report = read_report(out)
    assert "aten::_softmax.out" in [row["op"] for row in report["instructions"]]
    assert not any("the mask folded" in r["what"] for r in report["rewrites"])
    plan_matches_the_reference(out)


@pytest.mark.parametrize("name", ["SpectrogramNormKws", "PooledSpectrogramKws"])
def test_a_one_channel_input_normalized_or_pooled_before_its_first_conv_goes_channels_last(tmp_path, name):
    """A BatchNorm2d(1) or a pool between a one-channel input and the first conv: the input goes
    channels-last all the same (they keep its layout), so every conv quantizes; it was refused."""
    code, out = _lower(tmp_path, name)
    assert code == 0
    report = read_report(out)
    assert not report["float_parts"] and not report["fallbacks"], (report["float_parts"], report["fallbacks"])
    plan_matches_the_reference(out)


def test_a_view_flatten_of_a_channels_last_image_is_traced_as_a_reshape(tmp_path, capsys):
    code, out = _lower(tmp_path, "ViewFlattenCnn")
    assert code == 0
    assert "1 x.view(...) of a channels-last tensor in forward traced as x.reshape(...)" in capsys.readouterr().err
    report = read_report(out)
    assert not report["float_parts"] and not report["fallbacks"], (report["float_parts"], report["fallbacks"])
    assert report["inputs"][0]["dim_order"] == [0, 2, 3, 1]  # the input stays channels-last for its conv
    plan_matches_the_reference(out)


@pytest.mark.parametrize(
    "name", ["SamePaddingVibration", "UpsampleSkip1d", "SamePadding2d", "AdaptiveGridPool", "ZeroPaddedConvs"]
)
def test_same_padding_adaptive_pools_and_1d_upsampling_stay_int8(tmp_path, name):
    """padding="same", AdaptiveMaxPool1d/2d, an adaptive average pool to a grid and a 1-D nn.Upsample,
    as users write them: each rewritten
    exactly (named in the report) and no operator left in float; the plan is the reference."""
    code, out = _lower(tmp_path, name)
    assert code == 0
    report = read_report(out)
    assert not report["float_parts"] and not report["fallbacks"], (report["float_parts"], report["fallbacks"])
    rewrites = " ".join(f"{r['op']}: {r['what']}" for r in report["rewrites"])
    expected = {
        "SamePaddingVibration": ["aten::adaptive_max_pool1d: a 2-D max pool of height 1, kernel and stride 48"],
        "UpsampleSkip1d": ["aten::upsample_nearest1d"],
        "SamePadding2d": ['padding="same" as padding [1, 1]', 'padding="same" as padding [4, 4]', "[16, 16]"],
        "AdaptiveGridPool": ["output [2, 2]: an average pool of kernel and stride [12, 12]"],
        "ZeroPaddedConvs": ["zero padding [1, 1] into the convolution's own", "zero padding [2, 2] into"],
    }[name]
    assert all(text in rewrites for text in expected), rewrites
    plan_matches_the_reference(out)
