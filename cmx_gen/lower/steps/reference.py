"""The reference outputs, from the lowered program itself on the host: cortex_m ops have Python
implementations, and kernel_models.py the C kernels' exact arithmetic where those round
differently (lower/host_models/reference.py). Run before serialization turns the graph into out-variants; every
op's result is kept as the on-target trace's reference."""

from __future__ import annotations

from cmx_gen.common.errors import ExportError
from cmx_gen.lower.host_models.reference import run_references
from cmx_gen.lower.state import Checked, Given, Lowered, Referenced, Step
from cmx_gen.model.export import first_line


def run(given: Given, lowered: Lowered, checked: Checked) -> Referenced:
    runnable = checked.program.module()
    try:
        runs = run_references(runnable, lowered.inputs, given.target.isa, record=True)
    except Exception as exc:
        raise ExportError(
            f"the lowered program does not run: {type(exc).__name__}: {first_line(exc)} "
            "(an op was left on int8 data without a cortex_m kernel)",
            "place activations directly after a conv/linear layer, or replace the op named above; --debug shows where",
        ) from exc
    return Referenced(runnable=runnable, runs=runs)


STEP = Step("reference", run)
