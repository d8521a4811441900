"""Clean-build time and code size of generated bare-metal apps (issue 4 goals: <= 60 s, .text <= 120 KB).

For each model and board: `cmx-gen create` into a temporary folder, a clean `cmx-gen build` (the
ExecuTorch runtime, the model's kernels and CMSIS-NN compiled from the SDK sources), then the app
under QEMU when the board has a machine. Prints one line per app:
    model  board  build_s  jobs  text_bytes  result line
Needs EXECUTORCH_ROOT and CMSIS_NN_PATH (see `cmx-gen sdk`).
Run: .venv/bin/python bench/build.py [--board mps3-an547 ...] [--model digits ...] [--jobs 2]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cmx_gen import build, progress, project as project_mod  # noqa: E402
from cmx_gen.boards import load_board  # noqa: E402
from cmx_gen.generate import generate  # noqa: E402
from cmx_gen.runners import QemuRunner  # noqa: E402

MODELS = {
    "digits": str(ROOT / "samples/digits/model.py:DigitsCNN"),
    "ds_cnn": str(ROOT / "samples/ds_cnn/model.py:DSCNN"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", action="append", choices=sorted(MODELS), help="default: digits and ds_cnn")
    parser.add_argument("--board", action="append", help="default: mps3-an547")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="parallel compile jobs")
    parser.add_argument("--no-run", action="store_true", help="do not run the firmware under QEMU")
    args = parser.parse_args()
    progress.set_quiet(True)
    print(f"{'model':<8} {'board':<14} {'build_s':>8} {'jobs':>4} {'text_bytes':>10}  result")
    for name in args.model or ["digits", "ds_cnn"]:
        for board_id in args.board or ["mps3-an547"]:
            with tempfile.TemporaryDirectory() as tmp:
                app = Path(tmp) / "app"
                generate(project_mod.Project(model=MODELS[name], board=board_id, rtos="baremetal", output=str(app)), app)
                built = build.build(app, clean=True, jobs=args.jobs)
                board = load_board(board_id)
                line = "-"
                if board.qemu and not args.no_run:
                    line = QemuRunner(board, timeout=600).run(built.elf).line
                print(f"{name:<8} {board_id:<14} {built.seconds:>8.1f} {args.jobs:>4} {built.text_bytes:>10}  {line}", flush=True)


if __name__ == "__main__":
    main()
