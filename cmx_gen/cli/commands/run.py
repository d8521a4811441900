"""`cmx-gen run APP`: run a built app and report its result line.

Bare metal: QEMU or an Arm FVP (device/runners/); Zephyr: `west build -t run` (app/kinds/zephyr/runner.py); a board
on a desk: `--serial PORT` reads the line from its console. `--profile` / `--trace` build and run
the diagnostic images (docs/profile.md). `--app` runs the user's application image instead of the
check; `--data` streams a data set through it, every sample checked against the host (data_run.py).

`--cycles` estimates the inference's cycles from what QEMU ran (docs/cycles.md).

Exit status: 0 PASS, 1 FAIL (the firmware's verdict, or a trace difference), 2 could not run.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cmx_gen.device.runners import RUNNERS


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "run", help="run a built app (QEMU, an Arm FVP, or a board's serial console); exit status follows PASS/FAIL"
    )
    parser.add_argument("app", help="app folder (built with `cmx-gen build`)")
    parser.add_argument("--runner", choices=sorted(RUNNERS), help="default: qemu if the board has a machine, else fvp")
    parser.add_argument("--elf", help="ELF to run (default: APP/build/*.elf)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds before giving up (default 120)")
    parser.add_argument("--dry-run", action="store_true", help="print the command and exit")
    parser.add_argument(
        "--serial",
        metavar="PORT",
        help="read the result line from a flashed board's console instead (e.g. /dev/ttyACM0); reset the board",
    )
    parser.add_argument("--baud", type=int, default=115200, help="with --serial: baud rate (default 115200)")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="build and run the profile image (APP/build-profile): instructions or cycles per operator",
    )
    parser.add_argument(
        "--trace",
        action="store_true",
        help="build and run the trace image (APP/build-trace): the first operator whose output differs from the host's",
    )
    parser.add_argument(
        "--cycles",
        action="store_true",
        help="estimate the inference's cycles under QEMU (cmx-gen's TCG plugin and the core's timing table): "
        "cyc= on the result line, the milliseconds at the board's clock and what the estimate assumes",
    )
    parser.add_argument(
        "--cycles-as",
        metavar="BOARD",
        help="price the estimate (--cycles, or --profile's column) as on BOARD, a board of the same core: its "
        "clock and its memories' wait states and flash accelerator, each memory of the app's board taken "
        "for BOARD's of the same kind (e.g. nucleo-l4r5zi, the MLPerf Tiny M4 board, on an mps2-an386 app)",
    )
    parser.add_argument("--json", metavar="FILE", help="with --profile: write the profile rows as JSON")
    parser.add_argument(
        "--app",
        dest="user_app",
        action="store_true",
        help="run your application (APP/build/<name>_app.elf: the model in a loop through the API) "
        "instead of the check",
    )
    parser.add_argument(
        "--data",
        metavar="FILE|DIR",
        help="stream a data set (.npz with one array per input and optional `labels`, .npy, or a "
        "folder of .npy) through your application: bit-exact count, accuracy, counts per call",
    )
    parser.add_argument("--labels", metavar="FILE", help="with --data: one integer class per sample (.npy)")
    parser.add_argument(
        "--model",
        metavar="NAME",
        help="with --data on an app of several models: the model the data set is for (run through a one-model "
        "app of it, APP/build-models/NAME)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cmx_gen.app.folder import AppFolder
    from cmx_gen.pipeline.run import RunOptions, run

    optional = lambda value: Path(value) if value else None  # noqa: E731
    options = RunOptions(
        runner=args.runner,
        elf=optional(args.elf),
        timeout=args.timeout,
        dry_run=args.dry_run,
        serial=args.serial,
        baud=args.baud,
        profile=args.profile,
        trace=args.trace,
        cycles=args.cycles or (args.cycles_as is not None and not args.profile),
        cycles_as=args.cycles_as,
        json=optional(args.json),
        user_app=args.user_app,
        data=optional(args.data),
        labels=optional(args.labels),
        model=args.model,
    )
    outcome = run(AppFolder(Path(args.app)), options)
    for line in outcome.lines:
        print(line)
    return outcome.status
