"""`cmx-gen create`: a model (or a cmx.toml) and a board in, a buildable app folder out."""

from __future__ import annotations

import argparse
from pathlib import Path

from cmx_gen import project as project_mod
from cmx_gen.apps import APP_KINDS
from cmx_gen.errors import ModelSourceError
from cmx_gen.model_args import add_model_arguments


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
    parser.set_defaults(func=run)
    # MODEL is optional when --config names it.
    for action in parser._actions:
        if action.dest == "model":
            action.nargs = "?"


def project_from_args(args: argparse.Namespace) -> project_mod.Project:
    base = project_mod.load(Path(args.config)) if args.config else None
    model = args.model or (base.model if base else None)
    board = args.board or (base.board if base else None)
    output = args.output or (base.output if base else None)
    if not model:
        raise ModelSourceError("no model given", "pass MODEL (path/model.py:Name, .pt2) or --config cmx.toml")
    if not board:
        raise ModelSourceError("no board given", "pass --board ID (list them with `cmx-gen boards`)")
    if not output:
        raise ModelSourceError("no output folder given", "pass -o APP_DIR")
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
    )


def run(args: argparse.Namespace) -> int:
    project = project_from_args(args)
    app = Path(project.output)
    from cmx_gen.generate import generate

    done = generate(project, app, force=args.force, use_cache=not args.no_cache)
    print(done.summary(app))
    return 0
