"""The user's application on the target (issue 20): per-call counts, and a data set streamed through it.

For each model and board (bare metal, QEMU -icount shift=0):
  calls      `cmx-gen run --app`: instructions of calls 1..10, their spread over calls 2..10, whether
             the pools' high-water marks moved after call 1, call 0 against the check's bytes
  check      the check's instructions per inference (the same API underneath)
  data       with --data (digits only: its test split, 360 images) `cmx-gen run --data`: samples
             bit-exact, target/host int8/host float accuracy, and the wall time of the host
             reference (lowering again with the samples) and of the target run, separately
Needs EXECUTORCH_ROOT and CMSIS_NN_PATH (see `cmx-gen sdk`) and qemu-system-arm.
Run: .venv/bin/python bench/app_data.py [--board mps3-an547 ...] [--model digits ...] [--data]
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
sys.path.insert(0, str(ROOT))

from cmx_gen.app import project as project_mod  # noqa: E402
from cmx_gen.app.folder import AppFolder  # noqa: E402
from cmx_gen.app.kinds.baremetal import build  # noqa: E402
from cmx_gen.device import app_run  # noqa: E402
from cmx_gen.device.runners import QemuRunner  # noqa: E402
from cmx_gen.fit.boards import load_board  # noqa: E402
from cmx_gen.pipeline import data_run  # noqa: E402
from cmx_gen.pipeline.generate import generate  # noqa: E402

MODELS = {
    "digits": str(ROOT / "samples/digits/model.py:DigitsCNN"),
    "ds_cnn": str(ROOT / "samples/ds_cnn/model.py:DSCNN"),
}


def digits_test_split(folder: Path) -> Path:
    path = folder / "digits_test.npz"
    subprocess.run([sys.executable, str(ROOT / "samples" / "digits" / "test_split.py"), "--out", str(path)], check=True)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--board", nargs="+", default=["mps3-an547", "mps2-an386"])
    parser.add_argument("--model", nargs="+", default=["digits", "ds_cnn"], choices=sorted(MODELS))
    parser.add_argument("--data", action="store_true", help="also stream the digits test split (M55 boards)")
    args = parser.parse_args()
    if not os.environ.get("EXECUTORCH_ROOT"):
        print(
            "bench/app_data.py: EXECUTORCH_ROOT is not set (ExecuTorch and CMSIS-NN sources, see `cmx-gen sdk`): "
            "nothing measured"
        )
        return
    print(
        f"{'model':<8} {'board':<12} {'check':>10} {'call 1':>10} {'calls 2..10':>22} {'spread':>7} {'pools':>6} call0"
    )
    with tempfile.TemporaryDirectory(prefix="cmx-bench-app-") as tmp:
        for model in args.model:
            for board in args.board:
                app = Path(tmp) / f"{model}-{board}"
                generate(
                    project_mod.Project.single(model=MODELS[model], board=board, rtos="baremetal", output=str(app)), app
                )
                built = build.build(app, jobs=2)
                runner = QemuRunner(load_board(board), timeout=600)
                check = runner.run(built.elf)
                output, code = runner.run_app(build.find_elf(app / "build", user_app=True))
                run = app_run.parse(output, code)
                reference = (app / "model" / "reference_output_0.bin").read_bytes()
                same = bool(run.calls) and run.calls[0].outputs.get(0) == reference
                lo, _, hi = run.stats(1) or (0, 0, 0)
                print(
                    f"{model:<8} {board:<12} {check.count[1]:>10,} {run.calls[0].count:>10,} "
                    f"{f'{lo:,}..{hi:,}':>22} {run.spread() or 0:>6.2f}% "
                    f"{'flat' if not run.pools_move_after(0) else 'MOVED':>6} {'equal' if same else 'DIFFERS'}"
                )
                if args.data and model == "digits" and load_board(board).core.isa == "MVE":
                    data = data_run.load(digits_test_split(Path(tmp)), None, AppFolder(app).report())
                    started = time.monotonic()
                    host = data_run.host_references(AppFolder(app), data)
                    host_s = time.monotonic() - started
                    stream = Path(tmp) / "samples.bin"
                    report = AppFolder(app).report()
                    stream.write_bytes(data_run.stream_bytes(host, report.inputs))
                    started = time.monotonic()
                    output, code = runner.run_app(build.find_elf(app / "build", user_app=True), f"cmx-input={stream}")
                    target_s = time.monotonic() - started
                    calls = [c for c in app_run.parse(output, code).calls if c.source == "host"]
                    result = data_run.check([c.outputs for c in calls], host, report, data.labels)
                    print(
                        f"  data: {result.bit_exact}/{result.samples} bit-exact; accuracy target "
                        f"{result.target_accuracy:.4f}, host int8 {result.host_int8_accuracy:.4f}, host float "
                        f"{result.host_float_accuracy:.4f}; host reference {host_s:.1f} s, target run {target_s:.1f} s"
                    )


if __name__ == "__main__":
    main()
