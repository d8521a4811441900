"""Build times and code size of generated bare-metal apps (issue 14).

For each model and board, in a fresh shared-runtime cache:
  clean_s    `cmx-gen create` + a clean build of a first app: the runtime, kernels and CMSIS-NN
             compiled (then shared, kernels/cmx_runtime_cache.cmake)
  warm_s     a second app for the same model and board: configure + link against the shared build
  relink_s   that app after a model-only change (same ops, other weights: recalibrated), `regen`
             then build: what is recompiled besides the link is given as steps
  text       .text of the default image (LTO, ExecuTorch log messages kept), and of `small`
             (CMX_ET_LOG=OFF)
  instr      instructions per inference under QEMU, and the result line's verdict
Needs EXECUTORCH_ROOT and CMSIS_NN_PATH (see `cmx-gen sdk`).
Run: .venv/bin/python bench/build.py [--board mps3-an547 ...] [--model digits ...] [--jobs 2]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cmx_gen.app import project as project_mod  # noqa: E402
from cmx_gen.app.kinds.baremetal import build  # noqa: E402
from cmx_gen.common import progress  # noqa: E402
from cmx_gen.device.runners import QemuRunner  # noqa: E402
from cmx_gen.fit.boards import load_board  # noqa: E402
from cmx_gen.pipeline.generate import generate  # noqa: E402

MODELS = {
    "digits": str(ROOT / "samples/digits/model.py:DigitsCNN"),
    "ds_cnn": str(ROOT / "samples/ds_cnn/model.py:DSCNN"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", action="append", choices=sorted(MODELS), help="default: digits and ds_cnn")
    parser.add_argument("--board", action="append", help="default: mps3-an547 and mps2-an386")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="parallel compile jobs")
    args = parser.parse_args()
    progress.set_quiet(True)
    print(
        f"{'model':<7} {'board':<11} {'clean_s':>7} {'warm_s':>6} {'relink_s':>8} {'steps':>5} "
        f"{'text':>7} {'small':>7} {'instr':>10}  result"
    )
    for name in args.model or ["digits", "ds_cnn"]:
        for board_id in args.board or ["mps3-an547", "mps2-an386"]:
            with tempfile.TemporaryDirectory() as tmp:
                row(Path(tmp), name, board_id, args.jobs)


def row(tmp: Path, name: str, board_id: str, jobs: int) -> None:
    cache = tmp / "runtime-cache"
    project = project_mod.Project.single(model=MODELS[name], board=board_id, rtos="baremetal")
    first, second = tmp / "first", tmp / "second"
    generate(dataclasses.replace(project, output=str(first)), first)
    clean = build.build(first, clean=True, jobs=jobs, runtime_cache=cache)
    generate(dataclasses.replace(project, output=str(second)), second)
    warm = build.build(second, jobs=jobs, runtime_cache=cache)
    board = load_board(board_id)
    result = QemuRunner(board, timeout=600).run(warm.elf)
    # model-only change: recalibrated weights and scales, the same operators
    generate(dataclasses.replace(project, output=str(second), random_calibration=True), second)
    relink = build.build(second, jobs=jobs, runtime_cache=cache)
    small = build.build(first, first / "build-small", jobs=jobs, runtime_cache=cache, defines=["CMX_ET_LOG=OFF"])
    kind, count = result.count or ("instr", 0)
    print(
        f"{name:<7} {board_id:<11} {clean.seconds:>7.1f} {warm.seconds:>6.1f} {relink.seconds:>8.1f} "
        f"{relink.compiled:>5} {clean.text_bytes:>7} {small.text_bytes:>7} {count:>10}  "
        f"{'PASS' if result.passed else 'FAIL'} max_abs_err={result.fields.get('max_abs_err')}",
        flush=True,
    )


if __name__ == "__main__":
    main()
