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

from cmx_gen import progress, project as project_mod  # noqa: E402
from cmx_gen.generate import generate  # noqa: E402

SAMPLES = ["digits", "ds_cnn", "mobilenet_v1_025", "resnet8", "autoencoder"]
BOARDS = {"baremetal": ["mps3-an547", "mps2-an386"], "zephyr": ["mps3-an547", "nrf5340dk-cpuapp"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", nargs="*", default=SAMPLES)
    args = parser.parse_args()
    progress.set_quiet(True)
    with tempfile.TemporaryDirectory() as tmp:
        for sample in args.samples:
            base = project_mod.load(ROOT / "samples" / sample / "cmx.toml")
            for kind, boards in BOARDS.items():
                for board in boards:
                    # the same folder name for every run: paths inside the app do not differ
                    app = Path(tmp) / f"{sample}-{kind}-{board}" / "app"
                    generate(dataclasses.replace(base, board=board, rtos=kind, output=str(app)), app)
                    whole = hashlib.sha256()
                    for path in sorted(p for p in app.rglob("*") if p.is_file()):
                        digest = hashlib.sha256(path.read_bytes()).hexdigest()
                        rel = path.relative_to(app).as_posix()
                        whole.update(f"{rel} {digest}\n".encode())
                        print(f"{sample} {kind} {board} {digest[:16]} {rel}")
                    print(f"{sample} {kind} {board} {whole.hexdigest()[:16]} (app)", flush=True)


if __name__ == "__main__":
    main()
