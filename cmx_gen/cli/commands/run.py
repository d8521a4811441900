"""`cmx-gen run APP`: run a built app and report its result line.

Bare metal: QEMU or an Arm FVP (device/runners/); Zephyr: `west build -t run` (app/kinds/zephyr/runner.py); a board
on a desk: `--serial PORT` reads the line from its console. `--profile` / `--trace` build and run
the diagnostic images (docs/profile.md). `--app` runs the user's application image instead of the
check; `--data` streams a data set through it, every sample checked against the host (data_run.py).

Exit status: 0 PASS, 1 FAIL (the firmware's verdict, or a trace difference), 2 could not run.
"""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from cmx_gen.app.folder import AppFolder
from cmx_gen.app.kinds import kind_of
from cmx_gen.common.errors import RunError
from cmx_gen.device.runners import RUNNERS, Result, Runner

if TYPE_CHECKING:
    from cmx_gen.device import app_run
    from cmx_gen.program.report import Instruction

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
    parser.add_argument("--app", dest="user_app", action="store_true",
                        help="run your application (APP/build/<name>_app.elf: the model in a loop through the API) "
                             "instead of the check")
    parser.add_argument("--data", metavar="FILE|DIR",
                        help="stream a data set (.npz with one array per input and optional `labels`, .npy, or a "
                             "folder of .npy) through your application: bit-exact count, accuracy, counts per call")
    parser.add_argument("--labels", metavar="FILE", help="with --data: one integer class per sample (.npy)")
    parser.set_defaults(func=run)


def print_result(app: AppFolder, result: Result) -> int:
    """The verdict's lines; 0 for PASS, and for RAN (it ran; the note says nothing was checked). The
    line is kept for the HTML report, which is written again with it."""
    if result.line:
        _record(app, "check", result.line)
    for line in app.verdict(result.line, result.model_lines):
        print(line)
    return 0 if result.passed or result.verdict == "RAN" else 1


def _record(app: AppFolder, run: str, line: str) -> None:
    """The page's "Last result": this run's line and kind (build/last_result.txt), the page written again."""
    from cmx_gen.app import html_report

    html_report.record_result(app.path, run, line)
    if not app.model_names():  # the page is one model's (an app of several has none yet)
        html_report.write(app.path)


def run(args: argparse.Namespace) -> int:
    app = AppFolder(Path(args.app))
    if args.json and not args.profile:
        raise RunError("--json writes the profile", "add --profile")
    if args.serial:
        if args.profile or args.trace:
            raise RunError("--serial reads the image already on the board",
                           "run --profile / --trace under QEMU or the FVP, or flash a build-profile image first")
        from cmx_gen.common.progress import say
        from cmx_gen.device.runners.serial import SerialConsole

        say(f"waiting for the result line on {args.serial} at {args.baud} baud: reset the board if it already ran")
        return print_result(app, SerialConsole(args.serial, args.baud, args.timeout).run())
    if args.profile or args.trace:
        return diagnose(app, args)
    if args.labels and not args.data:
        raise RunError("--labels goes with --data", "add --data FILE")
    if args.user_app or args.data:
        return run_application(app, args)
    image, runner = image_and_runner(app, args, "build")
    if args.dry_run:
        print(shlex.join(runner.command(image)))
        return 0
    return print_result(app, runner.run(image))


def image_and_runner(app: AppFolder, args: argparse.Namespace, build_dir: str) -> tuple[Path, Runner]:
    """What runs (an ELF, or a build folder the kind's runner takes) and what runs it."""
    kind = kind_of(app)
    runner = kind.runner(app, args.timeout, args.runner)
    if args.elf and build_dir == "build":
        return Path(args.elf), runner
    image = kind.image(app, build_dir)
    if image is None and not args.dry_run:
        raise RunError(f"no firmware to run in {app.path / build_dir}", f"run `cmx-gen build {app.path}` first")
    return image or app.path / build_dir / "<app>.elf", runner


