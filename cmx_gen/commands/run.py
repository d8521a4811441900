"""`cmx-gen run APP`: run a built app and report its result line.

Bare metal: QEMU or an Arm FVP (runners/); Zephyr: `west build -t run` (runners/west.py); a board
on a desk: `--serial PORT` reads the line from its console. `--profile` / `--trace` build and run
the diagnostic images (docs/profile.md).

Exit status: 0 PASS, 1 FAIL (the firmware's verdict, or a trace difference), 2 could not run.
"""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from cmx_gen.app_folder import AppFolder
from cmx_gen.errors import RunError
from cmx_gen.runners import RUNNERS, Result, Runner

if TYPE_CHECKING:
    from cmx_gen.report import Instruction

# The diagnostic images, each built by the app's kind beside the default image (a CMake option of a
# bare-metal app, a Kconfig option of a Zephyr app) so that one never carries their code.
DIAGNOSTICS = ("profile", "trace")


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("run", help="run a built app (QEMU, an Arm FVP, or a board's serial console); exit status follows PASS/FAIL")
    parser.add_argument("app", help="app folder (built with `cmx-gen build`)")
    parser.add_argument("--runner", choices=sorted(RUNNERS), help="default: qemu if the board has a machine, else fvp")
    parser.add_argument("--elf", help="ELF to run (default: APP/build/*.elf)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds before giving up (default 120)")
    parser.add_argument("--dry-run", action="store_true", help="print the command and exit")
    parser.add_argument("--serial", metavar="PORT",
                        help="read the result line from a flashed board's console instead (e.g. /dev/ttyACM0); reset the board")
    parser.add_argument("--baud", type=int, default=115200, help="with --serial: baud rate (default 115200)")
    parser.add_argument("--profile", action="store_true",
                        help="build and run the profile image (APP/build-profile): instructions or cycles per operator")
    parser.add_argument("--trace", action="store_true",
                        help="build and run the trace image (APP/build-trace): the first operator whose output "
                             "differs from the host's")
    parser.add_argument("--json", metavar="FILE", help="with --profile: write the profile rows as JSON")
    parser.set_defaults(func=run)


def print_result(app: AppFolder, result: Result) -> int:
    for line in app.verdict(result.line):
        print(line)
    return 0 if result.passed else 1


def run(args: argparse.Namespace) -> int:
    app = AppFolder(Path(args.app))
    if args.json and not args.profile:
        raise RunError("--json writes the profile", "add --profile")
    if args.serial:
        if args.profile or args.trace:
            raise RunError("--serial reads the image already on the board",
                           "run --profile / --trace under QEMU or the FVP, or flash a build-profile image first")
        from cmx_gen.progress import say
        from cmx_gen.runners.serial import SerialConsole

        say(f"waiting for the result line on {args.serial} at {args.baud} baud: reset the board if it already ran")
        return print_result(app, SerialConsole(args.serial, args.baud, args.timeout).run())
    if args.profile or args.trace:
        return diagnose(app, args)
    image, runner = image_and_runner(app, args, "build")
    if args.dry_run:
        print(shlex.join(runner.command(image)))
        return 0
    return print_result(app, runner.run(image))


def image_and_runner(app: AppFolder, args: argparse.Namespace, build_dir: str) -> tuple[Path, Runner]:
    """What runs (an ELF, or a build folder the kind's runner takes) and what runs it."""
    kind = app.app_kind
    runner = kind.runner(app, args.timeout, args.runner)
    if args.elf and build_dir == "build":
        return Path(args.elf), runner
    image = kind.image(app, build_dir)
    if image is None and not args.dry_run:
        raise RunError(f"no firmware to run in {app.path / build_dir}", f"run `cmx-gen build {app.path}` first")
    return image or app.path / build_dir / "<app>.elf", runner


def diagnose(app: AppFolder, args: argparse.Namespace) -> int:
    """--profile / --trace: build APP/build-<kind> with the option on, run it, print what it found."""
    from cmx_gen import progress
    from cmx_gen.memory import check_diagnostic_fit

    instructions = app.report().instructions
    placement = app.placement()
    status = 0
    for diagnostic in (d for d in DIAGNOSTICS if getattr(args, d)):
        check_diagnostic_fit(placement, diagnostic, len(instructions))
        build_dir = app.path.resolve() / f"build-{diagnostic}"
        if args.dry_run:
            command = app.app_kind.diagnostic_build_command(app, build_dir, diagnostic)
            if command:
                print(shlex.join(command))
        else:
            progress.say(f"building the {diagnostic} image in {build_dir}")
            app.app_kind.build(app, build_dir, diagnostic=diagnostic)
        image, runner = image_and_runner(app, args, build_dir.name)
        if args.dry_run:
            print(shlex.join(runner.command(image)))
            continue
        status = max(status, report_diagnostic(app, diagnostic, runner.run(image), args, instructions))
    return status


def report_diagnostic(app: AppFolder, kind: str, result: Result, args: argparse.Namespace,
                      instructions: list[Instruction]) -> int:
    """Print the profile table or the trace verdict of one diagnostic run; its exit status."""
    from cmx_gen import profile, trace

    print(result.line)
    if kind == "profile":
        prof = profile.parse(result, instructions)
        print(profile.table(prof))
        if args.json:
            Path(args.json).write_text(json.dumps(prof.to_dict(), indent=2) + "\n")
            print(f"json       {args.json}")
        return 0 if result.passed else 1
    differences, compared = trace.compare(instructions, trace.read_reference(app.path), result.output)
    print(trace.summary(differences, compared))
    for later in differences[1:4]:
        print(f"           then {later.describe()}")
    return 0 if result.passed and not differences else 1
