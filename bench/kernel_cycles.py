"""Estimated cycles per unit of work of each backend layer kind on a core (issue 51): what `cmx-gen
check` and `create` price a model's layers with before anything is built (fit/latency.py reads
data/kernel_cycles.yaml, which this prints).

Each sample is created (`--io int8` but where OPTIONS say otherwise, under its memory goal in MEMORY), built and run with `--profile`
under QEMU: the profile's cycles column (cmx-gen's plugin and the core's timing table, the profile's
hooks included) per backend layer, beside the layer's work, outputs and calls from model/report.json
(work: the MACs of a convolution, depthwise or linear layer, else the elements of its largest input; a
patched layer's work and outputs count its halos, its calls its patches). Each kind's cycles are fitted
over its layers of every sample as per_work x work + per_output x outputs + per_layer x calls (the
requantization of each output and a call's own cost are not MACs). Needs the SDK (EXECUTORCH_ROOT,
CMSIS_NN_PATH); says so and exits 0 without it.

Run: .venv/bin/python bench/kernel_cycles.py --work /tmp/cmx-kernel-cycles [--board mps2-an386] [--reuse]
     [--samples NAME ...]   (default: the MLPerf networks and MORE)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = {  # the MLPerf Tiny networks: every DSP kernel kind the backend picks for them
    "ds_cnn": "samples/ds_cnn/model.py:DSCNN",
    "mobilenet_v1_025": "samples/mobilenet_v1_025/model.py:MobileNetV1025",
    "resnet8": "samples/resnet8/model.py:ResNet8",
    "autoencoder": "samples/autoencoder/model.py:AutoEncoder",
}
# Models written the ordinary PyTorch way, for the kinds the MLPerf networks do not have (attention's
# bmm, LayerNorm, the tables, recurrent layers, max pools, copies): a kind is fitted over these only where
# no MLPerf network has it, so the MLPerf kinds' figures stay theirs.
MORE = {
    "tiny_vit": "tests/toy_models/user_models.py:TinyViT",
    "encoder": "tests/toy_models/attention_models.py:EncoderPostNorm",
    "tiny_unet": "tests/toy_models/user_models.py:TinyUNet",
    "bigru_kws": "tests/toy_models/user_models.py:BiGruKeywordSpotter",
    "bilstm_tagger": "tests/toy_models/user_models.py:BiLstmTagger",
    "digits": "samples/digits/model.py:DigitsCNN",  # a max pool
    "gated_kws": "tests/toy_models/user_models.py:GatedKwsHead",  # linear (M4), mul
    "resnet8_min": "samples/resnet8/model.py:ResNet8",  # conv_general: its first stages patch by patch
    "digits_min": "samples/digits/model.py:DigitsCNN",  # ... and two more (M4; the M55's are conv_helium)
    "autoencoder_int4": "samples/autoencoder/model.py:AutoEncoder",  # linear_s4 (weights = "int4")
    "int4_net": "tests/toy_models/int4_models.py:Int4Net",  # conv_s4, depthwise_s4, linear_s4
    "int16_net": "tests/toy_models/int16_models.py:Int16Net",  # conv_s16, depthwise_s16, linear_s16
    "denoiser_int16": "samples/denoiser/model.py:Denoiser",  # conv_s16 (1-D)
    "denoiser_out16": "samples/denoiser/model.py:Denoiser",  # lut_s16 (int8 into the int16 last layer)
    "int16_residual": "tests/toy_models/int16_models.py:Int16Residual",  # add_s16, mul_s16, max_pool_s16, avg_pool_s16
    "bilstm_int16": "tests/toy_models/user_models.py:BiLstmTagger",  # lstm_s16 (both directions)
    "encoder_int16": "tests/toy_models/attention_models.py:EncoderPostNorm",  # bmm_s16, softmax_s16
    "int16_gate": "tests/toy_models/int16_models.py:Int16Gate",  # activation_s16
    "autoencoder_pc": "samples/autoencoder/model.py:AutoEncoder",  # linear_per_channel
}
# A sample made under a memory goal (--memory): arm_convolve_s8 itself (conv_general) runs only where
# the schedule runs a convolution patch by patch, which `--memory min` asks for.
MEMORY = {"resnet8_min": "min", "digits_min": "min"}
# The s4 kinds run only for 4-bit weights, the s16 kinds only for 16-bit activations (whose program
# takes float: --io int8 gives an int8 boundary).
OPTIONS = {
    "autoencoder_int4": ("--io", "int8", "--weights", "int4"),
    "int4_net": ("--io", "int8", "--weights", "int4"),
    "int16_net": ("--precision", "int16"),
    "denoiser_int16": ("--precision", "int16"),
    "denoiser_out16": ("--precision-for", "out=int16"),
    "int16_residual": ("--precision", "int16"),
    "bilstm_int16": ("--precision", "int16"),
    "encoder_int16": ("--precision", "int16"),
    "int16_gate": ("--precision", "int16"),
    "autoencoder_pc": ("--io", "int8", "--per-channel-linear"),
}
MODELS = {**SAMPLES, **MORE}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "cmx_gen", *args], capture_output=True, text=True, env=env)


def profile(sample: str, board: str, work: Path, reuse: bool) -> tuple[list[dict], list[dict]]:
    """The app's delegated layers (model/report.json) and its profile rows (cycles per layer)."""
    app = work / f"{sample}_{board}"
    model = f"{ROOT}/{MODELS[sample]}"
    memory = ("--memory", MEMORY[sample]) if sample in MEMORY else ()
    memory += OPTIONS.get(sample, ("--io", "int8"))
    steps = [
        ("create", model, "--board", board, "-o", str(app), "--force", *memory),
        ("build", str(app)),
        ("run", str(app), "--profile", "--json", str(app / "profile.json"), "--timeout", "900"),
    ]
    for step in steps if not (reuse and (app / "profile.json").is_file()) else ():
        done = cli(*step)
        if done.returncode != 0:
            raise SystemExit(f"{sample}: `cmx-gen {step[0]}` failed: {(done.stderr or done.stdout).strip()[-400:]}")
    layers = json.loads((app / "model" / "report.json").read_text())["delegated_layers"]
    rows = json.loads((app / "profile.json").read_text())["rows"]
    return layers, rows


