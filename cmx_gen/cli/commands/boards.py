"""`cmx-gen boards [--core C] [--isa I] [--qemu]` lists the board database; `cmx-gen boards show ID` prints one."""

from __future__ import annotations

import argparse
import json

from cmx_gen.common.errors import BoardError
from cmx_gen.common.targets import canonical_core
from cmx_gen.fit import board_text
from cmx_gen.fit.boards import load_board, load_boards


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("boards", help="list the boards cmx-gen knows (memory map, core, how to run)")
    parser.add_argument("--core", help="only boards with this core, e.g. cortex-m55 or m55")
    parser.add_argument(
        "--isa", type=str.upper, choices=["MVE", "DSP", "SCALAR"], help="only boards with this CMSIS-NN ISA"
    )
    parser.add_argument("--qemu", action="store_true", help="only boards that run in QEMU")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    actions = parser.add_subparsers(dest="boards_action", metavar="[show ID]", required=False)
    show = actions.add_parser("show", help="print one board: memory regions, core flags, Zephyr target, runners")
    show.add_argument("board_id", metavar="ID", help="board id (or a board .yaml file)")
    show.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.boards_action == "show":
        board = load_board(args.board_id)
        print(json.dumps(board_text.board_dict(board), indent=2) if args.json else board_text.show_text(board))
        return 0
    if args.core:
        known = sorted({b.core.name for b in load_boards()})
        if canonical_core(args.core) not in known:
            raise BoardError(
                f"no core called {args.core!r} in the board database",
                f"use one of: {', '.join(known)} (short names like m55 work too)",
            )
    boards = board_text.list_boards(args.core, args.isa, args.qemu)
    print(json.dumps([board_text.board_dict(b) for b in boards], indent=2) if args.json else board_text.listing(boards))
    return 0
