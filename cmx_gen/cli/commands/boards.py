"""`cmx-gen boards [--core C] [--isa I] [--qemu]` lists the board database; `cmx-gen boards show ID` prints one."""

from __future__ import annotations

import argparse
import json

from cmx_gen.common.errors import BoardError
from cmx_gen.common.format import size, table
from cmx_gen.common.targets import canonical_core
from cmx_gen.fit.boards import Board, load_board, load_boards


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("boards", help="list the boards cmx-gen knows (memory map, core, how to run)")
    parser.add_argument("--core", help="only boards with this core, e.g. cortex-m55 or m55")
    parser.add_argument("--isa", type=str.upper, choices=["MVE", "DSP", "SCALAR"], help="only boards with this CMSIS-NN ISA")
    parser.add_argument("--qemu", action="store_true", help="only boards that run in QEMU")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    actions = parser.add_subparsers(dest="boards_action", metavar="[show ID]", required=False)
    show = actions.add_parser("show", help="print one board: memory regions, core flags, Zephyr target, runners")
    show.add_argument("board_id", metavar="ID", help="board id (or a board .yaml file)")
    show.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.set_defaults(func=run)


def _memory_summary(board: Board) -> str:
    return ", ".join(f"{r.name} {size(r.size)}" for r in board.memory)


def _runs(board: Board) -> str:
    ways = []
    if board.qemu:
        ways.append(f"qemu:{board.qemu.machine}")
    if board.fvp:
        ways.append(f"fvp:{board.fvp.model}")
    if board.flash:
        ways.append(f"flash:{board.flash.runner}")
    return " ".join(ways) or "-"


def list_boards(core: str | None = None, isa: str | None = None, qemu: bool = False) -> list[Board]:
    boards = load_boards()
    if core:
        boards = [b for b in boards if b.core.name == canonical_core(core)]
    if isa:
        boards = [b for b in boards if b.core.isa == isa.upper()]
    if qemu:
        boards = [b for b in boards if b.runs_in_qemu]
    return boards


def show_text(board: Board) -> str:
    core = board.core
    lines = [
        f"{board.id}: {board.name} ({board.vendor})",
        f"core       {core.name} @ {core.clock_hz / 1e6:g} MHz, ISA {core.isa} (fpu {core.fpu or 'none'}, "
        f"dsp {'yes' if core.dsp else 'no'}, mve {core.mve or 'no'})",
        f"gcc        {' '.join(core.gcc_flags)}",
        f"zephyr     {board.zephyr.target + '  (' + board.zephyr.file_name + ')' if board.zephyr else 'no Zephyr board: bare-metal app only'}",
        f"boot       {board.boot_region} (code, vector table)    ram {board.ram_region} (.data/.bss, stack, heap)",
    ]
    if board.qemu:
        lines.append(f"qemu       -machine {board.qemu.machine} -cpu {board.qemu.cpu}")
    if board.fvp:
        lines.append(f"fvp        {board.fvp.model} {' '.join(board.fvp.flags)}")
    if board.flash:
        lines.append(f"flash      west flash --runner {board.flash.runner}"
                     + (f"; pyocd target {board.flash.pyocd_target}" if board.flash.pyocd_target else ""))
    lines.append(f"console    {board.console}")
    if board.uart:
        u = board.uart
        lines.append(f"uart       {u.kind} at 0x{u.base:08x}, {u.clock_hz} Hz, {u.baud} baud "
                     "(bare-metal app: -D CMX_CONSOLE=uart)")
    lines.append("")
    rows = [("region", "kind", "base", "size", "attributes")]
    for r in board.memory:
        attrs = [a for a, on in (("exec", r.executable), ("loadable", r.loadable), ("dma", r.dma)) if on]
        attrs.append(f"dt:{r.dt_node}" if r.dt_node else "not in Zephyr DTS")
        rows.append((r.name, r.kind, f"0x{r.base:08x}", size(r.size), " ".join(attrs)))
    lines.append(table(rows, right={3}))
    if board.notes:
        lines += ["", f"notes      {board.notes}"]
    return "\n".join(lines)


def board_dict(board: Board) -> dict:
    out = board.model_dump()
    out["core"]["isa"] = board.core.isa
    out["core"]["gcc_flags"] = board.core.gcc_flags
    return out


def run(args: argparse.Namespace) -> int:
    if args.boards_action == "show":
        board = load_board(args.board_id)
        print(json.dumps(board_dict(board), indent=2) if args.json else show_text(board))
        return 0
    if args.core:
        known = sorted({b.core.name for b in load_boards()})
        if canonical_core(args.core) not in known:
            raise BoardError(f"no core called {args.core!r} in the board database",
                             f"use one of: {', '.join(known)} (short names like m55 work too)")
    boards = list_boards(args.core, args.isa, args.qemu)
    if args.json:
        print(json.dumps([board_dict(b) for b in boards], indent=2))
        return 0
    rows = [("id", "core", "isa", "MHz", "runs", "memory")]
    for b in boards:
        rows.append((b.id, b.core.name, b.core.isa, f"{b.core.clock_hz / 1e6:g}", _runs(b), _memory_summary(b)))
    print(table(rows, right={3}))
    if not boards:
        print("(no board matches these filters)")
    return 0
