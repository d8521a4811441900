"""`cmx-gen create`: a model (or a cmx.toml) and a board in, a buildable app folder out."""

from __future__ import annotations

import argparse
from pathlib import Path

from cmx_gen.app.kinds import APP_KINDS
from cmx_gen.cli.model_args import MODEL_HELP, add_model_arguments
from cmx_gen.common.goals import PLACEMENTS


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("create", help="lower, fit-check and render a Zephyr or bare-metal app")
    # MODEL is optional when --config names it; several models are NAME=MODEL each.
    add_model_arguments(
        parser, nargs="*", help=f"{MODEL_HELP}; several models in one firmware: NAME=MODEL NAME=MODEL ..."
    )
    parser.add_argument("--config", help="a cmx.toml project file (command-line options win)")
    parser.add_argument("--board", help="board id (see `cmx-gen boards`)")
    parser.add_argument("--rtos", choices=list(APP_KINDS), help="app kind (default baremetal)")
    parser.add_argument("-o", "--output", help="app folder to create or update")
    parser.add_argument("--name", help="project name in the app (default: from the model file)")
    parser.add_argument(
        "--strict", action="store_true", default=None, help="refuse models with portable compute fallbacks"
    )
    parser.add_argument("--force", action="store_true", help="replace generated files you edited (backups are kept)")
    parser.add_argument("--no-cache", action="store_true", help="lower again even if nothing changed")
    parser.add_argument(
        "--separate-arenas",
        action="store_true",
        default=None,
        help="several models: each keeps its own planned buffers and temp pool (models that run at "
        "the same time); default: they share one arena sized for the largest",
    )
    parser.add_argument(
        "--placement",
        choices=PLACEMENTS,
        default=None,
        help="linked (default): the program is in the firmware image; slot: in a flash slot of its own "
        "that the board declares, updated without reflashing the firmware (cmx-gen model-image, "
        "flash --model-only; docs/api.md); cmx.toml: [model] placement",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cmx_gen.cli.project_args import project_from_args
    from cmx_gen.pipeline.generate import generate

    project = project_from_args(args)
    app = Path(project.output or ".")  # project_from_args refuses a project without one
    done = generate(project, app, force=args.force, use_cache=not args.no_cache)
    print(done.summary(app))
    return 0
