"""to_executorch: the lowered (and delegated) program as .pte bytes, and which graph node each instruction runs
(instructions.py), for the report's operator table."""

from __future__ import annotations

from cmx_gen.lower import instructions, target_checks
from cmx_gen.lower.state import Delegated, Given, Serialized, Step
from cmx_gen.model.export import export_error


def run(given: Given, delegated: Delegated) -> Serialized:
    from executorch.exir import ExecutorchBackendConfig

    from cmx_gen.lower.delegate import work_input

    try:
        # the delegates' working memory joins the memory plan (a no-op without delegates); inputs the
        # caller keeps (input_memory = "caller") are not planned: the runtime shares their data
        planning = work_input.planning_pass(alloc_graph_input=given.options.input_memory == "pool")
        config = ExecutorchBackendConfig(memory_planning_pass=planning)
        program = delegated.manager.to_executorch(config)
        pte = program.buffer
    except Exception as exc:
        raise export_error("serialization (to_executorch)", exc) from exc
    target_checks.check_serialized(program.exported_program().graph_module)
    names = instructions.node_names(program.exported_program().graph_module)
    return Serialized(pte=pte, program=program, instruction_names=names)


STEP = Step("serialize", run)
