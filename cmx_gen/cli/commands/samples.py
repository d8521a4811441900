"""`cmx-gen samples` lists the bundled samples; `cmx-gen samples NAME [DEST]` copies one into DEST
(default samples/NAME, so `cmx-gen create --config samples/NAME/cmx.toml` works as the README says)."""

from __future__ import annotations

import argparse
from pathlib import Path

from cmx_gen.app import samples
from cmx_gen.common.format import table


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("samples", help="list the bundled sample models, or copy one into a folder of yours")
    parser.add_argument("name", nargs="?", metavar="NAME", help="the sample to copy")
    parser.add_argument(
        "dest", nargs="?", metavar="DEST", help="where to copy it (default: samples/NAME; must not exist)"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not args.name:
        print(table([("sample", "what"), *((s.name, s.summary) for s in samples.bundled())]))
        return 0
    copied = samples.copy(args.name, Path(args.dest or Path("samples") / args.name))
    print(
        f"copied sample {args.name} to {', '.join(map(str, copied))}; "
        f"next: cmx-gen create --config {copied[0] / samples.PROJECT_FILE}"
    )
    return 0
