"""`cmx-gen run APP`: run a built app under QEMU or the FVP and report its result line.

Exit status: 0 PASS, 1 FAIL (the firmware's verdict), 2 could not run.
"""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path

from cmx_gen.boards import Board, load_board
from cmx_gen.errors import RunError
from cmx_gen.runners import RUNNERS, Runner


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("run", help="run a built app under QEMU or an Arm FVP; exit status follows PASS/FAIL")
    parser.add_argument("app", help="app folder (built with `cmx-gen build`)")
    parser.add_argument("--runner", choices=sorted(RUNNERS), help="default: qemu if the board has a machine, else fvp")
    parser.add_argument("--elf", help="ELF to run (default: APP/build/*.elf)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds before giving up (default 120)")
    parser.add_argument("--dry-run", action="store_true", help="print the command and exit")
    parser.add_argument("--profile", action="store_true",
                        help="build and run the profile image (APP/build-profile): instructions or cycles per operator")
    parser.add_argument("--trace", action="store_true",
                        help="build and run the trace image (APP/build-trace): the first operator whose output "
                             "differs from the host's")
    parser.add_argument("--json", metavar="FILE", help="with --profile: write the profile rows as JSON")
    parser.set_defaults(func=run)


def app_board(app: Path) -> Board:
    """The board an app was rendered for (model/placement.json, else cmx.toml)."""
    placement = app / "model" / "placement.json"
    if placement.is_file():
        return load_board(json.loads(placement.read_text())["board_id"])
    project = app / "cmx.toml"
    if project.is_file():
        from cmx_gen import project as project_mod

        return load_board(project_mod.load(project).board)
    raise RunError(f"{app} does not say which board it is for (no model/placement.json or cmx.toml)",
                   "pass an app folder made by `cmx-gen create`")


def pick_runner(board: Board, name: str | None, timeout: float) -> Runner:
    if name:
        return RUNNERS[name](board, timeout)
    for cls in RUNNERS.values():
        if cls.available_for(board):
            return cls(board, timeout)
    raise RunError(f"no simulator for board {board.id}: it has no QEMU machine and no FVP on PATH",
                   "flash it and watch the semihosting console with a debugger (see the app's README)")


def run_zephyr(app: Path, dry_run: bool, timeout: float) -> int:
    """Zephyr apps run through `west build -t run` (QEMU and FVP targets alike)."""
    import subprocess

    from cmx_gen import zephyr_build
    from cmx_gen.runners.base import parse_result_line

    app = app.resolve()
    command = zephyr_build.run_command(app / "build")
    if dry_run:
        print(shlex.join(command))
        return 0
    zephyr_build.require_workspace(app)
    try:
        output = subprocess.run(command, cwd=app, capture_output=True, text=True, errors="replace", timeout=timeout).stdout
    except subprocess.TimeoutExpired as exc:
        raise RunError(f"the Zephyr app did not finish within {timeout:.0f} s", "raise --timeout, or run it by hand") from exc
    result = parse_result_line(output)
    if result is None:
        raise RunError("the Zephyr app printed no cmx-gen result line", f"run `{shlex.join(command)}` and read its console")
    print(result.line)
    print_reference_note(app)
    return 0 if result.passed else 1


def run(args: argparse.Namespace) -> int:
    app = Path(args.app)
    from cmx_gen.zephyr_build import is_zephyr_app

    if args.json and not args.profile:
        raise RunError("--json writes the profile", "add --profile")
    if is_zephyr_app(app):
        if args.profile or args.trace:
            return diagnose_zephyr(app, args)
        return run_zephyr(app, args.dry_run, args.timeout)
    board = app_board(app)
    runner = pick_runner(board, args.runner, args.timeout)
    if args.profile or args.trace:
        return diagnose(app, runner, args)
    if args.elf:
        elf: Path | None = Path(args.elf)
    else:
        elves = sorted((app / "build").glob("*.elf"))
        elf = elves[0] if elves else None
    if args.dry_run:
        print(shlex.join(runner.command(elf or app / "build" / "<app>.elf")))
        return 0
    if elf is None or not elf.is_file():
        raise RunError(f"no firmware to run: {elf or app / 'build' / '*.elf'} does not exist", f"run `cmx-gen build {app}` first")
    result = runner.run(elf)
    print(result.line)
    print_reference_note(app)
    return 0 if result.passed else 1


