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

from cmx_gen.app_folder import AppFolder
from cmx_gen.boards import Board
from cmx_gen.errors import RunError
from cmx_gen.runners import RUNNERS, Result, Runner

# The diagnostic images: a CMake option of the app (bare metal) or a Kconfig option (Zephyr), built
# beside the default image so that one never carries their code.
DIAGNOSTICS = {"profile": "CMX_PROFILE", "trace": "CMX_TRACE"}


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


def pick_runner(board: Board, name: str | None, timeout: float) -> Runner:
    if name:
        return RUNNERS[name](board, timeout)
    for cls in RUNNERS.values():
        if cls.available_for(board):
            return cls(board, timeout)
    raise RunError(f"no simulator for board {board.id}: it has no QEMU machine and no FVP on PATH",
                   "flash it (`cmx-gen flash APP`) and read its console with `cmx-gen run APP --serial PORT`")


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
    """What runs (an ELF, or a Zephyr build folder) and what runs it."""
    if app.is_zephyr:
        from cmx_gen.runners.west import WestRunner

        root = app.path.resolve()
        return root / build_dir, WestRunner(app.board(), args.timeout, cwd=root)
    runner = pick_runner(app.board(), args.runner, args.timeout)
    if args.elf and build_dir == "build":
        return Path(args.elf), runner
    elf = app.elf(build_dir)
    if elf is None and not args.dry_run:
        raise RunError(f"no firmware to run: {app.path / build_dir / '*.elf'} does not exist",
                       f"run `cmx-gen build {app.path}` first")
    return elf or app.path / build_dir / "<app>.elf", runner


def diagnose(app: AppFolder, args: argparse.Namespace) -> int:
    """--profile / --trace: build APP/build-<kind> with the option on, run it, print what it found."""
    from cmx_gen import build, progress, zephyr_build
    from cmx_gen.memory import check_diagnostic_fit

    report = app.report()
    status = 0
    for kind in (k for k in DIAGNOSTICS if getattr(args, k)):
        build_dir = app.path.resolve() / f"build-{kind}"
        if app.is_zephyr:
            config = [f"-DCONFIG_{DIAGNOSTICS[kind]}=y"]
            if args.dry_run:
                print(shlex.join(zephyr_build.build_command(app.path.resolve(), app.board(), build_dir, config)))
            else:
                zephyr_build.build(app.path, app.board(), build_dir, extra=config)
        else:
            check_diagnostic_fit(app.placement(), kind, len(report.get("instructions") or []))
            if not args.dry_run:
                progress.say(f"building the {kind} image in {build_dir}")
                build.build(app.path, build_dir, defines=[f"{DIAGNOSTICS[kind]}=ON"])
        image, runner = image_and_runner(app, args, build_dir.name)
        if args.dry_run:
            print(shlex.join(runner.command(image)))
            continue
        status = max(status, report_diagnostic(app, kind, runner.run(image), args))
    return status


def report_diagnostic(app: AppFolder, kind: str, result: Result, args: argparse.Namespace) -> int:
    """Print the profile table or the trace verdict of one diagnostic run; its exit status."""
    from cmx_gen import profile, trace

    print(result.line)
    instructions = app.report().get("instructions") or []
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
