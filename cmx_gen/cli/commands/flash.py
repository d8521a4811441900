"""`cmx-gen flash APP`: put a built app on its board (pyOCD, the vendor's tool, or `west flash`).

With `--serial PORT` the board's console is opened first and the result line the image prints
after the reset is read: the same PASS/FAIL and figures as `cmx-gen run` gives under QEMU.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from cmx_gen.common.errors import FlashError


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
    parser.add_argument("--dry-run", action="store_true", help="print the commands and exit")
    parser.add_argument(
        "--serial", metavar="PORT", help="then read the result line from the board's console, e.g. /dev/ttyACM0"
    )
    parser.add_argument("--baud", type=int, default=115200, help="console baud rate (default 115200)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for the result line (default 60)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cmx_gen.device import flash
    from cmx_gen.app.folder import AppFolder
    from cmx_gen.app.kinds import kind_of

    app = AppFolder(Path(args.app))
    kind, board = kind_of(app), app.board()
    if args.user_app and args.serial:
        raise FlashError(
            "--serial reads the check's result line; your application prints a line per call",
            "flash with --app, then watch its console with any terminal (115200 8N1)",
        )
    built = (
        Path(args.elf)
        if args.elf and kind.image_is_file
        else (kind.app_image(app) if args.user_app else kind.image(app))
    )
    image = (
        built.resolve() if built else app.path.resolve() / "build" / ("<app>_app.elf" if args.user_app else "<app>.elf")
    )
    flasher = kind.flasher(flash.FlashConfig(board=board, app=app.path, image=image, probe=args.probe))
    # A bare-metal image prints through semihosting unless the board has a UART it drives itself.
    semihosting_only = kind.console(board) == "semihosting"
    if args.serial and semihosting_only:
        raise FlashError(
            f"the bare-metal image prints through semihosting on {board.id}, not on a serial port",
            "create the Zephyr app (--rtos zephyr), which prints on the board's console UART",
        )
    if args.dry_run:
        for command in flasher.commands():
            print(shlex.join(command))
        return 0
    if kind.image_is_file and not image.is_file():
        raise FlashError(f"no firmware to flash: {image} does not exist", f"run `cmx-gen build {app.path}` first")
    if not args.serial:
        flasher.flash()
        print(f"flashed    {image} with {flasher.name}")
        if semihosting_only:
            print(
                "note       its console is semihosting: attach a debugger with semihosting on "
                "(e.g. pyocd gdbserver --semihosting) or it stops at its first print"
            )
        return 0
    from cmx_gen.device.runners.serial import SerialConsole

    console = SerialConsole(args.serial, args.baud, args.timeout)
    with console.open():  # open before the reset, so the line is not missed
        flasher.flash()
        print(f"flashed    {image} with {flasher.name}; reading {args.serial}")
        result = console.read_result()
    for line in app.verdict(result.line):
        print(line)
    return 0 if result.passed else 1
