"""16-bit activations against int8 (`precision = "int16"`, 8w16a, issue 52): the denoiser sample (trained,
samples/denoiser) on 200 held-out windows, its output's SNR against the clean signal (its own metric) at
float, int8, int16, int16 for the add alone and `precision = "auto"` (at the sample's cmx.toml target: the
layers it takes are printed), computed by the
lowering's bit-exact host reference (what the firmware computes: its PASS on QEMU is `cmx-gen run`'s and
the firmware tests'), beside the program's size and the working memory its activations take.

Run: python bench/precision.py [--target cortex-m55]"""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from weight_bits import sample_module  # noqa: E402

from cmx_gen.lower import precision_choice  # noqa: E402
from cmx_gen.lower.facts import LowerOptions  # noqa: E402
from cmx_gen.lower.lowering import lower  # noqa: E402
from cmx_gen.lower.state import Delegated, Evaluated  # noqa: E402
from cmx_gen.model.export import export  # noqa: E402
from cmx_gen.model.source import load  # noqa: E402

CHOICES = {
    "int8": LowerOptions(),
    "int16": LowerOptions(precision="int16"),
    "int8, add=int16": LowerOptions(precision_for=("add=int16",)),
}
SAMPLE = ROOT / "samples/denoiser"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", default="cortex-m55")
    args = parser.parse_args()
    denoiser = sample_module("denoiser")
    noisy, clean = denoiser.evaluation_data()
    samples = [(noisy[i : i + 1],) for i in range(len(noisy))]
    exported = export(load(str(SAMPLE / "model.py:Denoiser")))
    target = tomllib.loads((SAMPLE / "cmx.toml").read_text())["options"]["sqnr_target"]
    auto, choice = precision_choice.resolve(exported, args.target, LowerOptions(precision="auto", sqnr_target=target))
    taken = " ".join(m.module for m in choice.layers if m.precision == "int16")
    choices = {**CHOICES, f"auto ({target:g} dB): {taken}=int16": auto}
    with torch.no_grad():
        floats = exported.source.module(noisy)
    print(f"input SNR {denoiser.snr_db(clean, noisy):.2f} dB; {args.target}; 200 held-out windows\n")
    print("| activations | output SNR vs clean | vs float output | .pte bytes | working memory |")
    print("|---|---:|---:|---:|---:|")
    print(f"| float | {denoiser.snr_db(clean, floats):.2f} dB | | | |")
    for name, options in choices.items():
        lowered = lower(exported, args.target, options, evaluate=samples)
        runs = lowered.get(Evaluated).samples
        outputs = torch.from_numpy(np.concatenate([np.asarray(o[0], dtype=np.float32) for _, o, _ in runs]))
        work = sum(schedule.work_bytes for schedule in lowered.get(Delegated).schedules)
        print(
            f"| {name} | {denoiser.snr_db(clean, outputs):.2f} dB | {denoiser.snr_db(floats, outputs):.1f} dB "
            f"| {len(lowered.pte):,} | {work:,} B |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
