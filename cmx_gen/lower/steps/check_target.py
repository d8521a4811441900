"""Refuse what the target's kernels would stop on or get wrong (target_checks.py,
data/target_limits.yaml), before anything is run or written."""

from __future__ import annotations

from cmx_gen.lower import target_checks
from cmx_gen.lower.state import Lowering, Step


def run(state: Lowering) -> Lowering:
    target_checks.check(state.lowered.graph_module)
    return state


STEP = Step("check_target", run)
