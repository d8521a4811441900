"""`cmx-gen run --profile / --trace`: build APP/build-<kind> with the diagnostic on (a CMake option of a
bare-metal app, a Kconfig option of a Zephyr app, so the default image never carries its code), run it,
and say what it found (docs/profile.md)."""

from __future__ import annotations

import json
import shlex
from dataclasses import replace
from pathlib import Path

from cmx_gen.app.folder import AppFolder
from cmx_gen.app.kinds import kind_of
from cmx_gen.device.runners import Result, Runner
from cmx_gen.pipeline.run_outcome import Outcome, RunOptions, image_and_runner, record
from cmx_gen.program.report import Instruction

DIAGNOSTICS = ("profile", "trace")


def diagnose(app: AppFolder, options: RunOptions) -> Outcome:
    """Build and run each diagnostic image asked for; the worst status."""
    from cmx_gen.common import progress
    from cmx_gen.fit.memory import check_diagnostic_fit

    if app.model_names():  # each model's image, from a one-model app of it (one_model.py)
        from cmx_gen.app import html_report
        from cmx_gen.pipeline.one_model import each_model

        outcome = each_model(app, lambda one: diagnose(one, options))
        if not options.dry_run:
            html_report.write(app.path)  # the page of the app of several, with each model's profile
        return outcome
    instructions = app.report().instructions
    placement = app.placement()
    lines: list[str] = []
    status = 0
    for diagnostic in (d for d in DIAGNOSTICS if getattr(options, d)):
        check_diagnostic_fit(placement, diagnostic, len(instructions))
        build_dir = app.path.resolve() / f"build-{diagnostic}"
        if options.dry_run:
            command = kind_of(app).diagnostic_build_command(app, build_dir, diagnostic)
            if command:
                lines.append(shlex.join(command))
        else:
            progress.say(f"building the {diagnostic} image in {build_dir}")
            kind_of(app).build(app, build_dir, diagnostic=diagnostic)
        image, runner = image_and_runner(app, options, build_dir.name)
        if options.dry_run:
            lines.append(shlex.join(runner.command(image)))
            continue
        if diagnostic == "profile":
            outcome = _profile(app, image, runner, options, instructions)
        else:
            outcome = _trace(app, runner.run(image), options, instructions)
        lines += outcome.lines
        status = max(status, outcome.status)
    return Outcome(tuple(lines), status)


def _profile(
    app: AppFolder, image: Path, runner: Runner, options: RunOptions, instructions: list[Instruction]
) -> Outcome:
    """The profile table, a column of estimated cycles where cmx-gen's QEMU plugin can run it
    (pipeline/cycles.py); its rows kept beside the image for the HTML page (and --json)."""
    from cmx_gen.app import html_report
    from cmx_gen.app.model_slots import simulator_loads
    from cmx_gen.common.errors import RunError
    from cmx_gen.device import profile
    from cmx_gen.pipeline.cycles import CycleRun, app_image, priced_as

    priced = priced_as(app.board(), options.cycles_as)
    try:
        app_image(app, options.runner, "build-profile")
        measuring: CycleRun | None = CycleRun(
            app.board(), image, options.timeout, marks=True, images=simulator_loads(app), priced_as=priced
        )
        why_not = ""
    except RunError as exc:
        measuring, why_not = None, f"none estimated: {exc.problem}"
    result = (measuring.runner if measuring else runner).run(image)
    report = app.report()
    prof = profile.parse(result, instructions, report.delegated_layers)
    if measuring is not None:
        measured = measuring.read()
        board = measuring.priced
        total = measured.total.cycles[1]
        note = (
            f"{total / board.core.clock_hz * 1e3:.3f} ms at {board.core.clock_hz / 1e6:g} MHz, "
            f"{measured.total.table.core} timings, {measuring.assumes()} (`run --cycles` for the range; "
            "the profile's hooks are in the figures)"
        )
        segments = {key: est.cycles[1] for key, est in measured.segments.items()}
        prof = profile.with_cycles(prof, result, len(instructions), total, segments, note)
    else:
        prof = replace(prof, cycles_note=why_not)
    lines = [result.line, profile.table(prof)]
    text = json.dumps(prof.to_dict(), indent=2) + "\n"
    (app.path / "build-profile" / html_report.PROFILE_JSON).write_text(text)
    if result.line:
        html_report.record_result(app.path, "profile", result.line)
    lines.append(f"report     {html_report.write(app.path)}")
    if options.json:
        options.json.write_text(text)
        lines.append(f"json       {options.json}")
    return Outcome(tuple(lines), 0 if result.passed else 1)


def _trace(app: AppFolder, result: Result, options: RunOptions, instructions: list[Instruction]) -> Outcome:
    """The first operator (or backend layer) whose output differs from the host's, and the next few."""
    from cmx_gen.device import trace

    layers = app.report().delegated_layers
    differences, compared = trace.compare(instructions, trace.read_reference(app.path), result.output, layers)
    lines = [result.line, trace.summary(differences, compared, sum(layer.traced for layer in layers))]
    if result.line:
        record(app, "trace", result.line)
    first = trace.first_difference(differences)
    later = differences[differences.index(first) + 1 :] if first else differences[1:]
    lines += [f"           then {d.describe()}" for d in later[:3]]
    return Outcome(tuple(lines), 0 if result.passed and first is None else 1)
