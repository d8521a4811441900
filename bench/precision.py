"""16-bit activations against int8 (`precision = "int16"`, 8w16a, issue 52): the denoiser sample (trained,
samples/denoiser) on 200 held-out windows, its output's SNR against the clean signal (its own metric) at
float, int8 and int16 (and with int16 for the last layer only, the cheapest override), computed by the
lowering's bit-exact host reference (what the firmware computes: its PASS on QEMU is `cmx-gen run`'s and
the firmware tests'), beside the program's size and the working memory its activations take.

Run: python bench/precision.py [--target cortex-m55]"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from weight_bits import sample_module  # noqa: E402

from cmx_gen.lower.facts import LowerOptions  # noqa: E402
from cmx_gen.lower.lowering import lower  # noqa: E402
from cmx_gen.lower.state import Delegated, Evaluated  # noqa: E402
from cmx_gen.model.export import export  # noqa: E402
from cmx_gen.model.source import load  # noqa: E402

CHOICES = {
    "int8": LowerOptions(),
    "int16": LowerOptions(precision="int16"),
    "int8, conv1=int16": LowerOptions(precision_for=("conv1=int16",)),
    "int8, conv1 conv2=int16": LowerOptions(precision_for=("conv1=int16", "conv2=int16")),
    "int8, out=int16": LowerOptions(precision_for=("out=int16",)),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", default="cortex-m55")
    args = parser.parse_args()
    denoiser = sample_module("denoiser")
    noisy, clean = denoiser.evaluation_data()
    samples = [(noisy[i : i + 1],) for i in range(len(noisy))]
    exported = export(load(str(ROOT / "samples/denoiser/model.py:Denoiser")))
    with torch.no_grad():
        floats = exported.source.module(noisy)
    print(f"input SNR {denoiser.snr_db(clean, noisy):.2f} dB; {args.target}; 200 held-out windows\n")
    print("| activations | output SNR vs clean | vs float output | .pte bytes | working memory |")
    print("|---|---:|---:|---:|---:|")
    print(f"| float | {denoiser.snr_db(clean, floats):.2f} dB | | | |")
    for name, options in CHOICES.items():
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
