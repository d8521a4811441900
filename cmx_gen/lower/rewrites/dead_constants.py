"""Constants no operator reads, dropped from the lowered program before it is serialized.

The cortex_m conv passes add each weight in the layout CMSIS-NN reads (OHWI) and leave the original
(OIHW), with its per-channel scales and zero points, as buffers that nothing reads. `to_executorch` serializes every constant of the
signature, so the .pte carried each conv weight twice (ResNet-8: 174 KB instead of 98 KB; measured
beside TFLite Micro in bench/peers) and the method pool a tensor for each. ExecuTorch's own
`remove_unused_parameters_pass` only looks at parameters; after quantization the weights are
buffers (`_frozen_param*`). Mutated buffers are state and stay.
"""

from __future__ import annotations

import copy
from typing import Any


def drop(program: Any) -> int:
    """Remove the unused parameter, buffer and constant-tensor inputs of the ExportedProgram in
    place; returns how many."""
    from torch.export.graph_signature import InputKind, OutputKind

    graph = program.graph_module.graph
    placeholders = {node.name: node for node in graph.nodes if node.op == "placeholder"}
    mutated = {spec.target for spec in program.graph_signature.output_specs if spec.kind == OutputKind.BUFFER_MUTATION}
    dead = [
        spec
        for spec in program.graph_signature.input_specs
        if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR)
        and spec.target not in mutated
        and spec.arg.name in placeholders
        and not placeholders[spec.arg.name].users
    ]
    if not dead:
        return 0
    signature = copy.deepcopy(program.graph_signature)
    names = {spec.arg.name for spec in dead}
    signature.input_specs[:] = [spec for spec in signature.input_specs if spec.arg.name not in names]
    for spec in dead:
        program._state_dict.pop(spec.target, None)  # parameters, persistent buffers
        program._constants.pop(spec.target, None)  # constant tensors, non-persistent buffers
        graph.erase_node(placeholders[spec.arg.name])
    program._graph_signature = signature
    program.graph_module.recompile()
    return len(dead)
