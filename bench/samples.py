"""Per sample and core: .pte size, planned RAM, pools, and with the SDK: runtime .text, build time,
instructions per inference on QEMU and the PASS/FAIL line. Also the wall time of a cached `regen`.

Run: .venv/bin/python bench/samples.py [--samples digits ds_cnn] [--boards mps3-an547 mps2-an386]
Builds and runs only when EXECUTORCH_ROOT and CMSIS_NN_PATH are set (see `cmx-gen sdk`).
Apps go to a temporary folder (or --work DIR).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cmx_gen.app import project as project_mod  # noqa: E402
from cmx_gen.common.noise import quiet_third_party  # noqa: E402
from cmx_gen.pipeline.generate import generate  # noqa: E402

SAMPLES = ["digits", "ds_cnn", "mobilenet_v1_025", "resnet8", "autoencoder"]
BOARDS = ["mps3-an547", "mps2-an386"]  # QEMU: Cortex-M55 (MVE), Cortex-M4 (DSP)


def sdk_present() -> bool:
    return bool(os.environ.get("EXECUTORCH_ROOT") and os.environ.get("CMSIS_NN_PATH"))


def regen_seconds(app: Path) -> float:
    start = time.monotonic()
    subprocess.run([sys.executable, "-m", "cmx_gen", "regen", str(app)], check=True, capture_output=True)
    return time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", nargs="+", default=SAMPLES)
    parser.add_argument("--boards", nargs="+", default=BOARDS)
    parser.add_argument("--work", help="folder for the apps (default: a temporary folder)")
    args = parser.parse_args()
    quiet_third_party()
    work = Path(args.work or tempfile.mkdtemp(prefix="cmx-bench-"))
    firmware = sdk_present()
    header = f"{'sample':<17} {'board':<11} {'core':<10} {'pte_B':>8} {'planned_B':>9} {'method_B':>8} {'temp_B':>6}"
    if firmware:
        header += f" {'text_B':>7} {'build_s':>7} {'instr':>10}  result"
    print(header)
    print(
        f"# apps in {work}; firmware {'built and run' if firmware else 'not built: EXECUTORCH_ROOT/CMSIS_NN_PATH not set'}"
    )
    for sample in args.samples:
        base = project_mod.load(ROOT / "samples" / sample / project_mod.FILE_NAME)
        for board in args.boards:
            project = dataclasses.replace(base, board=board, rtos="baremetal")
            app = work / f"{sample}-{board}"
            done = generate(project, app)
            report, placement = done.artifacts.report, done.placement
            line = (
                f"{sample:<17} {board:<11} {report.target.core:<10} {report.pte.bytes:>8} "
                f"{report.memory.planned_bytes:>9} {placement.method_pool_bytes:>8} {placement.temp_pool_bytes:>6}"
            )
            if firmware:
                from cmx_gen.app.folder import AppFolder
                from cmx_gen.app.kinds import kind_of
                from cmx_gen.app.kinds.baremetal.build import build

                built = build(app, clean=True)
                folder = AppFolder(app)
                result = kind_of(folder).runner(folder, 300).run(built.elf)
                counter = result.count
                line += (
                    f" {built.text_bytes:>7} {built.seconds:>7.1f} {counter[1] if counter else '-':>10}  {result.line}"
                )
            print(line, flush=True)
    first = work / f"{args.samples[0]}-{args.boards[0]}"
    print(f"# cached regen of {first.name}: {regen_seconds(first):.2f} s")


if __name__ == "__main__":
    main()
