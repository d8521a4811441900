"""A model as a slot image (placement = "slot"): the blob the firmware checks before it runs it.

The layout is cmx/api/cmx_slot.h's (its C is the contract; tests/app/test_slot_check.py compiles it
on the host and reads what this module writes). The image holds the program, its reference I/O
for the firmware's self-check, the pools it needs and what it needs of the firmware, and a SHA-256
over all of it, so a slot written halfway, cut short or with a flipped bit is refused, never run.
For a slot with a weights area the program is split (`split_program`): its head stays in the image,
its segments (the weights) go to the area, their SHA-256 in the header.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass

from cmx_gen.common.errors import RenderError
from cmx_gen.lower.delegate import plan

MAGIC = 0x53584D43  # "CMXS"
FORMAT = 3  # 3: the kinds mask in two words (layer kinds 32 to 63)
MAX_IO = 8
MAX_PLANNED = 4
HASHED_FROM = 48  # magic, format, total_bytes, header_bytes, sha256
PTE_ALIGN = 16

_TENSOR = struct.Struct("<3Iififif")
_HEAD = struct.Struct("<4I32s")
_FIELDS = struct.Struct("<I16s8s32s6I4I4If2I")
_WEIGHTS = struct.Struct("<I32s")  # weights_bytes, weights_sha256: after the tensors
HEADER_BYTES = _HEAD.size + _FIELDS.size + 2 * MAX_IO * _TENSOR.size + _WEIGHTS.size
_EXTENDED_HEADER = struct.Struct("<4sIQQ")  # ExecuTorch's "eh00" at byte 8: length, program size, segment base


@dataclass(frozen=True)
class SlotTensor:
    """One reference tensor: its bytes as the program lays them out and how the check measures it."""

    data: bytes
    numel: int
    dtype: int  # ExecuTorch ScalarType
    scale: float = 0.0  # the check's error unit (0: the tensor's own)
    zero_point: int = 0
    io_scale: float = 0.0  # --io int8 quantization the caller applies (0: float I/O)
    io_zero_point: int = 0
    io_inv_scale: float = 0.0


@dataclass(frozen=True)
class SlotModel:
    """Everything a slot image holds, before it is laid out."""

    name: str
    core: str
    isa: str
    pte: bytes
    backend_kinds: tuple[str, ...]  # the plan layer kinds its programs use (plan.OPS names)
    method_pool_bytes: int
    temp_pool_bytes: int
    planned_sizes: tuple[int, ...]
    inputs: tuple[SlotTensor, ...]
    outputs: tuple[SlotTensor, ...]
    tolerance: float
    has_reference: bool
    reference_bundle: bool = False
    sequence: int = 1
    weights: bytes = b""  # the program's segments, kept in the slot's weights area (pte is then its head)


def _align(n: int, to: int) -> int:
    return (n + to - 1) // to * to


def _text(value: str, size: int, what: str) -> bytes:
    raw = value.encode()
    if len(raw) > size:
        raise RenderError(f"slot image: {what} {value!r} is longer than {size} bytes", f"use a shorter {what}")
    return raw.ljust(size, b"\0")


def kinds_mask(kinds: tuple[str, ...]) -> int:
    """Bit k for each plan layer kind k (cmx_plan.h's numbers): what the firmware must have compiled in."""
    mask = 0
    for kind in kinds:
        mask |= 1 << plan.OPS[kind]
    return mask


def split_program(pte: bytes) -> tuple[bytes, bytes]:
    """The program's head (its header and flatbuffer, up to its segment base) and its segments (the
    data its delegates carry: cmx-gen's plans and weights), from ExecuTorch's extended header."""
    magic, length, _program_size, segment_base = _EXTENDED_HEADER.unpack_from(pte, 8)
    if magic != b"eh00" or length < 24 or not 0 < segment_base <= len(pte):
        raise RenderError(
            "the program has no segments to keep apart from the slot (no ExecuTorch extended header)",
            "lower it again with this cmx-gen, or give the board's slots no weights area",
        )
    return pte[:segment_base], pte[segment_base:]


def _tensor_rows(model: SlotModel, body: bytearray) -> list[bytes]:
    """Each reference tensor's row of the header (MAX_IO inputs, then MAX_IO outputs), its data appended
    to `body` 4-byte aligned (offsets from the image's start)."""
    rows: list[bytes] = []
    for tensors in (model.inputs, model.outputs):
        for t in tensors:
            body += bytes(_align(len(body) + HEADER_BYTES, 4) - HEADER_BYTES - len(body))
            offset = HEADER_BYTES + len(body) if t.data else 0
            body += t.data
            row = (t.numel, t.dtype, t.scale, t.zero_point, t.io_scale, t.io_zero_point, t.io_inv_scale)
            rows.append(_TENSOR.pack(offset, len(t.data), *row))
        rows += [bytes(_TENSOR.size)] * (MAX_IO - len(tensors))
    return rows


def build(model: SlotModel) -> bytes:
    """The slot image: header, the program 16-byte aligned, then each reference tensor 4-byte aligned."""
    if len(model.inputs) > MAX_IO or len(model.outputs) > MAX_IO:
        raise RenderError(
            f"slot image: {len(model.inputs)} inputs and {len(model.outputs)} outputs, at most {MAX_IO} each",
            'keep placement = "linked" for this model',
        )
    if len(model.planned_sizes) > MAX_PLANNED:
        raise RenderError(
            f"slot image: {len(model.planned_sizes)} planned buffers, at most {MAX_PLANNED}",
            'keep placement = "linked" for this model',
        )
    pte_offset = _align(HEADER_BYTES, PTE_ALIGN)
    body = bytearray(pte_offset - HEADER_BYTES)
    body += model.pte
    rows = _tensor_rows(model, body)
    planned = list(model.planned_sizes) + [0] * (MAX_PLANNED - len(model.planned_sizes))
    kinds = kinds_mask(model.backend_kinds)
    fields = _FIELDS.pack(
        model.sequence,
        _text(model.core, 16, "core"),
        _text(model.isa, 8, "isa"),
        _text(model.name, 32, "model name"),
        plan.VERSION if kinds else 0,
        kinds & 0xFFFFFFFF,
        kinds >> 32,
        model.method_pool_bytes,
        model.temp_pool_bytes,
        len(model.planned_sizes),
        *planned,
        len(model.inputs),
        len(model.outputs),
        pte_offset,
        len(model.pte),
        model.tolerance,
        int(model.has_reference),
        int(model.reference_bundle),
    )
    weights = _WEIGHTS.pack(len(model.weights), hashlib.sha256(model.weights).digest() if model.weights else bytes(32))
    hashed = fields + b"".join(rows) + weights + bytes(body)
    total = HASHED_FROM + len(hashed)
    digest = hashlib.sha256(hashed).digest()
    return _HEAD.pack(MAGIC, FORMAT, total, HEADER_BYTES, digest) + hashed


@dataclass(frozen=True)
class SlotHeader:
    """What `cmx-gen model-image` and `run` print of an image: enough to tell two apart."""

    sequence: int
    total_bytes: int
    sha256: str
    name: str
    core: str


def read_header(image: bytes) -> SlotHeader:
    """The header of a slot image cmx-gen wrote (RenderError for anything else)."""
    if len(image) < HEADER_BYTES:
        raise RenderError("not a cmx-gen slot image: shorter than its header", "write it with cmx-gen model-image")
    magic, fmt, total, header_bytes, digest = _HEAD.unpack_from(image)
    if magic != MAGIC or fmt != FORMAT or header_bytes != HEADER_BYTES:
        raise RenderError("not a cmx-gen slot image of this version", "write it with this cmx-gen's model-image")
    fields = _FIELDS.unpack_from(image, _HEAD.size)
    return SlotHeader(
        sequence=fields[0],
        total_bytes=total,
        sha256=digest.hex(),
        name=fields[3].rstrip(b"\0").decode(),
        core=fields[1].rstrip(b"\0").decode(),
    )


def with_sequence(image: bytes, sequence: int) -> bytes:
    """The same image with another sequence number (newer: higher), hashed again."""
    read_header(image)
    if not 0 < sequence < 2**32:
        raise RenderError(f"sequence {sequence} is out of range", "give a number from 1 to 4294967295")
    hashed = bytearray(image[HASHED_FROM:])
    struct.pack_into("<I", hashed, 0, sequence)
    digest = hashlib.sha256(hashed).digest()
    return image[:16] + digest + bytes(hashed)
