"""The cores cmx-gen lowers for (`--target`). Its own module, free of torch, so the CLI, the board
database and the lowering step share one list and `cmx-gen --help` stays fast."""

from __future__ import annotations

import re

TARGETS = ("cortex-m0plus", "cortex-m3", "cortex-m4", "cortex-m7", "cortex-m33", "cortex-m55", "cortex-m85")


def canonical_core(name: str) -> str:
    """`m55`, `M55`, `cm55`, `Cortex-M55` -> `cortex-m55`; `m0+` -> `cortex-m0plus`. Names it does
    not recognise come back lower-cased, for the caller's own "unknown" message."""
    text = name.strip().lower().replace("_", "-").replace("+", "plus")
    match = re.fullmatch(r"(?:arm-)?(?:cortex-?)?c?(m\d+(?:plus|p)?)", text)
    return f"cortex-{match.group(1)}" if match else text
