"""`cmx-gen flash APP`: put a built app on its board (pyOCD, the vendor's tool, or `west flash`).

With `--serial PORT` the board's console is opened first and the result line the image prints
after the reset is read: the same PASS/FAIL and figures as `cmx-gen run` gives under QEMU.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("flash", help="flash a built app onto its board (pyOCD / vendor tool / west flash)")
    parser.add_argument("app", help="app folder (built with `cmx-gen build`)")
    parser.add_argument(
        "--probe", metavar="UID", help="the debug probe's serial number (`pyocd list`), when several are connected"
    )
    parser.add_argument("--elf", help="bare metal: the ELF to flash (default: APP/build/*.elf)")
    parser.add_argument(
        "--app",
        dest="user_app",
        action="store_true",
        help="flash your application (bare metal APP/build/<name>_app.elf, Zephyr APP/build-app) instead of the check",
    )
    parser.add_argument(
        "--model-only",
        nargs="?",
        const="a",
        metavar="SLOT",
        help='placement = "slot": write only the model image of SLOT (a, the default, or b; made by '
        "`cmx-gen model-image`), not the firmware",
    )
    parser.add_argument("--dry-run", action="store_true", help="print the commands and exit")
    parser.add_argument(
        "--serial", metavar="PORT", help="then read the result line from the board's console, e.g. /dev/ttyACM0"
    )
    parser.add_argument("--baud", type=int, default=115200, help="console baud rate (default 115200)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for the result line (default 60)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cmx_gen.app.folder import AppFolder
    from cmx_gen.pipeline.flash import FlashOptions, flash_app

    options = FlashOptions(
        probe=args.probe,
        elf=Path(args.elf) if args.elf else None,
        user_app=args.user_app,
        dry_run=args.dry_run,
        serial=args.serial,
        baud=args.baud,
        timeout=args.timeout,
        model_only=args.model_only,
    )
    outcome = flash_app(AppFolder(Path(args.app)), options)
    for line in outcome.lines:
        print(line)
    return outcome.status
