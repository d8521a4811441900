"""`cmx-gen check MODEL_OR_REPORT --board ID`: does the lowered model fit the board, and where does it go?

Takes a report.json, the folder `cmx-gen lower -o DIR` wrote, an app `create` made, or a model (`model.py:Name`,
`.pt2`), which is first lowered for the board's core (cached, like `create`). Exits non-zero (FitError, code 3)
naming the short region and the shortfall, and lists the boards where the model would fit.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from cmx_gen.cli.model_args import add_model_arguments, load_source, lower_options
from cmx_gen.common.errors import CmxError, FitError
from cmx_gen.common.goals import DEFAULT_STAGE_WEIGHTS
from cmx_gen.fit.boards import load_board
from cmx_gen.fit.latency import estimate as estimate_latency
from cmx_gen.fit.memory import usage_table
from cmx_gen.pipeline.check import check_report, lowered_report


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("check", help="check that a lowered model fits a board; show the placement")
    add_model_arguments(
        parser,
        "MODEL_OR_REPORT",
        "report.json, the folder `cmx-gen lower -o DIR` wrote, an app folder, or a model (path/model.py:Name, .pt2)",
    )
    parser.add_argument("--board", required=True, help="board id (`cmx-gen boards` lists them) or a board .yaml file")
    parser.add_argument("--json", action="store_true", help="print the placement (or the refusal) as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    report = lowered_report(
        args.model,
        args.board,
        lambda: load_source(args),
        lambda goal, staged: lower_options(args, goal, staged),
        args.memory,
        args.stage_weights or DEFAULT_STAGE_WEIGHTS,
    )
    try:
        placement = check_report(report, args.board)
    except FitError as exc:
        if args.json:
            print(
                json.dumps(
                    {
                        "fits": False,
                        "board_id": args.board,
                        "problem": exc.problem,
                        "hint": exc.hint,
                        "shortfalls": [asdict(s) for s in exc.shortfalls],
                        "fits_on": exc.fits_on,
                    },
                    indent=2,
                )
            )
            return exc.exit_code
        if exc.uses:
            print(usage_table(exc.uses))
        raise
    except CmxError as exc:
        if args.json:
            print(
                json.dumps({"fits": False, "board_id": args.board, "problem": exc.problem, "hint": exc.hint}, indent=2)
            )
            return exc.exit_code
        raise
    board = load_board(args.board)
    latency = estimate_latency(report, board)
    if args.json:
        print(json.dumps({"fits": True, **placement.to_dict(), "latency": latency.to_dict()}, indent=2))
    else:
        print(f"{board.id}: {board.name}, {board.core.name} ({board.core.isa})\n")
        print(placement.to_text())
        if placement.code_estimated:
            print("\ncode sizes are estimates (cmx_gen/data/kernel_sizes.yaml) until measured on a real build")
        print(f"\n{latency.line()}")
        print("\nfits: yes")
    return 0
