"""Refuse what the target's kernels would stop on or get wrong (target_checks.py,
data/target_limits.yaml), before anything is run or written; a cortex_m kernel's node becomes a
float island (float_islands.py)."""

from __future__ import annotations

from cmx_gen.lower import target_checks
from cmx_gen.lower.state import Checked, Cleaned, Given, Rewritten, Step


def run(given: Given, rewritten: Rewritten, cleaned: Cleaned) -> Checked:
    target_checks.check(cleaned.program.graph_module, rewritten.graph, given.options.delegate)
    return Checked(program=cleaned.program)


STEP = Step("check_target", run)
