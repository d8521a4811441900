"""`cmx-gen build APP`: configure + build a generated app, then show memory per region.

Each app kind builds its own way (app/kinds/): bare-metal apps with CMake + Ninja here, Zephyr apps
with `west build` in the user's west workspace.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "build", help="build a generated app (bare metal: CMake + Ninja; Zephyr: west build) and show its memory use"
    )
    parser.add_argument("app", help="app folder made by `cmx-gen create`")
    parser.add_argument("--build-dir", help="build folder (default APP/build)")
    parser.add_argument("--clean", action="store_true", help="delete the build folder first (full rebuild)")
    parser.add_argument("-j", "--jobs", type=int, help="parallel compile jobs (default: Ninja's)")
    parser.add_argument(
        "-D",
        dest="defines",
        action="append",
        metavar="NAME=VALUE",
        help="CMake cache entry, e.g. -D CMX_ET_LOG=OFF (no ExecuTorch log text: ~35 KB less .text)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cmx_gen.app.folder import AppFolder
    from cmx_gen.app.kinds import kind_of

    app = AppFolder(Path(args.app))
    built = kind_of(app).build(
        app, Path(args.build_dir) if args.build_dir else None, args.clean, args.jobs, defines=args.defines
    )
    for line in built.lines:
        print(line)
    return 0
