"""How the board database reads for people (`cmx-gen boards`, `boards show ID`) and as JSON."""

from __future__ import annotations

from typing import Any

from cmx_gen.common.format import size, table
from cmx_gen.common.targets import canonical_core
from cmx_gen.fit.boards import Board, load_boards


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
        lines.append(
            f"flash      west flash --runner {board.flash.runner}"
            + (f"; pyocd target {board.flash.pyocd_target}" if board.flash.pyocd_target else "")
        )
    lines.append(f"console    {board.console}")
    if board.uart:
        u = board.uart
        lines.append(
            f"uart       {u.kind} at 0x{u.base:08x}, {u.clock_hz} Hz, {u.baud} baud "
            "(bare-metal app: -D CMX_CONSOLE=uart)"
        )
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


def board_dict(board: Board) -> dict[str, Any]:
    out = board.model_dump()
    out["core"]["isa"] = board.core.isa
    out["core"]["gcc_flags"] = board.core.gcc_flags
    return out


def listing(boards: list[Board]) -> str:
    """One row per board: id, core, ISA, clock, how it runs, its memory."""
    rows = [("id", "core", "isa", "MHz", "runs", "memory")]
    for b in boards:
        rows.append((b.id, b.core.name, b.core.isa, f"{b.core.clock_hz / 1e6:g}", _runs(b), _memory_summary(b)))
    return table(rows, right={3}) + ("" if boards else "\n(no board matches these filters)")
