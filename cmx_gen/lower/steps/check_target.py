"""Refuse what the target's kernels would stop on or get wrong (target_checks.py,
data/target_limits.yaml), before anything is run or written."""

from __future__ import annotations

from cmx_gen.lower import target_checks
from cmx_gen.lower.state import Checked, Cleaned, Step


def run(cleaned: Cleaned) -> Checked:
    target_checks.check(cleaned.program.graph_module)
    return Checked(program=cleaned.program)


STEP = Step("check_target", run)
