"""What the cortex_m passes leave for the runtime to trip on: constants no operator reads
(dead_constants.py), and float `linear`, which has no portable kernel (fp32_linear.py)."""

from __future__ import annotations

from cmx_gen.lower import dead_constants, fp32_linear
from cmx_gen.lower.state import Lowering, Step


def run(state: Lowering) -> Lowering:
    dead_constants.drop(state.lowered)
    fp32_linear.decompose(state.lowered)
    return state


STEP = Step("cleanup", run)
