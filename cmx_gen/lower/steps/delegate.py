"""cmx-gen's CMSIS-NN backend takes the int8 subgraphs it runs (lower/delegate/): ExecuTorch's
to_backend with cmx-gen's partitioner, each subgraph preprocessed into a plan. Layers it does not
take stay cortex_m and portable kernel calls. `delegate = false` skips this step: the program is
today's per-operator one."""

from __future__ import annotations

from dataclasses import replace

from cmx_gen.lower.state import Lowering, Step
from cmx_gen.model.export import export_error


def run(state: Lowering) -> Lowering:
    from executorch.backends.cortex_m.edge_compile_config import cortex_m_edge_compile_config
    from executorch.exir import EdgeProgramManager

    manager = EdgeProgramManager(state.lowered, compile_config=cortex_m_edge_compile_config())
    if not state.options.delegate:
        return replace(state, edge_program=manager)
    from cmx_gen.lower.delegate.backend import CmxPartitioner

    from cmx_gen.lower.delegate.backend import delegated_layers

    try:
        manager = manager.to_backend(CmxPartitioner(state.target.core))
    except Exception as exc:
        raise export_error("delegation", exc) from exc
    return replace(state, edge_program=manager, delegated=tuple(delegated_layers(manager.exported_program())))


STEP = Step("delegate", run, lambda state: "planning the int8 subgraphs for cmx-gen's CMSIS-NN backend"
            if state.options.delegate else "keeping every operator on its own kernel (delegate = false)")
