"""A failed cortex_m pass, said in one line: the pass, the node and the user's line it came from,
and what works instead (leaving that line in float). When the node can be found and was made from a
node of the exported graph, the error is a NeedsFloat: lowering.lower leaves that node in float and
lowers again (float_islands.py)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import torch

from cmx_gen.common.errors import ExportError
from cmx_gen.lower.float_islands import NeedsFloat, island_at, island_of
from cmx_gen.model.export import export_error, first_line

# (pass name, node name) -> the node the pass failed on, in the graph it was given
FindNode = Callable[[str, str], "torch.fx.Node | None"]

_FAILED_PASS = re.compile(r"running the '(\w+)' pass")
_FAILED_NODE = re.compile(r"While executing %(\w+)")


def lowering_error(
    exc: Exception, find: FindNode | None = None, exported: torch.fx.GraphModule | None = None
) -> ExportError:
    """The one-line error of a failed pass; a NeedsFloat when `find` finds the node it failed on and
    that node was made from a node of `exported` (the graph the quantizer annotates)."""
    chain: list[BaseException] = []
    cause: BaseException | None = exc
    while cause is not None and len(chain) < 8:
        chain.append(cause)
        cause = cause.__cause__ or cause.__context__
    text = "\n".join(str(c) for c in chain)
    pass_name = _FAILED_PASS.search(text)
    node = _FAILED_NODE.search(text)
    frame = re.search(r'Original traceback:\s*File "([^"]+)", line (\d+)', text)
    if not pass_name:
        return export_error("lowering", exc)
    root = chain[-1]
    where = f" at node {node.group(1)}" if node else ""
    line = f"{Path(frame.group(1)).name}:{frame.group(2)}" if frame else None
    if line:
        where += f" (from {line})"
    problem = (
        f"executorch's cortex_m pass {pass_name.group(1)} failed{where}: {type(root).__name__}: {first_line(root)}"
    )
    keep = line or "MODULE_PATH"
    hint = (
        f"leave that part in float on portable kernels with --keep-fp32 {keep} (the rest stays on CMSIS-NN); "
        "--debug shows the full trace"
    )
    failed = find(pass_name.group(1), node.group(1)) if find and node and exported is not None else None
    reason = f"executorch's cortex_m pass {pass_name.group(1)} failed on it: {type(root).__name__}: {first_line(root)}"
    island = None
    if exported is not None and failed is not None:
        island = island_of(failed, exported, reason)
    elif exported is not None and find and line:  # made and failed on in one pass: the user's line it came from
        island = island_at(line, exported, reason)
    return NeedsFloat(problem, hint, island) if island else ExportError(problem, hint)
