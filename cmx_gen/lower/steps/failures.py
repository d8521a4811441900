"""A failed cortex_m pass, said in one line: the pass, the node and the user's line it came from,
and what works instead (leaving that line in float)."""

from __future__ import annotations

import re
from pathlib import Path

from cmx_gen.common.errors import ExportError
from cmx_gen.model.export import export_error, first_line

_FAILED_PASS = re.compile(r"running the '(\w+)' pass")
_FAILED_NODE = re.compile(r"While executing %(\w+)")


def lowering_error(exc: Exception) -> ExportError:
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
    return ExportError(
        f"executorch's cortex_m pass {pass_name.group(1)} failed{where}: {type(root).__name__}: {first_line(root)}",
        (
            f"leave that part in float on portable kernels with --keep-fp32 {line}"
            if line
            else "leave that part in float on portable kernels with --keep-fp32 MODULE_PATH"
        )
        + " (the rest stays on CMSIS-NN); --debug shows the full trace",
    )
