"""Four `create` + `build` + `run` of different models at once, sharing one CMX_GEN_CACHE (issue 22,
part 4): every app must PASS and every cache entry must read back whole. Round 1 starts from a cold
(empty) cache, so the four lower, memoize and build the kernel library side by side; round 2 runs
the same four again on that warm cache, so they read what round 1 wrote while the others do too.

Needs EXECUTORCH_ROOT and CMSIS_NN_PATH (see `cmx-gen sdk`) and qemu-system-arm.
Run: .venv/bin/python bench/four_at_once.py --work /tmp/cmx-four
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kill import bad_cache_entries, lowering_entries  # noqa: E402  (bench/kill.py: the same cache check)

MODELS = {
    "digits": ["samples/digits/model.py:DigitsCNN"],
    "ds_cnn": ["samples/ds_cnn/model.py:DSCNN"],
    "autoencoder": ["samples/autoencoder/model.py:AutoEncoder"],
    "residual": ["tests/toy_models/small.py:Residual", "--input-shape", "1,3,16,16", "--random-calibration"],
}


def one_app(name: str, args: list[str], folder: Path, env: dict[str, str]) -> subprocess.Popen:
    """create && build && run as one shell job, so the four overlap through every step."""
    app = folder / name
    cmx = f"{sys.executable} -m cmx_gen"
    model = [str(ROOT / args[0]), *args[1:]]
    script = (
        f"{cmx} create {' '.join(map(shlex.quote, model))} --board mps3-an547 --rtos baremetal "
        f"-o {shlex.quote(str(app))} && {cmx} build {shlex.quote(str(app))} && {cmx} run {shlex.quote(str(app))}"
    )
    return subprocess.Popen(
        ["bash", "-c", script], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", required=True, help="folder for the apps and the shared cache (outside the repo)")
    args = parser.parse_args()
    if not (os.environ.get("EXECUTORCH_ROOT") and os.environ.get("CMSIS_NN_PATH")):
        print("four_at_once: EXECUTORCH_ROOT and CMSIS_NN_PATH must be set (see `cmx-gen sdk`)", file=sys.stderr)
        return 2
    work = Path(args.work).resolve()
    shutil.rmtree(work, ignore_errors=True)
    cache = work / "cache"
    env = dict(os.environ, CMX_GEN_CACHE=str(cache), PYTHONPATH=str(ROOT))
    failed = 0
    for round_name in ("cold cache", "warm cache"):
        folder = work / round_name.replace(" ", "-")
        folder.mkdir(parents=True)
        started = time.monotonic()
        jobs = {name: one_app(name, model, folder, env) for name, model in MODELS.items()}
        passes = 0
        for name, job in jobs.items():
            out, _ = job.communicate()
            line = next(
                (
                    text
                    for text in out.splitlines()
                    if text.startswith("cmx-gen: ") and ("PASS" in text or "FAIL" in text)
                ),
                (out.strip().splitlines() or ["?"])[-1],
            )
            ok = job.returncode == 0 and line.startswith("cmx-gen: PASS")
            passes += ok
            print(f"{round_name:<10} {name:<12} {'ok  ' if ok else 'BAD '} {line[:150]}", flush=True)
        bad = bad_cache_entries(cache)
        for entry in bad:
            print(f"{round_name:<10} bad cache entry: {entry}", flush=True)
        entries = len(lowering_entries(cache))
        print(
            f"# {round_name}: {passes}/{len(jobs)} PASS, {len(bad)} bad cache entries "
            f"({entries} lowering entries), {time.monotonic() - started:.0f} s",
            flush=True,
        )
        failed += (len(jobs) - passes) + len(bad)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
