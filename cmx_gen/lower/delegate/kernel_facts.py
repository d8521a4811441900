"""Constants cmx-gen's kernels decide, read from their C sources (kernels/nn/), so each is written once:
the plan's choices read the kernels' own values (the sizes and layouts themselves it asks of the C:
kernel_numbers.py).

Only a plain `#define CMX_NAME <integer>` is read, never one under a condition: a constant that differs
by core has one unconditional name per core (CMX_FC_GROUP_DSP, CMX_FC_GROUP_MVE)."""

from __future__ import annotations

import functools
import re

from cmx_gen.common.paths import KERNELS_DIR

_DEFINE = re.compile(r"^#define (CMX_\w+) (\d+)\b", re.M)


@functools.cache
def _defines(source: str) -> dict[str, int]:
    found: dict[str, int] = {}
    twice: set[str] = set()
    for name, value in _DEFINE.findall((KERNELS_DIR / "nn" / source).read_text()):
        if name in found:
            twice.add(name)
        found[name] = int(value)
    return {name: value for name, value in found.items() if name not in twice}


def define(source: str, name: str) -> int:
    """The value of `#define name` in kernels/nn/`source` (defined once there, unconditionally)."""
    found = _defines(source)
    if name not in found:
        raise LookupError(f"kernels/nn/{source} has no single plain '#define {name} <integer>'")
    return found[name]
