"""`cmx-gen regen APP`: redo an app from its cmx.toml after the model changed; user edits survive."""

from __future__ import annotations

import argparse
from pathlib import Path

from cmx_gen.app import project as project_mod
from cmx_gen.app.folder import AppFolder


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("regen", help="regenerate an app from its cmx.toml (keeps your edits)")
    parser.add_argument("app", help="app folder made by cmx-gen create")
    parser.add_argument("--force", action="store_true", help="replace generated files you edited (backups are kept)")
    parser.add_argument("--no-cache", action="store_true", help="lower again even if nothing changed")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    app = AppFolder(Path(args.app)).path  # opening it finishes or drops an update a killed run left
    project = project_mod.load(app / project_mod.FILE_NAME)
    from cmx_gen.pipeline.generate import generate

    done = generate(project, app, force=args.force, use_cache=not args.no_cache)
    print(done.summary(app))
    return 0
