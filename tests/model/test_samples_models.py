"""The bundled samples: each model builds, runs, and lowers (real executorch, cortex-m55) with
every compute op on a CMSIS-NN (cortex_m::) kernel; digits is really trained.

Lowering goes through cmx-gen's own path (model_source.load -> lowering.lower -> program.analyse),
the one `cmx-gen lower samples/<name>/model.py:<Class>` takes.
"""

from __future__ import annotations

import hashlib
import importlib.util
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
import torch

from cmx_gen.app import project
from cmx_gen.fit import boards
from cmx_gen.lower import lowering
from cmx_gen.lower.state import Errors, Referenced
from cmx_gen.model import source as model_source
from cmx_gen.model.export import export
from cmx_gen.program import pte as program

ROOT = Path(__file__).resolve().parents[2]
SAMPLES_DIR = ROOT / "samples"
BOARDS_DIR = ROOT / "boards"

# name -> (class, output shape, expected operator counts of the cortex-m55 program).
# The counts pin the architecture: a change that adds a layout copy or a fallback shows here.
SAMPLES: dict[str, tuple[str, tuple[int, ...], dict[str, int]]] = {
    # cmx::<kind>: layers of cmx-gen's CMSIS-NN backend (one delegate each); the reshape before the
    # linear layer is a copy inside it
    "digits": (
        "DigitsCNN",
        (1, 10),
        {
            "cortex_m::quantize_per_tensor.out": 1,
            "cortex_m::dequantize_per_tensor.out": 1,
            "cmx::conv_helium": 4,  # every convolution: cmx_conv_helium_s8 (kernel_choice.conv_kind)
            "cmx::max_pool": 2,
            "cmx::copy": 1,
            "cmx::fully_connected": 1,
        },
    ),
    "ds_cnn": (
        "DSCNN",
        (1, 12),
        {
            "cortex_m::quantize_per_tensor.out": 2,
            "cortex_m::dequantize_per_tensor.out": 2,
            "cmx::conv_helium": 5,
            "cmx::depthwise_3x3": 4,
            "cmx::avg_pool": 1,
            "cmx::copy": 1,
            "cmx::fully_connected": 1,
            "cmx::softmax": 1,
        },
    ),
    "mobilenet_v1_025": (
        "MobileNetV1025",
        (1, 2),
        {
            "cortex_m::quantize_per_tensor.out": 2,
            "cortex_m::dequantize_per_tensor.out": 2,
            "cmx::conv_helium": 14,
            "cmx::depthwise_3x3": 13,
            "cmx::avg_pool": 1,
            "cmx::copy": 1,
            "cmx::fully_connected": 1,
            "cmx::softmax": 1,
        },
    ),
    "resnet8": (
        "ResNet8",
        (1, 10),
        {
            "cortex_m::quantize_per_tensor.out": 2,
            "cortex_m::dequantize_per_tensor.out": 2,
            "cmx::conv_helium": 9,
            "cmx::add": 3,
            "cmx::avg_pool": 1,
            "cmx::copy": 1,
            "cmx::fully_connected": 1,
            "cmx::softmax": 1,
        },
    ),
    "tc_resnet8": (
        "TCResNet8",
        (1, 12),
        {  # Conv1d lifted to 2-D (lower/rewrites/one_d.py): one NCL -> NLC copy in
            "cortex_m::quantize_per_tensor.out": 2,
            "cortex_m::dequantize_per_tensor.out": 2,
            "cmx::transpose": 1,
            "cortex_m::pad.out": 1,
            "cmx::conv_helium": 10,  # the strided 9-tap ones too (CMSIS-NN's wrapper would misread them)
            "cmx::add": 3,
            "cmx::avg_pool": 1,
            "cmx::copy": 3,
            "cmx::fully_connected": 1,
            "cmx::softmax": 1,
        },
    ),
    "autoencoder": (
        "AutoEncoder",
        (1, 640),
        {
            "cortex_m::quantize_per_tensor.out": 1,
            "cortex_m::dequantize_per_tensor.out": 1,
            "cmx::fully_connected": 10,
        },
    ),
}
# On a DSP core the plan runs cmx-gen's kernels: cmx_conv_row_s8 for every convolution of one group
# (the 10x4 first layer too; own_kernels.py), on the M55 cmx_conv_helium_s8; 0: none left. 3x3 depthwise layers of 8k channels run
# cmx_depthwise_3x3_s8 on both cores (on the M55 its Helium path: kernel_choice.depthwise_kind). Fully connected layers run cmx_fully_connected_s8 on both
# cores (the counts above).
DSP_KINDS: dict[str, dict[str, int]] = {"ds_cnn": {"cmx::conv_helium": 0, "cmx::conv_row": 5}}
ALLOWED_CLASSES = {"cmsis_nn", "quant_boundary", "data_movement"}
# name -> (largest max|float - int8| relative to the float output's magnitude, least top-1 agreement)
# over the example input and the calibration set. Measured (cortex-m55): digits 0.025/100 %,
# ds_cnn 0.025/100 %, resnet8 0.022/91 %, mobilenet 0.26/65 %, autoencoder 0.18. Random weights give
# near-zero logit margins, so INT8 noise flips the top-1 of the deeper random nets (see their READMEs).
FIDELITY: dict[str, tuple[float, float | None]] = {
    "digits": (0.1, 0.95),
    "ds_cnn": (0.1, 0.9),
    "mobilenet_v1_025": (0.45, 0.5),
    "resnet8": (0.1, 0.75),
    "autoencoder": (0.3, None),
    "tc_resnet8": (0.2, 0.85),
}
# name -> the most planned memory (bytes) its cortex-m55 program may take at the default goal with float
# I/O: a change that needs more shows here (issue 53: MobileNetV2-224 had grown by its float image).
# Measured at the commit that laid a float input into the working memory it dies before (before it:
# digits 1,456, ds_cnn 11,936, resnet8 45,744; the others as now).
PLANNED_CEILING: dict[str, int] = {
    "digits": 1_216,
    "ds_cnn": 9_984,
    "mobilenet_v1_025": 147_488,
    "resnet8": 33_472,
    "tc_resnet8": 24_256,
    "autoencoder": 3_968,
}
SLOW = {"mobilenet_v1_025"}  # > 30 s to lower + run its reference on the calibration set