def diagnose(app: AppFolder, args: argparse.Namespace) -> int:
    """--profile / --trace: build APP/build-<kind> with the option on, run it, print what it found."""
    from cmx_gen.common import progress
    from cmx_gen.fit.memory import check_diagnostic_fit

    several = app.model_names()
    if several:
        raise RunError(f"the profile and trace images are for an app of one model; {app.path} has {len(several)}",
                       "create a one-model app of the model to profile (same program)")
    instructions = app.report().instructions
    placement = app.placement()
    status = 0
    for diagnostic in (d for d in DIAGNOSTICS if getattr(args, d)):
        check_diagnostic_fit(placement, diagnostic, len(instructions))
        build_dir = app.path.resolve() / f"build-{diagnostic}"
        if args.dry_run:
            command = kind_of(app).diagnostic_build_command(app, build_dir, diagnostic)
            if command:
                print(shlex.join(command))
        else:
            progress.say(f"building the {diagnostic} image in {build_dir}")
            kind_of(app).build(app, build_dir, diagnostic=diagnostic)
        image, runner = image_and_runner(app, args, build_dir.name)
        if args.dry_run:
            print(shlex.join(runner.command(image)))
            continue
        status = max(status, report_diagnostic(app, diagnostic, runner.run(image), args, instructions))
    return status


def report_diagnostic(app: AppFolder, kind: str, result: Result, args: argparse.Namespace,
                      instructions: list[Instruction]) -> int:
    """Print the profile table or the trace verdict of one diagnostic run; its exit status."""
    from cmx_gen.app import html_report
    from cmx_gen.device import profile, trace

    print(result.line)
    if kind == "profile":
        prof = profile.parse(result, instructions, app.report().delegated_layers)
        print(profile.table(prof))
        text = json.dumps(prof.to_dict(), indent=2) + "\n"
        (app.path / "build-profile" / html_report.PROFILE_JSON).write_text(text)
        if result.line:
            html_report.record_result(app.path, "profile", result.line)
        print(f"report     {html_report.write(app.path)}")
        if args.json:
            Path(args.json).write_text(text)
            print(f"json       {args.json}")
        return 0 if result.passed else 1
    differences, compared = trace.compare(instructions, trace.read_reference(app.path), result.output,
                                          app.report().delegated_layers)
    traced_layers = sum(layer.traced for layer in app.report().delegated_layers)
    print(trace.summary(differences, compared, traced_layers))
    if result.line:
        _record(app, "trace", result.line)
    for later in differences[1:4]:
        print(f"           then {later.describe()}")
    return 0 if result.passed and not differences else 1


def _application(app: AppFolder, args: argparse.Namespace) -> tuple[Path, Runner]:
    kind = kind_of(app)
    image = kind.app_image(app)
    if image is None and not args.dry_run:
        raise RunError(f"no application image in {app.path / 'build'} ({kind.name} app)",
                       f"run `cmx-gen build {app.path}` first (it builds the check and your application)")
    return image or app.path / "build" / "<app>_app.elf", kind.runner(app, args.timeout, args.runner)


def run_application(app: AppFolder, args: argparse.Namespace) -> int:
    """--app: the user's application on the reference input; --data: a data set through it."""
    from cmx_gen.device import app_run

    if args.data:
        return run_data(app, args)
    image, runner = _application(app, args)
    if args.dry_run:
        print(shlex.join(runner.command(image)))
        return 0
    output, code = runner.run_app(image)
    run = app_run.parse(output, code)
    print(f"app        {image}: {len(run.calls)} call(s)")
    names = app.model_names()
    all_same = True
    compared = False
    for name in names or [None]:
        if name is not None:
            print(f"model      {name}")
        one = run.of_model(name) if name is not None else run
        for line in application_summary(one):
            print(line)
        reference = app.reference_outputs(name)
        compared = compared or bool(reference)
        all_same = _first_call_matches(one, reference) and all_same
    for line in run.own[:OWN_LINES]:  # the application's own lines (cmx_app_puts), after the model's
        print(f"app says   {line}")
    if len(run.own) > OWN_LINES:
        print(f"app says   ... and {len(run.own) - OWN_LINES} more line(s): `cmx-gen run {app.path} --app --dry-run` "
              "gives the command that shows them all")
    verdict = ("nothing compared (no reference outputs)" if not compared or not run.calls
               else "call 0 equals the check's reference bytes" if all_same
               else "call 0 DIFFERS from the check's reference bytes")
    ended = run.error or ("its done line" if run.done is not None else f"no done line (exit {run.exit_code})")
    _record(app, "app", f"{len(run.calls)} call(s); {verdict}; ended: {ended}")
    return 0 if run.error is None and run.done is not None and all_same else 1


OWN_LINES = 200  # of the application's own lines, how many --app prints


def _first_call_matches(run: "app_run.AppRun", reference: dict[int, bytes]) -> bool:
    """Print and answer whether call 0's output bytes are the check's reference bytes."""
    first = run.calls[0].outputs if run.calls else {}
    same = bool(run.calls) and all(first.get(i) == data for i, data in reference.items())
    if run.calls and not reference:
        print("output     no reference outputs (a program made elsewhere): nothing compared")
    elif run.calls:
        print(f"output     call 0 {'equals' if same else 'DIFFERS from'} the check's reference bytes "
              f"({sum(len(d) for d in reference.values())} B)")
    return same


