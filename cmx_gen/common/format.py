"""How cmx-gen writes sizes and tables, for every command and page: one place, so `boards`,
`create`, `check`, `lower` and the fit errors say a size the same way."""

from __future__ import annotations

from collections.abc import Collection, Sequence


def size(n: float) -> str:
    """`1,856 B`, `18.2 KiB`, `2.00 MiB`: bytes below 10 KiB, KiB below 1 MiB."""
    if n < 10 * 1024:
        return f"{n:,} B"
    if n < 1024 * 1024:
        return f"{n / 1024:,.1f} KiB"
    return f"{n / (1024 * 1024):,.2f} MiB"


def size_label(n: float) -> str:
    """The shorter form the HTML report's memory map labels use (KiB up to 10 MiB, one decimal)."""
    return f"{n:,.0f} B" if n < 10_000 else f"{n / 1024:,.1f} KiB" if n < 10 * 2**20 else f"{n / 2**20:,.1f} MiB"


def table(rows: Sequence[tuple[str, ...]], right: Collection[int] = frozenset()) -> str:
    """Plain aligned columns (first row = header); the columns in `right` right-aligned, the last
    column not padded."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for r in rows:
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))]
        cells[-1] = r[-1]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)
