"""Name the parts of the program that compute in float and why (float_islands.float_parts): an
island cmx-gen left in float instead of refusing, a --keep-fp32 part, or an op with no int8 kernel."""

from __future__ import annotations

from cmx_gen.lower.float_islands import float_parts
from cmx_gen.lower.state import Checked, Floats, Given, Rewritten, Step


def run(given: Given, rewritten: Rewritten, checked: Checked) -> Floats:
    parts = float_parts(checked.program.graph_module, rewritten.graph, given.options.keep_fp32, given.islands)
    return Floats(parts=parts)


STEP = Step("float_parts", run)