def params(names=SAMPLES):
    return [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in names]


LOWERING_SECONDS: dict[str, float] = {}


def spec(name: str) -> str:
    return f"{SAMPLES_DIR / name / 'model.py'}:{SAMPLES[name][0]}"


def import_sample(name: str, file: str = "model.py"):
    path = SAMPLES_DIR / name / file
    module_name = f"cmx_sample_{name}_{path.stem}"
    loader = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(loader)
    sys.path.insert(0, str(path.parent))
    try:
        loader.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


@pytest.fixture(scope="module")
def lowered():
    """Lower each sample once for cortex-m55; name -> (LoweredModel, ProgramInfo)."""
    cache: dict[str, tuple[lowering.LoweredModel, program.ProgramInfo]] = {}

    def get(name: str):
        if name not in cache:
            source = model_source.load(spec(name))
            started = time.monotonic()
            result = lowering.lower(export(source), "cortex-m55")
            LOWERING_SECONDS[name] = time.monotonic() - started
            cache[name] = (result, program.analyse(result.pte))
        return cache[name]

    return get


@pytest.mark.parametrize("name", list(SAMPLES))
def test_sample_runs_on_its_example_inputs(name):
    source = model_source.load(spec(name))
    assert not source.random_calibration and len(source.calibration) >= 16
    with torch.no_grad():
        (out,) = model_source.call(source.module, source.example_inputs)
    assert tuple(out.shape) == SAMPLES[name][1]
    assert torch.isfinite(out).all()
    assert out.std() > 0, "a constant output means the seeded weights/BatchNorm statistics are broken"


@pytest.mark.parametrize("name", [n for n in SAMPLES if n != "digits"])
def test_random_weights_are_reproducible(name):
    module = import_sample(name)
    cls = getattr(module, SAMPLES[name][0])
    torch.manual_seed(123)  # the global RNG must not matter: the models seed their own
    a = cls().state_dict()
    torch.manual_seed(456)
    b = cls().state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    x1, x2 = module.calibration_data(), module.calibration_data()
    assert all(torch.equal(p[0], q[0]) for p, q in zip(x1, x2))


@pytest.mark.parametrize("name", params())
def test_sample_lowers_with_every_compute_op_on_cmsis_nn(name, lowered):
    result, info = lowered(name)
    classes = {op.name: op.class_ for op in info.operators}
    assert info.fallbacks == [], f"{name} falls back to portable compute: {info.fallbacks}"
    assert set(classes.values()) <= ALLOWED_CLASSES, classes
    assert {op.name: op.count for op in info.operators} == SAMPLES[name][2]
    assert info.pte_bytes == len(result.pte) > 0
    print(f"\n{name}: lowered in {LOWERING_SECONDS[name]:.1f} s, .pte {info.pte_bytes} bytes")


@pytest.mark.parametrize("name", params())
def test_sample_needs_no_more_planned_memory_than_before(name, lowered):
    _, info = lowered(name)
    assert info.planned_bytes <= PLANNED_CEILING[name], f"{name}: {info.planned_bytes:,} B planned"


@pytest.mark.parametrize("name", [pytest.param("ds_cnn", marks=pytest.mark.slow), "autoencoder"])
def test_samples_for_cortex_m4_boards_lower_for_dsp(name):
    """Their natural boards include mps2-an386 (Cortex-M4): same kernels, DSP scratch sizes."""
    source = model_source.load(spec(name))
    started = time.monotonic()
    result = lowering.lower(export(source), "cortex-m4")
    info = program.analyse(result.pte)
    assert result.target.isa == "DSP"
    assert info.fallbacks == []
    expected = {op: n for op, n in {**SAMPLES[name][2], **DSP_KINDS.get(name, {})}.items() if n}
    assert {op.name: op.count for op in info.operators} == expected
    print(f"\n{name} (cortex-m4): lowered in {time.monotonic() - started:.1f} s, .pte {info.pte_bytes} bytes")


