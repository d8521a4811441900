"""`cmx-gen run --data`: a data set streamed through the user's application on the target (through
semihosting, or frames on its UART under QEMU), every sample's outputs compared with the host
reference (data_run.py: the samples, the host side, the comparison)."""

from __future__ import annotations

import shlex
import tempfile
from dataclasses import replace
from pathlib import Path

from cmx_gen.app.folder import AppFolder
from cmx_gen.app.kinds import kind_of
from cmx_gen.common import progress
from cmx_gen.common.errors import RunError
from cmx_gen.device import app_run, result_line
from cmx_gen.device.runners.base import Runner
from cmx_gen.pipeline import data_run
from cmx_gen.pipeline.application import application_image
from cmx_gen.pipeline.run_outcome import Outcome, RunOptions
from cmx_gen.program.report import Report


def run_data(app: AppFolder, options: RunOptions) -> Outcome:
    """Stream the data set through the application; compare every sample with the host reference."""
    assert options.data is not None
    if not kind_of(app).host_samples:
        raise RunError(
            f"--data sends samples to bare-metal apps (semihosting, or their UART under QEMU); "
            f"this is a {kind_of(app).name} app",
            "create a bare-metal app of the same model for the data run (the program is the same)",
        )
    several = app.model_names()
    if several:
        return _through_one_model(app, options, several)
    if options.model is not None:
        raise RunError(f"--model picks a model of an app of several; {app.path} has one", "drop --model")
    report = app.report()
    if report.memory.caller_input_bytes:
        raise RunError(
            f"--data writes each sample into the model's planned input buffers; {app.path}'s model reads its "
            'inputs from the caller\'s buffers (input_memory = "caller")',
            'for the data run, make an app with input_memory = "pool" (the default) of the same model',
        )
    data = data_run.load(options.data, options.labels, report)
    progress.say(
        f"data {data.where}: {len(data.samples)} sample(s)" + (", labelled" if data.labels is not None else "")
    )
    image, runner = application_image(app, options)
    if options.dry_run:
        return Outcome((shlex.join(runner.command(image, "cmx-input=<samples.bin>")),), 0)
    host = data_run.host_references(app, data)
    run = app_run.parse(*_stream(app, image, runner, host, report, len(data.samples)))
    calls = [c for c in run.calls if c.source == "host"]
    result = data_run.check([c.outputs for c in calls], host, report, data.labels)
    complete = len(calls) == len(data.samples) and run.error is None
    return Outcome(
        tuple(_lines(image, data, run, calls, result)), 0 if complete and result.bit_exact == result.samples else 1
    )


def _through_one_model(app: AppFolder, options: RunOptions, several: list[str]) -> Outcome:
    """An app of several models: the data set is one model's, run through a one-model app of it
    (one_model.py), built here."""
    if options.model is None:
        raise RunError(
            f"--data streams one model's samples and {app.path} has {len(several)} models ({', '.join(several)})",
            f"name the model the data set is for: --model {several[0]}",
        )
    from cmx_gen.pipeline.one_model import one_model_app

    one = one_model_app(app, options.model)
    if not options.dry_run:
        progress.say(f"building the one-model app of {options.model} in {one.path}")
        kind_of(one).build(one)
    outcome = run_data(one, replace(options, model=None))
    return Outcome((f"model      {options.model} (its one-model app: {one.path})", *outcome.lines), outcome.status)


def _stream(
    app: AppFolder, image: Path, runner: Runner, host: list, report: Report, total: int
) -> tuple[str, int | None]:
    """Run the application on the host samples: from a host file it reads through semihosting, or as
    frames on its UART (a stand-alone image, CMX_SEMIHOSTING=OFF); the bar moves with each call."""
    bar = progress.Bar("target", total)

    def count(line: str) -> None:
        call = result_line.call_re().search(line)
        if call and call.group(2) == "host":
            bar.update(1)

    if kind_of(app).streams_by_semihosting(image):
        with tempfile.TemporaryDirectory(prefix="cmx-data-") as tmp:
            stream = Path(tmp) / "samples.bin"
            stream.write_bytes(data_run.stream_bytes(host, report.inputs))
            found = runner.run_app(image, f"cmx-input={stream}", on_line=count)
    else:
        found = runner.run_app(image, on_line=count, console_input=data_run.console_frames(host, report.inputs))
    bar.close()
    return found


def _lines(
    image: Path, data: data_run.DataSet, run: app_run.AppRun, calls: list[app_run.Call], result: data_run.Comparison
) -> list[str]:
    """What the run says: the samples the application took, how many outputs are bit-exact, the
    accuracies where the data set is labelled, the counts per inference and where it stopped."""
    lines = [
        f"app        {image}: {len(calls)}/{len(data.samples)} sample(s) from {data.where}",
        f"bit-exact  {result.bit_exact}/{result.samples} outputs equal the host reference"
        + (
            ""
            if result.first_differing is None
            else f"; max error {result.max_lsb:g} LSB, first at sample {result.first_differing}"
        ),
    ]
    if result.target_accuracy is not None:
        lines.append(
            f"accuracy   target {result.target_accuracy:.4f}  host int8 {result.host_int8_accuracy:.4f}  "
            f"host float {result.host_float_accuracy:.4f}"
        )
    stats = run.stats(0) if calls else None
    if stats:
        lines.append(f"{calls[0].counter:<10} min {stats[0]:,}  median {stats[1]:,.0f}  max {stats[2]:,} per inference")
    if run.error:
        lines.append(f"stopped    {run.error}")
    return lines
