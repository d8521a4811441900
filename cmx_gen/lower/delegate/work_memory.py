"""Where each tensor that lives only inside a delegated subgraph goes in its working memory.

Each buffer lives from the layer that writes it to the last layer that reads it (a layer's
CMSIS-NN scratch only during that layer). Offsets are assigned largest first at the lowest
address free over the buffer's whole life, as ExecuTorch's greedy planner does for the program's
own tensors; a layer's input and output are both live at that layer, so they never overlap.
"""

from __future__ import annotations

from dataclasses import dataclass

ALIGN = 16


@dataclass(frozen=True)
class Buffer:
    key: str
    nbytes: int
    first: int  # index of the layer that writes it
    last: int  # index of the last layer that reads it


@dataclass(frozen=True)
class WorkPlan:
    offsets: dict[str, int]
    nbytes: int  # the working memory's size: the highest end over all buffers


def place(buffers: list[Buffer]) -> WorkPlan:
    placed: list[tuple[Buffer, int]] = []
    offsets: dict[str, int] = {}
    for buf in sorted(buffers, key=lambda b: (-b.nbytes, b.first, b.key)):
        if buf.nbytes == 0:
            offsets[buf.key] = 0
            continue
        busy = sorted((off, off + other.nbytes) for other, off in placed
                      if other.first <= buf.last and buf.first <= other.last)
        offset = 0
        for start, end in busy:
            if offset + buf.nbytes <= start:
                break
            offset = max(offset, (end + ALIGN - 1) // ALIGN * ALIGN)
        placed.append((buf, offset))
        offsets[buf.key] = offset
    top = max((off + buf.nbytes for buf, off in placed), default=0)
    return WorkPlan(offsets=offsets, nbytes=(top + ALIGN - 1) // ALIGN * ALIGN)
