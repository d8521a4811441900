"""The project `create` is asked for: its command-line arguments over the cmx.toml `--config` names
(arguments win), as a Project of one model or of several (`NAME=MODEL NAME=MODEL ...`)."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any

from cmx_gen.app.project import MODEL_KEYS, ModelEntry, Project, load
from cmx_gen.common.errors import ModelSourceError
from cmx_gen.common.goals import DEFAULT_INPUT_MEMORY, DEFAULT_MEMORY_GOAL, DEFAULT_PLACEMENT, DEFAULT_STAGE_WEIGHTS

# Options that belong to one model: with several on the command line, a cmx.toml says whose they are.
PER_MODEL_OPTIONS = tuple(key for key in MODEL_KEYS if key not in ("name", "source"))


def project_from_args(args: argparse.Namespace) -> Project:
    base = load(Path(args.config)) if args.config else None
    given: list[str] = list(args.model or [])
    several = len(given) > 1 or (not given and base is not None and base.several)
    name = args.name
    if not several and given and "=" in given[0] and not Path(given[0]).exists():  # NAME=MODEL for one model
        name, _, source = given[0].partition("=")
        name, given = args.name or name, [source]
    one = base.models[0] if base and not base.several else None  # the cmx.toml's model, whose options apply
    if not several and not given and one is None:
        raise ModelSourceError("no model given", "pass MODEL (path/model.py:Name, .pt2) or --config cmx.toml")
    board, output = _board_and_output(args, base)

    def pick(value: Any, attr: str, default: Any) -> Any:
        return value if value is not None else (getattr(base, attr) if base else default)

    shared = dict(
        board=board,
        output=output,
        rtos=pick(args.rtos, "rtos", "baremetal"),
        strict=pick(args.strict, "strict", False),
        name=pick(name, "name", None),
        delegate=pick(args.delegate, "delegate", True),
        memory=pick(args.memory, "memory", DEFAULT_MEMORY_GOAL),
        input_memory=pick(args.input_memory, "input_memory", DEFAULT_INPUT_MEMORY),
        stage_weights=pick(args.stage_weights, "stage_weights", DEFAULT_STAGE_WEIGHTS),
        placement=pick(args.placement, "placement", DEFAULT_PLACEMENT),
    )
    if several:
        models = _several(args, given) if given else base.models  # type: ignore[union-attr]
        return Project(
            models=tuple(models), separate_arenas=pick(args.separate_arenas, "separate_arenas", False), **shared
        )
    model = one or ModelEntry(source=given[0])
    model = replace(
        model,
        source=given[0] if given else model.source,
        name=shared["name"],
        input_shape=args.input_shape if args.input_shape is not None else model.input_shape,
        calibration=args.calibration if args.calibration is not None else model.calibration,
        given_input=args.input if args.input is not None else model.given_input,
        random_calibration=args.random_calibration or model.random_calibration,
        keep_fp32=tuple(args.keep_fp32) if args.keep_fp32 else model.keep_fp32,
        io=args.io if args.io is not None else model.io,
        weights=args.weights if args.weights is not None else model.weights,
        weights_for=tuple(args.weights_for) if args.weights_for else model.weights_for,
        sqnr_target=args.sqnr_target if args.sqnr_target is not None else model.sqnr_target,
        precision=args.precision if args.precision is not None else model.precision,
        precision_for=tuple(args.precision_for) if args.precision_for else model.precision_for,
        per_channel_linear=bool(args.per_channel_linear) or model.per_channel_linear,
    )
    return Project(models=(model,), **shared)


def _several(args: argparse.Namespace, given: list[str]) -> list[ModelEntry]:
    """`NAME=MODEL NAME=MODEL ...`: one entry each, named (the handle cmx_model_<NAME>)."""
    per_model = [o for o in PER_MODEL_OPTIONS if getattr(args, o)]
    if per_model:
        raise ModelSourceError(
            f"--{per_model[0].replace('_', '-')} is a per-model option and {len(given)} models are given",
            "write a cmx.toml with one [[model]] table per model (docs/api.md) and pass --config",
        )
    entries: list[ModelEntry] = []
    for spec in given:
        name, sep, source = spec.partition("=")
        if not sep or not name.isidentifier() or not source:
            raise ModelSourceError(
                f"{spec!r}: several models are given as NAME=MODEL",
                "e.g. cmx-gen create kws=kws/model.py:DSCNN digits=digits/model.py:DigitsCNN --board ...",
            )
        if any(e.name == name for e in entries):
            raise ModelSourceError(f"two models are named {name!r}", "give each model its own NAME")
        entries.append(ModelEntry(source=source, name=name))
    return entries


def _board_and_output(args: argparse.Namespace, base: Project | None) -> tuple[str, str]:
    board = args.board or (base.board if base else None)
    output = args.output or (base.output if base else None)
    if not board:
        raise ModelSourceError("no board given", "pass --board ID (list them with `cmx-gen boards`)")
    if not output:
        raise ModelSourceError("no output folder given", "pass -o APP_DIR")
    return board, output
