"""`cmx-gen run --app` runs the user's application image (the model in a loop through the API) on the
reference input; `--data` streams a data set through it, every sample checked against the host
(data_run.py). What they found comes back as lines and an exit status (run.Outcome)."""

from __future__ import annotations

import shlex
from pathlib import Path

from cmx_gen.app.folder import AppFolder
from cmx_gen.app.kinds import kind_of
from cmx_gen.common.errors import RunError
from cmx_gen.device import app_run
from cmx_gen.device.runners import Runner
from cmx_gen.pipeline.run_outcome import Outcome, RunOptions, record

OWN_LINES = 200  # of the application's own lines, how many --app shows


def application_image(app: AppFolder, options: RunOptions) -> tuple[Path, Runner]:
    kind = kind_of(app)
    image = kind.app_image(app)
    if image is None and not options.dry_run:
        raise RunError(
            f"no application image in {app.path / 'build'} ({kind.name} app)",
            f"run `cmx-gen build {app.path}` first (it builds the check and your application)",
        )
    return image or app.path / "build" / "<app>_app.elf", kind.runner(app, options.timeout, options.runner)


def run_application(app: AppFolder, options: RunOptions) -> Outcome:
    """--app: the user's application on the reference input."""
    image, runner = application_image(app, options)
    if options.dry_run:
        return Outcome((shlex.join(runner.command(image)),), 0)
    output, code = runner.run_app(image)
    run = app_run.parse(output, code)
    lines = [f"app        {image}: {len(run.calls)} call(s)"]
    names: list[str | None] = [*app.model_names()] or [None]
    all_same = True
    compared = False
    for name in names:
        if name is not None:
            lines.append(f"model      {name}")
        one = run.of_model(name) if name is not None else run
        lines += application_summary(one)
        reference = app.reference_outputs(name)
        compared = compared or bool(reference)
        same, said = _first_call_matches(one, reference)
        lines += said
        all_same = same and all_same
    lines += [f"app says   {line}" for line in run.own[:OWN_LINES]]  # its own lines (cmx_app_puts), after the model's
    if len(run.own) > OWN_LINES:
        lines.append(
            f"app says   ... and {len(run.own) - OWN_LINES} more line(s): `cmx-gen run {app.path} --app "
            "--dry-run` gives the command that shows them all"
        )
    verdict = (
        "nothing compared (no reference outputs)"
        if not compared or not run.calls
        else "call 0 equals the check's reference bytes"
        if all_same
        else "call 0 DIFFERS from the check's reference bytes"
    )
    ended = run.error or ("its done line" if run.done is not None else f"no done line (exit {run.exit_code})")
    record(app, "app", f"{len(run.calls)} call(s); {verdict}; ended: {ended}")
    return Outcome(tuple(lines), 0 if run.error is None and run.done is not None and all_same else 1)


def _first_call_matches(run: app_run.AppRun, reference: dict[int, bytes]) -> tuple[bool, list[str]]:
    """Whether call 0's output bytes are the check's reference bytes, and the line that says so."""
    first = run.calls[0].outputs if run.calls else {}
    same = bool(run.calls) and all(first.get(i) == data for i, data in reference.items())
    if run.calls and not reference:
        return same, ["output     no reference outputs (a program made elsewhere): nothing compared"]
    if run.calls:
        return same, [
            f"output     call 0 {'equals' if same else 'DIFFERS from'} the check's reference bytes "
            f"({sum(len(d) for d in reference.values())} B)"
        ]
    return same, []


def application_summary(run: app_run.AppRun) -> list[str]:
    """What --app shows of a run: the first call, the spread of the others, the pools, how it ended."""
    lines = []
    if run.calls:
        first = run.calls[0]
        lines.append(f"call 0     {first.counter}={first.count:,} {first.shown}")
        stats = run.stats(1)
        if stats:
            spread = run.spread()
            lines.append(
                f"calls 2..{len(run.calls)} {first.counter} min {stats[0]:,} median {stats[1]:,.0f} max {stats[2]:,}"
                + (f" (spread {spread:.2f} %)" if spread is not None else "")
            )
        moved = run.pools_move_after(0)
        pools = " ".join(f"{name}={u}/{a}" for name, (u, a) in first.pools.items())
        lines.append(
            f"pools      {pools}: " + (f"{', '.join(moved)} moved after call 1" if moved else "flat after call 1")
        )
    if run.stack:
        lines.append(f"stack      {run.stack[0]:,} of {run.stack[1]:,} B at most, over every call")
    if run.error:
        lines.append(f"stopped    {run.error}")
    elif run.done is None:
        lines.append(f"stopped    without its done line (exit {run.exit_code})")
    return lines
