"""Command line: argument parsing, error reporting and exit codes. No pipeline logic here.

Each command lives in `cmx_gen/cli/commands/<name>.py` and exposes `register(subparsers)`, which adds
its parser and sets `func` (called with the parsed args, returns the exit code).
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import re
import sys
import traceback
from typing import NoReturn

from cmx_gen import __version__
from cmx_gen.common.errors import CmxError
from cmx_gen.common.noise import quiet_third_party

# Order is the order of `cmx-gen --help`.
COMMANDS = [
    "lower",
    "check",
    "boards",
    "samples",
    "create",
    "regen",
    "build",
    "run",
    "flash",
    "model_image",
    "validate",
    "report",
    "sdk",
]


class OneLineParser(argparse.ArgumentParser):
    """argparse whose errors are one line with a fix, like every other cmx-gen error (no usage block)."""

    def error(self, message: str) -> NoReturn:
        hint = f"see `{self.prog} --help`"
        choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if choice:
            options = re.findall(r"'([^']*)'", choice.group(2))
            close = difflib.get_close_matches(choice.group(1), options, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            hint += f"choose from {', '.join(options)}"
        command = self.prog.removeprefix("cmx-gen").strip()
        print(f"cmx-gen: error: {command + ': ' if command else ''}{message} (fix: {hint})", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="cmx-gen",
        description="Turn a PyTorch model into a buildable Cortex-M firmware app.",
    )
    parser.add_argument("--version", action="version", version=f"cmx-gen {__version__}")
    parser.add_argument("--debug", action="store_true", help="show full tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"cmx_gen.cli.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"cmx_gen.cli.commands.{name}":
                continue  # command not written yet
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    quiet_third_party()
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except CmxError as exc:
        if args.debug:
            traceback.print_exc()
            if exc.details:
                print(exc.details, file=sys.stderr)
        print(f"cmx-gen: error: {exc.one_line()}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:  # `cmx-gen boards | head`: the reader has what it wanted
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("cmx-gen: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:
        # A path the user gave cannot be read or written: theirs to fix, so no traceback.
        if args.debug:
            traceback.print_exc()
        where = f" {exc.filename}" if exc.filename else ""
        print(
            f"cmx-gen: error: cannot use{where}: {exc.strerror or exc} (fix: check the path and its permissions)",
            file=sys.stderr,
        )
        return 2
    except Exception as exc:  # a bug of cmx-gen's: still one line, the traceback on request
        if args.debug:
            traceback.print_exc()
        message = (str(exc).strip().splitlines() or [""])[0]
        print(
            f"cmx-gen: internal error: {type(exc).__name__}: {message} "
            "(fix: run again with --debug and report the traceback)",
            file=sys.stderr,
        )
        return 1
