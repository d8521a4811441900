"""The plan cmx-gen's CMSIS-NN backend runs: its binary layout, one source of truth on the Python
side (kernels/backend/cmx_plan.h is the C side; tests/lower/test_delegate.py holds them equal).

A plan is little-endian int32 words, read in place from flash by the runtime, never copied:

    header   magic, version, the core it was made for, counts, work-memory size, offsets
    io       one int32 per delegate input, then per output: its offset in the working memory where
             the program places it there (schedule.py), else -1; only the ahead-of-time side reads
             it (the runtime reads inputs and writes outputs through their arguments); then one
             uint32 per input, then per output: its bytes, which the runtime checks every record
             against at init (cmx_plan_check.c) and each argument against when it runs
    layers   one record per layer: `op`, `size` (bytes of the record), `debug` (instruction id
             for profiling and tracing), then the op's fields; CMSIS-NN's own parameter structs
             (cmsis_nn_conv_params, cmsis_nn_dims, ...) are stored exactly as CMSIS-NN lays them
             out, so the runtime passes pointers into the plan instead of building them per call
    data     weights, biases, per-channel multipliers and shifts, 16-byte aligned

A tensor operand is an int32: >= 0 a byte offset into the subgraph's working memory (a planned
buffer the program passes as the delegate's last input); < 0 the delegate argument -1-x (inputs,
then outputs). A constant is a byte offset into the plan; -1 none.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from cmx_gen.lower.delegate import layer_kinds
from cmx_gen.lower.delegate.kernel_facts import define

# Every record's fields after op, size, debug (plan_fields.py), by layer kind.
from cmx_gen.lower.delegate.plan_fields import (
    FIELDS,
    GRU_GATES,
    LSTM_GATES,
)

MAGIC = 0x50584D43  # "CMXP"
VERSION = 8  # bump with every change of the layout below or of what a field means
CORE_BYTES = 16  # the core's canonical name (common/targets.py), NUL-padded
NONE = -1

# Layer kinds: the `op` word of each record (data/backend_layers.yaml, one record a kind).
OPS = {name: kind.code for name, kind in layer_kinds.kinds().items()}


def kernel_from(kind: str) -> str:
    """Whose code a layer kind runs: CMSIS-NN, cmx-gen or libc."""
    record = layer_kinds.kinds().get(kind)
    return record.whose if record else "CMSIS-NN"


def kernel_label(kind: str) -> str:
    """How the report and the profile name what a layer kind runs: `cmx_conv_row_s8 (cmx-gen)`."""
    record = layer_kinds.kinds().get(kind)
    return record.label if record else f"{kind} (CMSIS-NN)"


# A softmax of fewer elements runs arm_softmax_s8, not cmx_softmax_s8's table (the backend's choice,
# kernels/backend/cmx_plan_run.h; fit/latency.py prices the two apart).
SOFTMAX_TABLE_FROM = define("cmx_nn.h", "CMX_SOFTMAX_TABLE_FROM")


def on_softmax_table(kind: str, work: int) -> bool:
    """Whether a layer of `work` (a softmax's elements) runs cmx_softmax_s8's table, not arm_softmax_s8."""
    return kind == "softmax" and work >= SOFTMAX_TABLE_FROM


def layer_label(kind: str, work: int) -> str:
    """kernel_label for one layer of `work`: what that layer calls."""
    if kind == "softmax" and not on_softmax_table(kind, work):
        return "arm_softmax_s8 (CMSIS-NN)"
    return kernel_label(kind)


HEADER = (
    "magic",
    "version",
    "core",
    "n_layers",
    "n_inputs",
    "n_outputs",
    "work_bytes",
    "layers_offset",
    "data_offset",
    "plan_bytes",
)


@dataclass(frozen=True)
class Layer:
    """One layer of a plan: its kind, its fields by name, and the instruction id it reports as."""

    op: str
    fields: dict[str, int]
    debug: int = 0
    node: str = ""  # the graph node it runs (for the report; not serialized)

    def pack(self) -> bytes:
        names = FIELDS[self.op]
        missing = set(names) - set(self.fields)
        extra = set(self.fields) - set(names)
        if missing or extra:
            raise ValueError(f"{self.op} layer: missing {sorted(missing)}, unknown {sorted(extra)}")
        words = [self.fields[name] for name in names]
        size = 4 * (3 + len(words))
        return struct.pack(f"<3i{len(words)}i", OPS[self.op], size, self.debug, *words)


@dataclass(frozen=True)
class Plan:
    """A whole subgraph: its layers in order, its constants, and the working memory it needs."""

    core: str
    layers: tuple[Layer, ...]
    data: bytes  # constants, laid out as the layers' constant offsets say (offsets from `data_offset`)
    n_inputs: int
    n_outputs: int
    work_bytes: int
    io_offsets: tuple[int, ...] = ()  # each input's, then output's, offset in the working memory; -1 apart
    io_bytes: tuple[int, ...] = ()  # each input's, then output's, bytes

    def pack(self) -> bytes:
        """The plan's bytes; constants' offsets in the layers are relative to the data section and
        are rebased here onto the plan's start."""
        head_size = 4 * (len(HEADER) - 1) + CORE_BYTES
        count = self.n_inputs + self.n_outputs
        offsets = self.io_offsets or (NONE,) * count
        assert len(offsets) == count and len(self.io_bytes) == count
        io = struct.pack(f"<{count}i{count}I", *offsets, *self.io_bytes)
        layers_offset = head_size + len(io)
        body = b"".join(layer.pack() for layer in self.layers)
        data_offset = _align(layers_offset + len(body), 16)
        rebased = b"".join(_rebase(layer, data_offset).pack() for layer in self.layers)
        total = data_offset + len(self.data)
        core = self.core.encode()[: CORE_BYTES - 1].ljust(CORE_BYTES, b"\0")
        head = (
            struct.pack("<2I", MAGIC, VERSION)
            + core
            + struct.pack(
                "<7I",
                len(self.layers),
                self.n_inputs,
                self.n_outputs,
                self.work_bytes,
                layers_offset,
                data_offset,
                total,
            )
        )
        out = head + io + rebased
        return out + b"\0" * (data_offset - len(out)) + self.data


CONSTANT_FIELDS = frozenset(
    {"weight", "bias", "multipliers", "shifts", "kernel_sum", "constants", "gains", "biases", "table", "ranges"}
    | {"exp_table", "one_by_one_table"}  # softmax_s16's
    | {
        f"{gate}_{field}"
        for gate in LSTM_GATES + GRU_GATES
        for field in ("input_weights", "input_bias", "hidden_weights", "hidden_bias")
    }
)


def _rebase(layer: Layer, data_offset: int) -> Layer:
    fields = {
        name: (value + data_offset if name in CONSTANT_FIELDS and value != NONE else value)
        for name, value in layer.fields.items()
    }
    return Layer(layer.op, fields, layer.debug, layer.node)


def _align(n: int, to: int) -> int:
    return (n + to - 1) // to * to


def read_header(blob: bytes) -> dict[str, int | str]:
    """The header of a packed plan, by field name (the report and the tests read it)."""
    magic, version = struct.unpack_from("<2I", blob, 0)
    core = blob[8 : 8 + CORE_BYTES].rstrip(b"\0").decode()
    rest = struct.unpack_from("<7I", blob, 8 + CORE_BYTES)
    return dict(zip(HEADER, (magic, version, core, *rest)))


def read_io_offsets(blob: bytes) -> tuple[list[int], list[int]]:
    """Each delegate input's and output's offset in the working memory (-1: the program keeps it apart)."""
    head = read_header(blob)
    n_in, n_out = int(head["n_inputs"]), int(head["n_outputs"])
    offsets = list(struct.unpack_from(f"<{n_in + n_out}i", blob, 4 * (len(HEADER) - 1) + CORE_BYTES))
    return offsets[:n_in], offsets[n_in:]


def read_layers(blob: bytes) -> list[tuple[str, dict[str, int]]]:
    """(kind, fields incl. debug) of each layer of a packed plan, in order."""
    head = read_header(blob)
    kinds = {code: name for name, code in OPS.items()}
    at = int(head["layers_offset"])
    out = []
    for _ in range(int(head["n_layers"])):
        op, size, debug = struct.unpack_from("<3i", blob, at)
        names = FIELDS[kinds[op]]
        values = struct.unpack_from(f"<{len(names)}i", blob, at + 12)
        out.append((kinds[op], {"debug": debug, **dict(zip(names, values))}))
        at += size
    return out
