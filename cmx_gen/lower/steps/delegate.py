"""cmx-gen's CMSIS-NN backend takes the int8 subgraphs it runs (lower/delegate/): ExecuTorch's
to_backend with cmx-gen's partitioner, each subgraph preprocessed into a plan. Layers it does not
take stay cortex_m and portable kernel calls. `delegate = false` skips this step: the program is
today's per-operator one."""

from __future__ import annotations

from cmx_gen.common.errors import ExportError
from cmx_gen.lower import weight_bits
from cmx_gen.lower.ops import s16_ops
from cmx_gen.lower.state import Checked, Delegated, Given, Step
from cmx_gen.model.export import export_error


def run(given: Given, checked: Checked) -> Delegated:
    from executorch.backends.cortex_m.edge_compile_config import cortex_m_edge_compile_config
    from executorch.exir import EdgeProgramManager

    manager = EdgeProgramManager(checked.program, compile_config=cortex_m_edge_compile_config())
    if not given.options.delegate:
        _refuse_wrong_one_by_n(given, checked)
        return Delegated(manager=manager, layers=(), schedules=())
    from cmx_gen.lower.delegate.backend import CmxPartitioner, delegate_schedules, delegated_layers

    try:
        manager = manager.to_backend(
            CmxPartitioner(
                given.target.core,
                given.options.memory,
                caller_inputs=given.options.input_memory == "caller",
                stage_weights=given.options.stage_weights,
                int4_weights=weight_bits.any_int4(given.options),
            )
        )
    except Exception as exc:
        raise export_error("delegation", exc) from exc
    program = manager.exported_program()
    s16_ops.check_all_delegated(program)
    return Delegated(
        manager=manager, layers=tuple(delegated_layers(program)), schedules=tuple(delegate_schedules(program))
    )


def _refuse_wrong_one_by_n(given: Given, checked: Checked) -> None:
    """Without the backend, the cortex_m kernel calls CMSIS-NN's wrapper, whose 1xN MVE path gets some
    strided, padded convolutions of height 1 wrong (kernel_choice.conv_kind): refuse, naming the way out."""
    from cmx_gen.lower.delegate.kernel_choice import wrapper_misreads
    from cmx_gen.lower.fx_nodes import op_name, source_line

    if given.target.isa != "MVE":
        return
    for node in checked.program.graph_module.graph.nodes:
        if node.op == "call_function" and op_name(node) == "cortex_m::quantized_conv2d" and wrapper_misreads(node):
            where = source_line(node)
            raise ExportError(
                f"the program would compute wrong results on the target: cortex_m::quantized_conv2d at node "
                f"{node.name}{f' ({where})' if where else ''}: CMSIS-NN's 1xN convolution for MVE lays out its "
                "padding only as SAME's split and reads the wrong columns for this stride and padding",
                "drop --no-delegate (delegate = false): cmx-gen's backend runs it on a kernel that reads it right",
            )


STEP = Step(
    "delegate",
    run,
    lambda given, _: (
        "planning the int8 subgraphs for cmx-gen's CMSIS-NN backend"
        if given.options.delegate
        else "keeping every operator on its own kernel (delegate = false)"
    ),
)
