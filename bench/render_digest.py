"""A digest of every file of every sample's app, both kinds, on a board per ISA: run it before and
after a refactoring and diff the two outputs to show the generated apps are byte-identical.

Prints `sample kind board sha256 path` per file (paths relative to the app; the `.cmx-gen/`
manifest included), then one line per app with the digest of all its files. Needs no SDK.
Run: .venv/bin/python bench/render_digest.py > before.txt ... > after.txt; diff before.txt after.txt
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cmx_gen.app import project as project_mod  # noqa: E402
from cmx_gen.common import progress  # noqa: E402
from cmx_gen.common.errors import CmxError  # noqa: E402
from cmx_gen.pipeline.generate import generate  # noqa: E402

SAMPLES = ["digits", "ds_cnn", "mobilenet_v1_025", "resnet8", "autoencoder"]
BOARDS = {"baremetal": ["mps3-an547", "mps2-an386"], "zephyr": ["mps3-an547", "nrf5340dk-cpuapp"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", nargs="*", default=SAMPLES)
    parser.add_argument(
        "--all-boards",
        action="store_true",
        help="every board of the database (Zephyr: every board with Zephyr layout data)",
    )
    args = parser.parse_args()
    progress.set_quiet(True)
    boards = BOARDS
    if args.all_boards:
        from cmx_gen.app.kinds.zephyr.layout import zephyr_boards
        from cmx_gen.fit.boards import load_boards

        every = load_boards()
        boards = {
            "baremetal": [b.id for b in every],
            "zephyr": [b.id for b in every if b.zephyr and b.zephyr.file_name in zephyr_boards()],
        }
    with tempfile.TemporaryDirectory() as tmp:
        for sample in args.samples:
            base = project_mod.load(ROOT / "samples" / sample / "cmx.toml")
            for kind, ids in boards.items():
                for board in ids:
                    # the same folder name for every run: paths inside the app do not differ
                    app = Path(tmp) / f"{sample}-{kind}-{board}" / "app"
                    try:
                        generate(dataclasses.replace(base, board=board, rtos=kind, output=str(app)), app)
                    except CmxError as exc:  # a refusal is part of the behaviour too
                        print(f"{sample} {kind} {board} refused: {exc.problem}", flush=True)
                        continue
                    whole = hashlib.sha256()
                    for path in sorted(p for p in app.rglob("*") if p.is_file()):
                        digest = hashlib.sha256(path.read_bytes()).hexdigest()
                        rel = path.relative_to(app).as_posix()
                        whole.update(f"{rel} {digest}\n".encode())
                        print(f"{sample} {kind} {board} {digest[:16]} {rel}")
                    print(f"{sample} {kind} {board} {whole.hexdigest()[:16]} (app)", flush=True)


if __name__ == "__main__":
    main()