def total_cycles(work: Path, sample: str, board: str) -> int:
    """The whole inference's estimated cycles in the sample's profile."""
    return int(json.loads((work / f"{sample}_{board}" / "profile.json").read_text())["cycles"]["estimated"])


TERMS = ("per_work", "per_output", "per_layer")


def fit(points: list[tuple[int, int, int, int]]) -> dict[str, float]:
    """cycles ~ per_work x work + per_output x outputs + per_layer x calls, least squares over a kind's
    layers: the subset of the three terms with every coefficient >= 0 that fits best (a kind seen
    on few layers keeps fewer terms)."""
    work = np.array([[w, o, n] for w, o, n, _ in points], dtype=float)
    cycles = np.array([c for *_, c in points], dtype=float)
    best: tuple[float, dict[str, float]] | None = None
    for terms in ((0, 1, 2), (0, 1), (0, 2), (0,)):
        if len(terms) > len(points) or np.linalg.matrix_rank(work[:, terms]) < len(terms):
            continue  # too few layers, or two terms the same here (an add's work is its outputs)
        coef, *_ = np.linalg.lstsq(work[:, terms], cycles, rcond=None)
        if (coef < 0).any():
            continue
        error = float(np.abs(work[:, terms] @ coef - cycles).max() / cycles.max())
        if best is None or error < best[0] - 0.01:  # a term more only where it fits clearly better
            best = (error, {TERMS[t]: round(float(c), 3) for t, c in zip(terms, coef)})
    assert best is not None
    return best[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True, help="where the apps are made (outside the repo)")
    parser.add_argument("--board", default="mps2-an386", help="a QEMU board whose core has a timing table")
    parser.add_argument("--samples", nargs="*", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--reuse", action="store_true", help="read the profiles an earlier run left in --work")
    args = parser.parse_args()
    if not (os.environ.get("EXECUTORCH_ROOT") and os.environ.get("CMSIS_NN_PATH")):
        print("not run: needs EXECUTORCH_ROOT and CMSIS_NN_PATH (the firmware SDK)")
        return 0
    args.work.mkdir(parents=True, exist_ok=True)
    points: dict[str, list[tuple[int, int, int, int]]] = defaultdict(list)
    where: dict[str, list[str]] = defaultdict(list)
    origin: dict[str, list[str]] = defaultdict(list)  # the sample of each point
    networks: dict[str, tuple[int, list[tuple[str, int, int, int]]]] = {}  # sample -> (its cycles, its layers)
    for sample in args.samples:
        print(f"{sample}: create, build, run --profile ...", flush=True)
        layers, rows = profile(sample, args.board, args.work, args.reuse)
        by_debug = {row["layer"]: row for row in rows if row.get("layer") is not None}
        networks[sample] = (total_cycles(args.work, sample, args.board), [])
        for layer in layers:
            row = by_debug.get(layer["debug"])
            if row is None or not layer.get("work") or row.get("cycles") is None:
                continue
            outputs = layer.get("outputs") or (int(np.prod(layer["shape"])) if layer["shape"] else 1)
            calls = int(layer.get("calls", 1))
            points[layer["kind"]].append((layer["work"], outputs, calls, row["cycles"]))
            origin[layer["kind"]].append(sample)
            networks[sample][1].append((layer["kind"], layer["work"], outputs, calls))
            name = layer["module"] or layer["op"]
            print(
                f"  {layer['kind']:<16} {name:<28} {row['cycles']:>10,} cycles {layer['work']:>9,} work "
                f"{outputs:>7,} outputs {calls:>3} calls  {row['cycles'] / layer['work']:.2f} a unit of work"
            )
            if sample not in where[layer["kind"]]:
                where[layer["kind"]].append(sample)
    print(f"\n# {args.board}, cycles of each layer in `run --profile` fitted over {', '.join(args.samples)}")
    for kind, found in where.items():  # a kind an MLPerf network has is fitted over those networks only
        if any(sample in SAMPLES for sample in found) and any(sample in MORE for sample in found):
            points[kind] = [p for p, sample in zip(points[kind], origin[kind]) if sample in SAMPLES]
            where[kind] = [sample for sample in found if sample in SAMPLES]
    total = sum(c for kind in points.values() for *_, c in kind)
    fitted = {kind: fit(found) for kind, found in points.items()}
    priced = lambda kind, w, o, n: sum(fitted[kind].get(t, 0.0) * x for t, x in zip(TERMS, (w, o, n)))  # noqa: E731
    for sample, (measured, layers) in sorted(networks.items()):
        estimated = sum(priced(kind, w, o, n) for kind, w, o, n in layers)
        print(
            f"  {sample}: {estimated:,.0f} estimated from the figures, {measured:,} in the profile ({estimated / measured - 1:+.1%})"
        )
    for kind in sorted(points, key=lambda k: -sum(c for *_, c in points[k])):
        figures = fitted[kind]
        worst = max(
            abs(sum(figures.get(t, 0.0) * x for t, x in zip(TERMS, (w, o, n))) - c) / c for w, o, n, c in points[kind]
        )
        spent = sum(c for *_, c in points[kind])
        print(
            f"    {kind}: {{{', '.join(f'{t}: {v}' for t, v in figures.items())}}}  "
            f"# {len(points[kind])} layers ({', '.join(where[kind])}), {spent / total:.1%} of the cycles, "
            f"worst layer {worst:.0%} off"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