def print_reference_note(app: Path) -> None:
    """After the result line: how far ExecuTorch's Python reference is from the checked one."""
    from cmx_gen.report import load_json, reference_note

    report = app / "model" / "report.json"
    note = reference_note(load_json(report)) if report.is_file() else None
    if note:
        print(f"note: {note}")


# The diagnostic images: a CMake option of the app (bare metal) or a Kconfig option (Zephyr), built
# beside the default image so that one never carries their code.
DIAGNOSTICS = {"profile": "CMX_PROFILE", "trace": "CMX_TRACE"}


def _diagnostics(args: argparse.Namespace) -> list[str]:
    return [kind for kind in DIAGNOSTICS if getattr(args, kind)]


def diagnose(app: Path, runner: Runner, args: argparse.Namespace) -> int:
    """--profile / --trace on a bare-metal app: build APP/build-<kind> with the option on, run it."""
    from cmx_gen import build, progress
    from cmx_gen.memory import check_diagnostic_fit
    from cmx_gen.report import load_json

    report = load_json(app / "model" / "report.json")
    status = 0
    for kind in _diagnostics(args):
        check_diagnostic_fit(json.loads((app / "model" / "placement.json").read_text()), kind,
                             len(report.get("instructions") or []))
        build_dir = app / f"build-{kind}"
        if args.dry_run:
            print(shlex.join(runner.command(build_dir / "<app>.elf")))
            continue
        progress.say(f"building the {kind} image in {build_dir}")
        elf = build.build(app, build_dir, defines=[f"{DIAGNOSTICS[kind]}=ON"]).elf
        status = max(status, report_diagnostic(app, kind, runner.run(elf), report, args))
    return status


def diagnose_zephyr(app: Path, args: argparse.Namespace) -> int:
    """--profile / --trace on a Zephyr app: west build into APP/build-<kind> with CONFIG_CMX_<KIND>=y."""
    import subprocess

    from cmx_gen import zephyr_build
    from cmx_gen.report import load_json

    app = app.resolve()
    report = load_json(app / "model" / "report.json")
    status = 0
    for kind in _diagnostics(args):
        build_dir = app / f"build-{kind}"
        config = [f"-DCONFIG_{DIAGNOSTICS[kind]}=y"]
        if args.dry_run:
            print(shlex.join(zephyr_build.build_command(app, app_board(app), build_dir, config)))
            print(shlex.join(zephyr_build.run_command(build_dir)))
            continue
        zephyr_build.build(app, app_board(app), build_dir, extra=config)
        command = zephyr_build.run_command(build_dir)
        try:
            output = subprocess.run(command, cwd=app, capture_output=True, text=True, errors="replace",
                                    timeout=args.timeout).stdout
        except subprocess.TimeoutExpired as exc:
            raise RunError(f"the Zephyr {kind} image did not finish within {args.timeout:.0f} s",
                           "raise --timeout") from exc
        from cmx_gen.runners.base import parse_result_line

        result = parse_result_line(output)
        if result is None:
            raise RunError(f"the Zephyr {kind} image printed no cmx-gen result line",
                           f"run `{shlex.join(command)}` and read its console")
        result.output = output
        status = max(status, report_diagnostic(app, kind, result, report, args))
    return status


def report_diagnostic(app: Path, kind: str, result, report: dict, args: argparse.Namespace) -> int:
    """Print the profile table or the trace verdict of one diagnostic run; its exit status."""
    from cmx_gen import profile, trace

    print(result.line)
    instructions = report.get("instructions") or []
    if kind == "profile":
        prof = profile.parse(result, instructions)
        print(profile.table(prof))
        if args.json:
            Path(args.json).write_text(json.dumps(prof.to_dict(), indent=2) + "\n")
            print(f"json       {args.json}")
        return 0 if result.passed else 1
    differences, compared = trace.compare(instructions, trace.read_reference(app), result.output)
    print(trace.summary(differences, compared))
    for later in differences[1:4]:
        print(f"           then {later.describe()}")
    return 0 if result.passed and not differences else 1
