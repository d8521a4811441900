"""4-bit weights against int8 (`weights = "int4"`, issue 52): per model, the bytes its weights take, the
program's size, and its error against the float model on inputs it was not calibrated on, computed by
the lowering's bit-exact host reference (what the firmware computes; its PASS on QEMU is the firmware
tests' and `cmx-gen run`'s).

- the autoencoder (MLPerf Tiny AD, random weights): its anomaly score (the mean squared error between
  input and reconstruction, what the application computes) against float's, and the outputs' SQNR;
- the digits sample (trained): its accuracy on the 360-image test split;

each at int8, int4 and `auto` with an SQNR target of its own (AUTO_TARGETS), the weight bytes of the
choice counted from the layers it took to int4.

Run: python bench/weight_bits.py [--target cortex-m4]"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cmx_gen.lower import weight_choice  # noqa: E402
from cmx_gen.lower.facts import LowerOptions  # noqa: E402
from cmx_gen.lower.lowering import lower  # noqa: E402
from cmx_gen.lower.state import Evaluated  # noqa: E402
from cmx_gen.model.export import export  # noqa: E402
from cmx_gen.model.source import load  # noqa: E402


def sample_module(name: str):  # noqa: ANN201 (a sample's model.py)
    """samples/<name>/model.py as its own module (each sample's file is model.py)."""
    spec = importlib.util.spec_from_file_location(f"sample_{name}", ROOT / "samples" / name / "model.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


Metric = Callable[[list[np.ndarray], list[np.ndarray], list[np.ndarray]], str]


def weight_bytes(module: torch.nn.Module, bits: str, int4_modules: set[str]) -> int:
    """The bytes the convolution and linear weights take: a byte each, or two a byte at int4 (every layer,
    or with auto the modules it chose)."""
    total = 0
    for path, m in module.named_modules():
        if isinstance(m, (torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.Linear)):
            half = bits == "int4" or path in int4_modules
            total += (m.weight.numel() + 1) // 2 if half else m.weight.numel()
    return total


def sqnr(reference: list[np.ndarray], got: list[np.ndarray]) -> float:
    ref, out = np.concatenate([r.ravel() for r in reference]), np.concatenate([g.ravel() for g in got])
    return float(10 * np.log10(np.sum(ref**2) / max(np.sum((out - ref) ** 2), 1e-30)))


def anomaly_scores(inputs: list[np.ndarray], outputs: list[np.ndarray]) -> np.ndarray:
    return np.array([np.mean((o.ravel() - x.ravel()) ** 2) for x, o in zip(inputs, outputs)])


def autoencoder() -> tuple[str, list[tuple[torch.Tensor, ...]], Metric]:
    data = sample_module("autoencoder").synthetic_inputs(99, 200)  # held out: calibration uses seed 2027 + 1 ...
    samples = [(data[i : i + 1],) for i in range(len(data))]

    def metric(inputs: list[np.ndarray], outputs: list[np.ndarray], floats: list[np.ndarray]) -> str:
        score, score_float = anomaly_scores(inputs, outputs), anomaly_scores(inputs, floats)
        error = float(np.mean(np.abs(score - score_float) / score_float))
        return f"score {score.mean():.4f} (float {score_float.mean():.4f}), score error {100 * error:.2f} %"

    return "samples/autoencoder/model.py:AutoEncoder", samples, metric


def digits() -> tuple[str, list[tuple[torch.Tensor, ...]], Metric]:
    x, y = sample_module("digits").evaluation_data()
    labels = y.numpy()
    samples = [(x[i : i + 1],) for i in range(len(x))]

    def metric(inputs: list[np.ndarray], outputs: list[np.ndarray], floats: list[np.ndarray]) -> str:
        accuracy = float(np.mean([int(np.argmax(o)) == int(t) for o, t in zip(outputs, labels)]))
        accuracy_float = float(np.mean([int(np.argmax(o)) == int(t) for o, t in zip(floats, labels)]))
        return f"accuracy {100 * accuracy:.2f} % (float {100 * accuracy_float:.2f} %)"

    return "samples/digits/model.py:DigitsCNN", samples, metric


MODELS = {"autoencoder": autoencoder, "digits": digits}
AUTO_TARGETS = {"autoencoder": 15.0, "digits": 25.0}  # dB: between each model's all-int4 and all-int8 SQNR


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", default="cortex-m4")
    parser.add_argument("--models", nargs="*", default=list(MODELS), choices=list(MODELS))
    args = parser.parse_args()
    print("| model | weights | weight bytes | .pte bytes | output SQNR vs float | metric |")
    print("|---|---|---:|---:|---:|---|")
    for name in args.models:
        spec, samples, metric = MODELS[name]()
        exported = export(load(str(ROOT / spec)))
        for bits in ("int8", "int4", "auto"):
            options = LowerOptions(weights=bits, sqnr_target=AUTO_TARGETS[name] if bits == "auto" else None)
            int4_modules: set[str] = set()
            if bits == "auto":
                options, choice = weight_choice.resolve(exported, args.target, options)
                int4_modules = {layer.module for layer in choice.layers if layer.weights == "int4"}
            lowered = lower(exported, args.target, options, evaluate=samples)
            runs = lowered.get(Evaluated).samples
            inputs = [np.asarray(s[0].numpy()) for s, _, _ in runs]
            outputs = [np.asarray(o[0], dtype=np.float64) for _, o, _ in runs]
            floats = [np.asarray(f[0].detach().numpy(), dtype=np.float64) for _, _, f in runs]
            size = weight_bytes(exported.source.module, bits, int4_modules)
            print(
                f"| {name} | {bits}{f' ({len(int4_modules)} at int4)' if bits == 'auto' else ''} | {size:,} | {len(lowered.pte):,} | {sqnr(floats, outputs):.1f} dB "
                f"| {metric(inputs, outputs, floats)} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
