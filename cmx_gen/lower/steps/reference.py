"""The reference outputs, from the lowered program itself on the host: cortex_m ops have Python
implementations, and kernel_models.py the C kernels' exact arithmetic where those round
differently (lower/reference.py). Run before serialization turns the graph into out-variants; every
op's result is kept as the on-target trace's reference."""

from __future__ import annotations

from dataclasses import replace

from cmx_gen.common.errors import ExportError
from cmx_gen.lower.reference import KernelExactInterpreter, run_references
from cmx_gen.lower.state import Lowering, Step
from cmx_gen.model.export import first_line


def run(state: Lowering) -> Lowering:
    runnable = state.lowered.module()
    exact = KernelExactInterpreter(runnable, state.target.isa)
    exact.record = {}
    try:
        runs = run_references(runnable, state.program_inputs, exact)
    except Exception as exc:
        raise ExportError(
            f"the lowered program does not run: {type(exc).__name__}: {first_line(exc)} "
            "(an op was left on int8 data without a cortex_m kernel)",
            "place activations directly after a conv/linear layer, or replace the op named above; --debug shows where",
        ) from exc
    node_values, exact.record = exact.record, None
    return replace(state, runnable=runnable, exact=exact, runs=runs, node_values=node_values)


STEP = Step("reference", run)
