"""`cmx-gen create`: a model (or a cmx.toml) and a board in, a buildable app folder out."""

from __future__ import annotations

import argparse
from pathlib import Path

from cmx_gen.app import project as project_mod
from cmx_gen.app.kinds import APP_KINDS
from cmx_gen.cli.model_args import add_model_arguments
from cmx_gen.common.errors import ModelSourceError
from cmx_gen.common.goals import DEFAULT_MEMORY_GOAL


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("create", help="lower, fit-check and render a Zephyr or bare-metal app")
    add_model_arguments(parser)
    parser.set_defaults(model=None)
    parser.add_argument("--config", help="a cmx.toml project file (command-line options win)")
    parser.add_argument("--board", help="board id (see `cmx-gen boards`)")
    parser.add_argument("--rtos", choices=list(APP_KINDS), help="app kind (default baremetal)")
    parser.add_argument("-o", "--output", help="app folder to create or update")
    parser.add_argument("--name", help="project name in the app (default: from the model file)")
    parser.add_argument("--strict", action="store_true", default=None, help="refuse models with portable compute fallbacks")
    parser.add_argument("--force", action="store_true", help="replace generated files you edited (backups are kept)")
    parser.add_argument("--no-cache", action="store_true", help="lower again even if nothing changed")
    parser.add_argument("--separate-arenas", action="store_true", default=None,
                        help="several models: each keeps its own planned buffers and temp pool (models that run at "
                             "the same time); default: they share one arena sized for the largest")
    parser.set_defaults(func=run)
    # MODEL is optional when --config names it; several models are NAME=MODEL each.
    for action in parser._actions:
        if action.dest == "model":
            action.nargs = "*"
            action.help = f"{action.help}; several models in one firmware: NAME=MODEL NAME=MODEL ..."


# Options that belong to one model: with several on the command line, a cmx.toml says whose they are.
PER_MODEL_OPTIONS = ("input_shape", "input", "calibration", "random_calibration", "keep_fp32", "io")


def _several(args: argparse.Namespace, base: project_mod.Project | None) -> list[project_mod.ModelEntry]:
    """`NAME=MODEL NAME=MODEL ...`: one entry each, named (the handle cmx_model_<NAME>)."""
    given = [o for o in PER_MODEL_OPTIONS if getattr(args, o)]
    if given:
        raise ModelSourceError(f"--{given[0].replace('_', '-')} is a per-model option and {len(args.model)} models are given",
                               "write a cmx.toml with one [[model]] table per model (docs/api.md) and pass --config")
    entries: list[project_mod.ModelEntry] = []
    for spec in args.model:
        name, sep, source = spec.partition("=")
        if not sep or not name.isidentifier() or not source:
            raise ModelSourceError(f"{spec!r}: several models are given as NAME=MODEL",
                                   "e.g. cmx-gen create kws=kws/model.py:DSCNN digits=digits/model.py:DigitsCNN --board ...")
        if any(e.name == name for e in entries):
            raise ModelSourceError(f"two models are named {name!r}", "give each model its own NAME")
        entries.append(project_mod.ModelEntry(source=source, name=name))
    return entries


def project_from_args(args: argparse.Namespace) -> project_mod.Project:
    base = project_mod.load(Path(args.config)) if args.config else None
    if len(args.model) > 1 or (not args.model and base is not None and base.several):
        return _several_project(args, base)
    if args.model and "=" in args.model[0] and not Path(args.model[0]).exists():
        name, _, source = args.model[0].partition("=")
        args.model, args.name = [source], args.name or name
    model = (args.model[0] if args.model else None) or (base.model if base else None)
    if not model:
        raise ModelSourceError("no model given", "pass MODEL (path/model.py:Name, .pt2) or --config cmx.toml")
    board, output = _board_and_output(args, base)
    pick = lambda arg, attr, default: arg if arg is not None else (getattr(base, attr) if base else default)  # noqa: E731
    return project_mod.Project(
        model=model,
        board=board,
        rtos=pick(args.rtos, "rtos", "baremetal"),
        output=output,
        input_shape=pick(args.input_shape, "input_shape", None),
        calibration=pick(args.calibration, "calibration", None),
        given_input=pick(args.input, "given_input", None),
        random_calibration=args.random_calibration or (base.random_calibration if base else False),
        strict=pick(args.strict, "strict", False),
        keep_fp32=list(args.keep_fp32) if args.keep_fp32 else (list(base.keep_fp32) if base else []),
        io=pick(args.io, "io", "float"),
        name=pick(args.name, "name", None),
        delegate=pick(args.delegate, "delegate", True),
        memory=pick(args.memory, "memory", DEFAULT_MEMORY_GOAL),
    )


def _board_and_output(args: argparse.Namespace, base: project_mod.Project | None) -> tuple[str, str]:
    board = args.board or (base.board if base else None)
    output = args.output or (base.output if base else None)
    if not board:
        raise ModelSourceError("no board given", "pass --board ID (list them with `cmx-gen boards`)")
    if not output:
        raise ModelSourceError("no output folder given", "pass -o APP_DIR")
    return board, output


def _several_project(args: argparse.Namespace, base: project_mod.Project | None) -> project_mod.Project:
    """Several models: NAME=MODEL arguments, or the [[model]] tables of --config."""
    models = _several(args, base) if args.model else list(base.models)  # type: ignore[union-attr]
    board, output = _board_and_output(args, base)
    pick = lambda arg, attr, default: arg if arg is not None else (getattr(base, attr) if base else default)  # noqa: E731
    return project_mod.Project(
        models=models, board=board, output=output, rtos=pick(args.rtos, "rtos", "baremetal"),
        strict=pick(args.strict, "strict", False), name=pick(args.name, "name", None),
        separate_arenas=pick(args.separate_arenas, "separate_arenas", False),
        delegate=pick(args.delegate, "delegate", True),
        memory=pick(args.memory, "memory", DEFAULT_MEMORY_GOAL),
    )


def run(args: argparse.Namespace) -> int:
    project = project_from_args(args)
    app = Path(project.output)
    from cmx_gen.pipeline.generate import generate

    done = generate(project, app, force=args.force, use_cache=not args.no_cache)
    print(done.summary(app))
    return 0
