"""`cmx-gen report APP_OR_DIR [-o FILE] [--open]`: the one-page HTML report (html_report.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from cmx_gen.common.errors import AppError


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("report", help="write the HTML report of an app or a lowering folder")
    parser.add_argument("folder", metavar="APP_OR_DIR", help="an app from `create`, or a folder from `lower -o`")
    parser.add_argument("-o", "--output", help="where to write it (default: APP_OR_DIR/report.html)")
    parser.add_argument("--open", action="store_true", help="open it in the default browser")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cmx_gen.app import html_report
    from cmx_gen.app.folder import AppFolder

    app = AppFolder(Path(args.folder))
    folder = app.path
    has_report = (folder / "report.json").is_file() or (folder / "model" / "report.json").is_file()
    if not has_report and not app.model_names():
        raise AppError(
            f"{folder} holds no report.json: it is neither an app nor a lowering folder",
            "pass the folder given to `cmx-gen create -o` or `cmx-gen lower -o`",
        )
    page = html_report.write(folder, Path(args.output) if args.output else None)
    print(f"report     {page} ({page.stat().st_size:,} B)")
    if args.open:
        import webbrowser

        webbrowser.open(page.resolve().as_uri())
    return 0
