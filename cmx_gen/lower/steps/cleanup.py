"""What the cortex_m passes leave for the runtime to trip on: constants no operator reads
(dead_constants.py), and float `linear`, which has no portable kernel (fp32_linear.py), both
removed from a copy of the lowered program. Each node's name is kept in its meta: the on-target
trace finds a value of the host reference by it after the graph was retraced (fx_nodes.reference_name)."""

from __future__ import annotations

import copy

from cmx_gen.lower.fx_nodes import name_for_reference
from cmx_gen.lower.rewrites import dead_constants, fp32_linear
from cmx_gen.lower.state import Cleaned, Lowered, Step


def run(lowered: Lowered) -> Cleaned:
    program = copy.deepcopy(lowered.program)
    dead_constants.drop(program)
    fp32_linear.decompose(program)
    name_for_reference(program.graph_module)
    return Cleaned(program=program)


STEP = Step("cleanup", run)