@pytest.mark.parametrize("name", params())
def test_lowered_sample_stays_close_to_float(name, lowered):
    """INT8 reference outputs (the lowered program run in Python) track the float model."""
    result, _ = lowered(name)
    kernel_exact = result.get(Referenced).runs.kernel_exact
    pairs = [(result.given.exported.float_outputs, kernel_exact), *result.get(Errors).calibration_outputs]
    max_rel, min_agree = FIDELITY[name]
    worst = max(((f[0] - q[0]).abs().max() / f[0].abs().max()).item() for f, q in pairs)
    assert worst < max_rel, f"{name}: max |float - int8| is {worst:.0%} of the float output's magnitude"
    if min_agree is not None:
        agree = sum(int(f[0].argmax() == q[0].argmax()) for f, q in pairs) / len(pairs)
        assert agree >= min_agree, f"{name}: top-1 agreement {agree:.0%}"


def test_digits_float_accuracy_on_test_split():
    module = import_sample("digits")
    x, y = module.evaluation_data()
    assert len(x) == 360 and x.shape[1:] == (1, 8, 8)
    with torch.no_grad():
        accuracy = (module.DigitsCNN()(x).argmax(1) == y).float().mean().item()
    assert accuracy > 0.95


def test_digits_int8_accuracy_on_test_split():
    """The lowered program (cortex_m reference kernels) on the whole test split."""
    evaluate = import_sample("digits", "evaluate.py")
    model = evaluate.DigitsCNN()
    lowered_program, pte = evaluate.lower(model, "cortex-m55")
    run = lowered_program.module()
    x, y = evaluate.evaluation_data()
    with torch.no_grad():
        preds = torch.stack(
            [run(x[i : i + 1].to(memory_format=torch.channels_last))[0].argmax() for i in range(len(x))]
        )
    assert (preds == y).float().mean().item() > 0.95
    assert len(pte) < 64 * 1024


def test_digits_training_is_reproducible(tmp_path):
    """train.py is deterministic on the machine it runs on (two runs, the same bytes), and what it
    trains is as good as the committed weights. Not byte-equal to them: float kernels take other
    SIMD paths on other CPUs, so weights trained elsewhere differ in their last bits (issue 22)."""
    runs = []
    for run in ("a", "b"):  # one file name: torch.save names the archive's folder after it
        out = tmp_path / run / "digits.pt"
        out.parent.mkdir()
        subprocess.run(
            [sys.executable, str(SAMPLES_DIR / "digits" / "train.py"), "--out", str(out)],
            check=True,
            capture_output=True,
            timeout=300,
        )
        runs.append(out)
    assert hashlib.sha256(runs[0].read_bytes()).digest() == hashlib.sha256(runs[1].read_bytes()).digest(), (
        "two trainings on one machine must give the same bytes"
    )
    committed = SAMPLES_DIR / "digits" / "digits.pt"
    assert committed.stat().st_size < 64 * 1024
    digits = import_sample("digits")
    x, y = digits.evaluation_data()

    def accuracy(weights: Path) -> float:
        with torch.no_grad():
            return float((digits.DigitsCNN(weights)(x).argmax(1) == y).float().mean())

    assert accuracy(runs[0]) >= accuracy(committed) - 0.01, "the retrained model is worse than the committed one"


@pytest.mark.parametrize("name", list(SAMPLES))
def test_sample_project_file(name):
    folder = SAMPLES_DIR / name
    config = tomllib.loads((folder / "cmx.toml").read_text())
    file_part, _, cls = config["model"]["source"].partition(":")
    assert (folder / file_part).is_file() and cls == SAMPLES[name][0]
    assert hasattr(import_sample(name), cls)
    assert config["calibration"]["random"] is False and "file" not in config["calibration"]
    assert (BOARDS_DIR / f"{config['target']['board']}.yaml").is_file()
    assert config["target"]["rtos"] in {"baremetal", "zephyr"}
    assert not Path(config["output"]["dir"]).is_absolute()
    assert config["options"]["strict"] is True
    loaded = project.load(folder / "cmx.toml")  # the loader `create --config` uses
    (model,) = loaded.models
    assert model.source == f"{folder / 'model.py'}:{SAMPLES[name][0]}"
    assert loaded.strict and not model.random_calibration and model.calibration is None
    assert loaded.output == str(folder / "build" / "app")
    assert boards.load_board(loaded.board).id == loaded.board
    readme = (folder / "README.md").read_text()
    assert config["target"]["board"] in readme
    boards_line = next(line for line in readme.splitlines() if line.startswith("Natural board"))
    named = [b for b in (p.stem for p in BOARDS_DIR.glob("*.yaml")) if f"**{b}**" in boards_line]
    assert config["target"]["board"] in named, boards_line
