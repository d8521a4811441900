"""`cmx-gen run APP`: run a built app and say what it found, as lines for the command to print and an
exit status (0 PASS, 1 FAIL: the firmware's verdict or a trace difference; errors: 2 and more). A FAIL
of the check image on a simulator is followed by the trace image's run, so it names the operator where
the difference starts without --trace.

The check image under QEMU, an Arm FVP or Zephyr's `west build -t run`, or on a board through its serial
console; the diagnostic images (diagnose.py); the user's application (application.py) and a data set
through it (data_stream.py)."""

from __future__ import annotations

import shlex
from dataclasses import replace

from cmx_gen.app.folder import AppFolder
from cmx_gen.app.kinds import kind_of
from cmx_gen.common.errors import CmxError, RunError
from cmx_gen.pipeline.application import run_application
from cmx_gen.pipeline.data_stream import run_data
from cmx_gen.pipeline.diagnose import diagnose
from cmx_gen.pipeline.run_outcome import Outcome, RunOptions, image_and_runner, verdict

__all__ = ["Outcome", "RunOptions", "run"]


def run(app: AppFolder, options: RunOptions) -> Outcome:
    """Run what `options` asks for on `app`."""
    kind_of(app).require_image("cmx-gen run")
    if options.json and not options.profile:
        raise RunError("--json writes the profile", "add --profile")
    if options.serial:
        if options.profile or options.trace:
            raise RunError(
                "--serial reads the image already on the board",
                "run --profile / --trace under QEMU or the FVP, or flash a build-profile image first",
            )
        from cmx_gen.common.progress import say
        from cmx_gen.device.runners.serial import SerialConsole

        say(
            f"waiting for the result line on {options.serial} at {options.baud} baud: reset the board if it already ran"
        )
        return verdict(app, SerialConsole(options.serial, options.baud, options.timeout).run())
    if options.cycles and (options.profile or options.trace or options.data or options.user_app):
        raise RunError("--cycles runs the check image", "run --cycles on its own")
    if options.cycles_as and options.trace:
        raise RunError("--cycles-as prices --cycles or --profile, not --trace", "drop --cycles-as")
    if options.profile or options.trace:
        return diagnose(app, options)
    if options.labels and not options.data:
        raise RunError("--labels goes with --data", "add --data FILE")
    if options.model and not options.data:
        raise RunError("--model names the model a data set is for", "add --data FILE")
    if options.data:
        return run_data(app, options)
    if options.user_app:
        return run_application(app, options)
    if options.cycles and not options.dry_run:
        from cmx_gen.pipeline.cycles import run_cycles

        return run_cycles(app, options)
    image, runner = image_and_runner(app, options, "build")
    if options.dry_run:
        return Outcome((shlex.join(runner.command(image)),), 0)
    outcome = verdict(app, runner.run(image))
    if outcome.status == 1 and options.elf is None:
        return Outcome(outcome.lines + where_it_starts(app, options), 1)
    return outcome


def where_it_starts(app: AppFolder, options: RunOptions) -> tuple[str, ...]:
    """After a FAIL on a simulator, the operator it starts at: the trace image built and run
    (diagnose.py), its lines but the result line, which the check already printed."""
    from cmx_gen.common.progress import say

    say("FAIL: building and running the trace image to find the first operator that differs")
    try:
        traced = diagnose(app, replace(options, trace=True, profile=False))
    except CmxError as exc:
        return (f"where      not traced: {exc.one_line()}",)
    return tuple(line for line in traced.lines if not line.startswith("cmx-gen: "))
