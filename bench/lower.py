"""Lowering wall time and peak memory for the digits sample and a DS-CNN-size model (1x1x49x10).

Each model is lowered in a fresh process so peak RSS is its own. Prints one line per model:
    model  target  wall_s  peak_rss_mib  pte_bytes
Run: .venv/bin/python bench/lower.py [--target cortex-m55]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = {
    "digits": str(ROOT / "samples/digits/model.py:DigitsCNN"),
    "ds_cnn": str(ROOT / "samples/ds_cnn/model.py:DSCNN"),
}


def lower_once(spec: str, target: str) -> tuple[float, float, int]:
    with tempfile.TemporaryDirectory() as out:
        start = time.monotonic()
        child = subprocess.Popen(
            [sys.executable, "-m", "cmx_gen", "lower", spec, "--target", target, "-o", out],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _, status, usage = os.wait4(child.pid, 0)  # this child's own peak RSS
        wall = time.monotonic() - start
        if status != 0:
            raise SystemExit(f"lowering {spec} failed (status {status})")
        return wall, usage.ru_maxrss / 1024, (Path(out) / "model.pte").stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--target", default="cortex-m55")
    args = parser.parse_args()
    print(f"{'model':<8} {'target':<11} {'wall_s':>7} {'peak_rss_mib':>13} {'pte_bytes':>10}")
    for name, spec in MODELS.items():
        wall, peak, size = lower_once(spec, args.target)
        print(f"{name:<8} {args.target:<11} {wall:>7.1f} {peak:>13.0f} {size:>10}")


if __name__ == "__main__":
    main()
