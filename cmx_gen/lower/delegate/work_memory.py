"""Where each tensor that lives only inside a delegated subgraph goes in its working memory.

Each buffer lives from the layer that writes it to the last layer that reads it (a layer's
CMSIS-NN scratch only during that layer). Two placements are made and the smaller kept:

- layer by layer: largest first at the lowest address free over the buffer's whole life, as
  ExecuTorch's greedy planner does for the program's own tensors; a layer's input and output never
  share a byte;
- overlapped: in the order the layers write them, each output `lead` bytes below an input that dies
  at its layer where the kernel's walk allows it (overlap.py), else where it widens the span least.
  A chain of such layers walks down the memory; the whole is shifted to start at 0.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

ALIGN = 16
LOOKAHEADS = (0, 1, 2, 1 << 20)  # layers of a chain given room below its first buffer (overlapped)


@dataclass(frozen=True)
class Buffer:
    key: str
    nbytes: int
    first: int  # index of the layer that writes it
    last: int  # index of the last layer that reads it
    shares: tuple[str, ...] = ()  # inputs dying at `first` whose bytes it may reuse (overlap.py) ...
    lead: int = 0  # ... starting at least this many bytes below the input's start


@dataclass(frozen=True)
class WorkPlan:
    offsets: dict[str, int]
    nbytes: int  # the working memory's size: the highest end over all buffers
    layer_by_layer: int  # the size without any overlap (the same when nothing could share)
    shared: tuple[str, ...] = field(default=())  # buffers placed over their input's bytes


def _align_up(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


def _live_together(a: Buffer, b: Buffer) -> bool:
    return a.first <= b.last and b.first <= a.last


def layer_by_layer(buffers: list[Buffer]) -> dict[str, int]:
    placed: list[tuple[Buffer, int]] = []
    offsets: dict[str, int] = {}
    for buf in sorted(buffers, key=lambda b: (-b.nbytes, b.first, b.key)):
        if buf.nbytes == 0:
            offsets[buf.key] = 0
            continue
        busy = sorted((off, off + other.nbytes) for other, off in placed if _live_together(other, buf))
        offset = 0
        for start, end in busy:
            if offset + buf.nbytes <= start:
                break
            offset = max(offset, _align_up(end))
        placed.append((buf, offset))
        offsets[buf.key] = offset
    return offsets


def _writes_over(buf: Buffer, other: Buffer) -> bool:
    """`buf` is the output of the layer that reads `other` last, and may share its bytes (overlap.py)."""
    return other.key in buf.shares and buf.first == other.last


def _apart(buf: Buffer, offset: int, other: Buffer, at: int) -> bool:
    return offset >= at + other.nbytes or at >= offset + buf.nbytes


def _fits(buf: Buffer, offset: int, live: list[tuple[Buffer, int]]) -> bool:
    for other, at in live:
        if _writes_over(buf, other) and offset <= at - buf.lead:
            continue  # written behind the kernel's read front (overlap.py)
        if not _apart(buf, offset, other, at):
            return False
    return True


def overlapped(buffers: list[Buffer], downward: bool, lookahead: int) -> tuple[dict[str, int], tuple[str, ...]]:
    """Offsets (from 0) with outputs over their dying inputs, and the buffers placed so. Where two
    spots widen the span alike, the lower (downward) or the higher one is taken: a chain of shared
    layers walks down, so which leaves it room depends on the network. `lookahead` layers of the
    chain written over a buffer are given room below it (_drift): a long look helps chains of
    same-size layers, a short one chains whose layers grow their tensor; place() tries several."""
    placed: dict[str, tuple[Buffer, int]] = {}
    shared: list[str] = []
    empty: list[str] = []
    room = _drift(buffers, lookahead)
    for buf in sorted(buffers, key=lambda b: (b.first, b.key.endswith(":scratch"), -b.nbytes, b.key)):
        if buf.nbytes == 0:
            empty.append(buf.key)
            continue
        live = [(other, at) for other, at in placed.values() if _live_together(other, buf)]
        lo = min((at for _, at in placed.values()), default=0)
        hi = max((at + b.nbytes for b, at in placed.values()), default=0)
        chosen, over = _spot(buf, live, (lo, hi), room.get(buf.key, 0), downward)
        if chosen in over and any(not _apart(buf, chosen, other, at) for other, at in live):
            shared.append(buf.key)
        placed[buf.key] = (buf, chosen)
    base = min((at for _, at in placed.values()), default=0)
    offsets = {key: at - base for key, (_, at) in placed.items()}
    return {**offsets, **dict.fromkeys(empty, 0)}, tuple(shared)


def _spot(
    buf: Buffer, live: list[tuple[Buffer, int]], span: tuple[int, int], below: int, downward: bool
) -> tuple[int, set[int]]:
    """Where `buf` goes among what is `live` (the memory spans `span` so far), and the spots that
    write it over a dying input. A spot costs the span after it, counting the room `below` that the
    chain written over it will walk down into (below the spot if free now, else as if the span had
    to grow by it)."""
    lo, hi = span
    over = {
        at - _align_up(max(buf.lead, min(0, buf.nbytes - other.nbytes)))
        for other, at in live
        if _writes_over(buf, other)
    }
    spots = {
        lo,
        hi,
        *(at + b.nbytes for b, at in live),
        *(at + b.nbytes + below for b, at in live),
        *(at - buf.nbytes for _, at in live),
    }
    spots = {s - s % ALIGN for s in spots} | {_align_up(s) for s in spots} | over
    ahead = Buffer(buf.key, buf.nbytes + below, buf.first, buf.last, buf.shares, buf.lead - below)

    def cost(s: int) -> tuple[int, bool, bool, int]:
        free_below = _fits(ahead, s - below, live)
        grown = max(hi, s + buf.nbytes) - min(lo, s - below if free_below else s) + (0 if free_below else below)
        return grown, not free_below, s not in over, s if downward else -s

    return min((s for s in spots if _fits(buf, s, live)), key=cost), over


def _drift(buffers: list[Buffer], depth: int) -> dict[str, int]:
    """How far below each buffer the next `depth` outputs written over it will walk: the next
    layer's output shares it at its lead, that output's own next one at its lead, and so on."""
    written_over = {key: buf for buf in buffers for key in buf.shares}
    by_key = {buf.key: buf for buf in buffers}
    room: dict[str, int] = {}
    for buf in buffers:
        walk, at = 0, buf
        for _ in range(depth):
            nxt = written_over.get(at.key)
            if nxt is None or not _writes_over(nxt, by_key[at.key]):
                break
            walk, at = walk + _align_up(nxt.lead), nxt
            room[buf.key] = max(room.get(buf.key, 0), walk)
    return room


def _top(buffers: list[Buffer], offsets: dict[str, int]) -> int:
    return _align_up(max((offsets[b.key] + b.nbytes for b in buffers), default=0))


def place(buffers: list[Buffer], overlap: bool = True) -> WorkPlan:
    """The smaller of the two placements (overlap=False: layer by layer only)."""
    plain = layer_by_layer(buffers)
    plain_bytes = _top(buffers, plain)
    best = WorkPlan(plain, plain_bytes, plain_bytes)
    if overlap and any(b.shares for b in buffers):
        for downward, lookahead in itertools.product((True, False), LOOKAHEADS):
            offsets, shared = overlapped(buffers, downward, lookahead)
            if _top(buffers, offsets) < best.nbytes:
                best = WorkPlan(offsets, _top(buffers, offsets), plain_bytes, shared)
    return best