def application_summary(run: "app_run.AppRun") -> list[str]:
    """What --app prints of a run: the first call, the spread of the others, the pools, how it ended."""
    lines = []
    if run.calls:
        first = run.calls[0]
        lines.append(f"call 0     {first.counter}={first.count:,} {first.shown}")
        stats = run.stats(1)
        if stats:
            spread = run.spread()
            lines.append(f"calls 2..{len(run.calls)} {first.counter} min {stats[0]:,} median {stats[1]:,.0f} max {stats[2]:,}"
                         + (f" (spread {spread:.2f} %)" if spread is not None else ""))
        moved = run.pools_move_after(0)
        pools = " ".join(f"{name}={u}/{a}" for name, (u, a) in first.pools.items())
        lines.append(f"pools      {pools}: " + (f"{', '.join(moved)} moved after call 1" if moved else "flat after call 1"))
    if run.stack:
        lines.append(f"stack      {run.stack[0]:,} of {run.stack[1]:,} B at most, over every call")
    if run.error:
        lines.append(f"stopped    {run.error}")
    elif run.done is None:
        lines.append(f"stopped    without its done line (exit {run.exit_code})")
    return lines


def run_data(app: AppFolder, args: argparse.Namespace) -> int:
    """Stream the data set through the application; compare every sample with the host reference."""
    import tempfile

    from cmx_gen.device import app_run, result_line

    from cmx_gen.pipeline import data_run

    from cmx_gen.common import progress

    if not kind_of(app).host_samples:
        raise RunError(f"--data sends samples to bare-metal apps (semihosting, or their UART under QEMU); "
                       f"this is a {kind_of(app).name} app",
                       "create a bare-metal app of the same model for the data run (the program is the same)")
    several = app.model_names()
    if several:
        raise RunError(f"--data streams one model's samples; {app.path} has {len(several)} models",
                       "create a one-model app of the model to check on the data set (the program is the same)")
    report = app.report()
    data = data_run.load(Path(args.data), Path(args.labels) if args.labels else None, report)
    progress.say(f"data {data.where}: {len(data.samples)} sample(s)" + (", labelled" if data.labels is not None else ""))
    image, runner = _application(app, args)
    if args.dry_run:
        print(shlex.join(runner.command(image, "cmx-input=<samples.bin>")))
        return 0
    host = data_run.host_references(app, data)
    bar = progress.Bar("target", len(data.samples))

    def count(line: str) -> None:  # the bar moves with each call on a host sample
        call = result_line.call_re().search(line)
        if call and call.group(2) == "host":
            bar.update(1)

    if data_run.uses_semihosting(image.parent):  # a host file the firmware reads through semihosting
        with tempfile.TemporaryDirectory(prefix="cmx-data-") as tmp:
            stream = Path(tmp) / "samples.bin"
            stream.write_bytes(data_run.stream_bytes(host, report.inputs))
            output, code = runner.run_app(image, f"cmx-input={stream}", on_line=count)
    else:  # a stand-alone image (CMX_SEMIHOSTING=OFF): frames on its UART
        output, code = runner.run_app(image, on_line=count, console_input=data_run.console_frames(host, report.inputs))
    bar.close()
    run = app_run.parse(output, code)
    calls = [c for c in run.calls if c.source == "host"]
    result = data_run.check([c.outputs for c in calls], host, report, data.labels)
    print(f"app        {image}: {len(calls)}/{len(data.samples)} sample(s) from {data.where}")
    print(f"bit-exact  {result.bit_exact}/{result.samples} outputs equal the host reference"
          + ("" if result.first_differing is None else
             f"; max error {result.max_lsb:g} LSB, first at sample {result.first_differing}"))
    if result.target_accuracy is not None:
        print(f"accuracy   target {result.target_accuracy:.4f}  host int8 {result.host_int8_accuracy:.4f}  "
              f"host float {result.host_float_accuracy:.4f}")
    stats = run.stats(0) if calls else None
    if stats:
        print(f"{calls[0].counter:<10} min {stats[0]:,}  median {stats[1]:,.0f}  max {stats[2]:,} per inference")
    if run.error:
        print(f"stopped    {run.error}")
    complete = len(calls) == len(data.samples) and run.error is None
    return 0 if complete and result.bit_exact == result.samples else 1
