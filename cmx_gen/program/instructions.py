"""The program's instructions named for people, and their expected output bytes on the target.

The runtime identifies each operator call only by its instruction index (the EventTracer's debug
handle); lower/instructions.py maps an index back to its graph node, module path and user's line.
Here those names meet the program's plan (pte.PlanRow): report.json's `instructions`, and the
bytes the on-target trace compares each output with (the kernel-exact interpreter's values).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from cmx_gen.lower.facts import DelegatedLayer
from cmx_gen.program.pte import OutputPlace, PlanRow
from cmx_gen.program.report import Instruction

TRACE_PREFIX = "trace_"  # reference.npz key of instruction i's expected output bytes: trace_<i>
LAYER_TRACE_PREFIX = "trace_layer_"  # ... of the backend layer with debug id d: trace_layer_<d>


def names_of(row: PlanRow, named: dict[int, dict[str, str]]) -> dict[str, str]:
    """The node, module and source of the instruction, or {} when the handle is a folded node's:
    nodes that became no instruction keep their original debug handle, which can collide."""
    names = named.get(row.index, {})
    return names if names and names["op"] == row.op.split(".")[0] else {}


def describe(
    rows: list[PlanRow], named: dict[int, dict[str, str]], traced: set[int] | None = None
) -> list[Instruction]:
    """report.json `instructions`: the program's rows with node, module and source; with `traced`,
    each output says whether the host holds its expected bytes."""
    described = []
    for row in rows:
        names = names_of(row, named)
        output = row.output
        if output is not None and traced is not None:
            output = output.model_copy(update={"reference": row.index in traced})
        described.append(
            Instruction(
                index=row.index,
                op=row.op,
                node=names.get("node", ""),
                module=names.get("module", ""),
                source=names.get("source", ""),
                output=output,
            )
        )
    return described


def memory_bytes(value: object, output: OutputPlace) -> NDArray[Any] | None:
    """The bytes the target holds for `value` in the output's dim order, or None if the host value
    is not that tensor (shape or dtype differ)."""
    if not isinstance(value, torch.Tensor) or list(value.shape) != output.shape:
        return None
    array = value.detach().permute(*output.dim_order).contiguous().cpu().numpy() if value.dim() else value.numpy()
    if array.dtype.name != output.dtype or array.nbytes != output.nbytes:
        return None
    return np.frombuffer(array.tobytes(), dtype=np.uint8).copy()


def trace_arrays(
    rows: list[PlanRow], named: dict[int, dict[str, str]], values: dict[str, object]
) -> dict[int, NDArray[Any]]:
    """Instruction i's expected output bytes for the sample input, by index (reference.npz trace_<i>)."""
    arrays: dict[int, NDArray[Any]] = {}
    for row in rows:
        node = names_of(row, named).get("node", "")
        if row.output is None or node not in values:
            continue
        data = memory_bytes(values[node], row.output)
        if data is not None:
            arrays[row.index] = data
    return arrays


def layer_trace_arrays(layers: Sequence[DelegatedLayer], values: dict[str, object]) -> dict[int, NDArray[Any]]:
    """Each delegated layer's expected output bytes (cmx-gen's backend streams them in the trace
    image), by debug id: the kernel-exact value in the layout the layer writes it."""
    arrays: dict[int, NDArray[Any]] = {}
    for layer in layers:
        if layer.patched:  # the device streams each patch's part, not the whole: not compared
            continue
        place = OutputPlace(
            mem_id=0, offset=0, nbytes=layer.nbytes, dtype=layer.dtype, shape=layer.shape, dim_order=layer.dim_order
        )
        data = memory_bytes(values[layer.node], place) if layer.node in values else None
        if data is not None:
            arrays[layer.debug] = data
    return arrays
