"""`cmx-gen check MODEL_OR_REPORT --board ID`: does the lowered model fit the board, and where does it go?

Takes a report.json, the folder `cmx-gen lower -o DIR` wrote, an app `create` made, or a model (`model.py:Name`,
`.pt2`), which is first lowered for the board's core (cached, like `create`). Exits non-zero (FitError, code 3)
naming the short region and the shortfall, and lists the boards where the model would fit.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from cmx_gen.cli.model_args import add_model_arguments, load_source, lower_options
from cmx_gen.common.errors import CmxError, FitError, ModelSourceError
from cmx_gen.common.goals import goals_to_try
from cmx_gen.fit.boards import load_board
from cmx_gen.fit.memory import Placement, plan, usage_table
from cmx_gen.program.report import Report


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("check", help="check that a lowered model fits a board; show the placement")
    add_model_arguments(
        parser, "MODEL_OR_REPORT", "report.json, the folder `cmx-gen lower -o DIR` wrote, an app folder, or a model (path/model.py:Name, .pt2)"
    )
    parser.add_argument("--board", required=True, help="board id (`cmx-gen boards` lists them) or a board .yaml file")
    parser.add_argument("--json", action="store_true", help="print the placement (or the refusal) as JSON")
    parser.set_defaults(func=run)


def find_report(path: str | Path) -> Path:
    """The report.json for a path: the file itself, `<folder>/report.json` (what `lower -o` wrote),
    or `<app>/model/report.json` (an app `create` rendered: "does it still fit another board?")."""
    p = Path(path)
    if p.is_dir():
        for candidate in (p / "report.json", p / "model" / "report.json"):
            if candidate.is_file():
                return candidate
        raise ModelSourceError(f"{path} has no report.json", f"lower the model first: cmx-gen lower MODEL -o {path}")
    if p.is_file() and p.suffix == ".json":
        return p
    if p.exists():
        raise ModelSourceError(f"{path} is not a lowering report",
                               f"lower it first (cmx-gen lower {path} -o DIR) and check DIR")
    raise ModelSourceError(f"{path} does not exist", "pass report.json or the folder `cmx-gen lower -o DIR` wrote")


def load_report(path: str | Path) -> Report:
    from cmx_gen.program.report import load_json

    return load_json(find_report(path))


def check_report(report: Report, board_id: str) -> Placement:
    """Placement of a lowered program on a board; raises FitError / TargetError / BoardError."""
    return plan(report, load_board(board_id))


def is_model_source(spec: str) -> bool:
    return spec.endswith(".pt2") or (":" in spec and spec.rpartition(":")[0].endswith(".py"))


def lowered_report(args: argparse.Namespace) -> Report:
    """The report to check: read it, or lower the model for the board's core first."""
    if not is_model_source(args.model):
        return load_report(args.model)
    from cmx_gen.pipeline.lower import produce

    board = load_board(args.board)
    source = load_source(args)
    goals = goals_to_try(args.memory) if args.memory else (None,)
    for goal in goals:  # fit: the first goal whose program fits, else the last one's refusal
        result, _ = produce(source, board.core.lower_target, lower_options(args, goal))
        if goal == goals[-1]:
            break
        try:
            check_report(result.report, args.board)
            break
        except FitError:
            continue
    return result.report


def run(args: argparse.Namespace) -> int:
    report = lowered_report(args)
    try:
        placement = check_report(report, args.board)
    except FitError as exc:
        if args.json:
            print(json.dumps({"fits": False, "board_id": args.board, "problem": exc.problem, "hint": exc.hint,
                              "shortfalls": [asdict(s) for s in exc.shortfalls], "fits_on": exc.fits_on}, indent=2))
            return exc.exit_code
        if exc.uses:
            print(usage_table(exc.uses))
        raise
    except CmxError as exc:
        if args.json:
            print(json.dumps({"fits": False, "board_id": args.board, "problem": exc.problem, "hint": exc.hint}, indent=2))
            return exc.exit_code
        raise
    if args.json:
        print(json.dumps({"fits": True, **placement.to_dict()}, indent=2))
    else:
        board = load_board(args.board)
        print(f"{board.id}: {board.name}, {board.core.name} ({board.core.isa})\n")
        print(placement.to_text())
        if placement.code_estimated:
            print("\ncode sizes are estimates (cmx_gen/data/kernel_sizes.yaml) until measured on a real build")
        print("\nfits: yes")
    return 0
