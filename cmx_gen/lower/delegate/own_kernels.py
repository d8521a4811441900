"""When the plan runs one of cmx-gen's own kernels (kernels/nn/) instead of CMSIS-NN's, and the
data layouts those kernels read, made here once (the C side's cmx_conv_row_s8_weights and
cmx_fully_connected_s8_weights do the same for kernels/tests/; host_run.py reads them back).

cmx_conv_row_s8 replaces arm_convolve_wrapper_s8 on the DSP cores (M4, M7, M33) for a convolution
whose output positions each read runs of NHWC input a fixed distance apart: a 1-D convolution
(height 1, one group, any stride and padding; dilated where dilation * channels is even), a 1x1
convolution at stride 1 without padding, or a 2-D one (one group, dilation 1), whose chunk the
kernel widens column by column so that a field is one run again. Measured by kernels/tests on QEMU
M4: 1.9-2.1x fewer instructions on 1-D layers of 8-16 channels, 1.6x on a dilated TCN layer, 1.46x
on DS-CNN's 64x64 pointwise layers (1.70x with int16 weights), 1.6-2.3x on 3x3 layers and DS-CNN's
10x4 first layer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cmx_gen.lower.delegate.kernel_facts import define
from cmx_gen.lower.host_models.kernel_models import wrap_int32

ROW_ORDER = [0, 2, 1, 3]  # each group of four weights stored (w0, w2, w1, w3): SXTB16 pairs
ROW_SCRATCH_BUDGET = 512  # bytes a widened chunk may take where CMSIS-NN's own scratch is smaller
ROW_SCRATCH_BUDGET_2D = 1024  # a 2-D position widens every kernel row: twice the room keeps chunks of 4-8
# staged weights: a chunk may take this much beside them, so the widening and the blocks' code alternate
# less often (a chunk of 2 positions of 64 channels ran ~1 KB of code a position pair, more than a flash
# accelerator's instruction cache holds)
ROW_SCRATCH_BUDGET_STAGED = 2048
# int16 weights (twice the flash, 14 instead of 19 instructions per 16 MACs) for a layer with at least
# this many output positions: each extra byte of flash then saves ~30 instructions an inference. With
# `--memory fast` also where ROW_WIDE_MID_POSITIONS reuse at most ROW_WIDE_MID_BYTES of int8 weights
# (each byte ~11 instructions, the copy at most 16 KB: a MobileNet-0.25's 6 x 6 layers, VWW on the M4
# -0.56 M instructions for +88 KB, which takes its flash past TFLM's). ResNet's 36-KB 8 x 8 layers and
# a MobileNet's 3 x 3 ones (32-64 KB) stay int8.
ROW_WIDE_MIN_POSITIONS = 100
ROW_WIDE_MID_POSITIONS = 36
ROW_WIDE_MID_BYTES = 16384
ROW_MAX_CHUNK = 16
# Staged (stage_weights), a layer of at least this many output positions widens its int8 weights into
# its scratch at each call: its 2 x 2 blocks would read them from flash again for each of 16 or more
# position pairs. Fewer buy little for the RAM (twice the weights): from 8 on, VWW priced as on the
# NUCLEO-L4R5ZI took 18,662,292 cycles and 144 KB of RAM, its 3 x 3 layers' 64 KB of weights staged.
ROW_STAGE_MIN_POSITIONS = 32
ROW_SLACK = define("cmx_conv_row_s8.c", "CMX_SLACK")  # int16 values past a chunk a zero-padded weight row may read


@dataclass(frozen=True)
class RowGeometry:
    """A convolution read as rows of positions (cmx_conv_row_params without the offsets): one row for
    a 1-D or 1x1 convolution, `out_rows` of them for a 2-D one with `rows` kernel rows."""

    positions: int
    in_positions: int
    in_ch: int
    out_ch: int
    kernel: int
    stride: int
    pad: int
    dilation: int = 1
    rows: int = 1
    out_rows: int = 1
    in_rows: int = 1
    row_stride: int = 1
    row_pad: int = 0
    wide: int = 0  # 1: int16 weights; 2: int8 ones widened into the scratch at each call (cmx_conv_row_params.wide)

    @property
    def cols(self) -> int:
        return self.rows * self.kernel * self.in_ch

    @property
    def column(self) -> int:
        """cmx_conv_row_s8_column: a widened column's values, rows * in_ch and a zero more where that and
        the stride are odd on a 2-D layer (every column then on a word)."""
        values = self.rows * self.in_ch
        return values + int(self.rows > 1 and values % 2 == 1 and self.stride % 2 == 1)

    @property
    def field(self) -> int:
        """The values an output's field spans in the widened chunk (cols, with each column's zero)."""
        return self.kernel * self.column if self.runs == 1 else self.cols

    @property
    def weight_dtype(self) -> np.dtype[Any]:
        """What a weight is stored as in the plan: int16 when wide 1 (little-endian, as the core reads
        it), else int8 (wide 2: the kernel widens them into its scratch)."""
        return np.dtype("<i2") if self.wide == 1 else np.dtype(np.int8)

    @property
    def runs(self) -> int:
        """Runs of contiguous widened input per output position: one, or one per tap when dilated."""
        return self.kernel if self.dilation > 1 and self.kernel > 1 else 1

    @property
    def row_bytes(self) -> int:
        """cmx_conv_row_s8_row_bytes: each run's values padded to four."""
        return self.runs * ((self.field // self.runs + 3) // 4 * 4)

    def chunk_bytes(self, chunk: int) -> int:
        """The widened chunk's bytes."""
        span = (chunk - 1) * self.stride + (self.kernel - 1) * self.dilation + 1
        return (span * self.column + ROW_SLACK) * 2

    def scratch_bytes(self, chunk: int) -> int:
        """cmx_conv_row_s8_scratch_bytes: the chunk; wide 2, from the next word, the weights as int16
        and each channel's bias, multiplier and shift."""
        if self.wide != 2:
            return self.chunk_bytes(chunk)
        return (self.chunk_bytes(chunk) + 3) // 4 * 4 + self.out_ch * (self.row_bytes * 2 + 12)

    def chunk(self, cmsis_scratch: int) -> int:
        """Output positions per widened chunk: even, at least 2, as many as fit in CMSIS-NN's own
        scratch size or ROW_SCRATCH_BUDGET (a longer chunk only saves re-widening the overlap), or
        with staged weights ROW_SCRATCH_BUDGET_STAGED."""
        budget = max(cmsis_scratch, ROW_SCRATCH_BUDGET if self.rows == 1 else ROW_SCRATCH_BUDGET_2D)
        if self.wide == 2:
            budget = max(budget, ROW_SCRATCH_BUDGET_STAGED)
        most = min(ROW_MAX_CHUNK, self.positions + self.positions % 2)
        best = 2
        for n in range(2, most + 1, 2):
            if self.chunk_bytes(n) <= budget:
                best = n
        return best


def row_geometry(
    x: Any,
    weight: Any,
    out: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    narrow: bool = False,
    more: bool = False,
    staged: bool = False,
) -> RowGeometry | None:
    """The row reading of a cortex_m::quantized_conv2d (logical NCHW input/output, OHWI weight
    values), or None when its fields are not runs of the input: a 1x1 convolution reads a batch as
    one row of N * H * W positions; a 1-D or 2-D one pads each image's edges, so only a batch of one.
    `narrow`: int8 weights however many positions (no second copy of them in flash); `more`: int16
    weights for the mid-sized layers too (ROW_WIDE_MID_*); `staged`: int8 weights the kernel widens
    into its scratch at each call (read from flash once a call) for every layer of at least
    ROW_STAGE_MIN_POSITIONS positions, int16 copies for none."""
    n, c, h, w = (int(v) for v in x.shape)
    oc, kh, kw, kc = (int(v) for v in weight.shape)
    _, _, oh, ow = (int(v) for v in out.shape)
    if c != kc:
        return None
    d = int(dilation[1])
    positions, weight_bytes = n * oh * ow, oc * kh * kw * kc
    reuse = positions >= ROW_WIDE_MIN_POSITIONS or (
        more and positions >= ROW_WIDE_MID_POSITIONS and weight_bytes <= ROW_WIDE_MID_BYTES
    )
    wide = 0
    if d == 1 and not narrow:
        wide = (2 if positions >= ROW_STAGE_MIN_POSITIONS else 0) if staged else int(reuse)
    if n == 1 and h == 1 and kh == 1 and padding[0] == 0 and oh == 1 and (d == 1 or (d * c) % 2 == 0):
        return RowGeometry(ow, w, c, oc, kw, int(stride[1]), int(padding[1]), d, wide=wide)
    if kh == kw == 1 and list(stride) == [1, 1] and list(padding) == [0, 0]:  # every image of a batch too
        return RowGeometry(n * oh * ow, n * h * w, c, oc, 1, 1, 0, wide=wide)
    if n == 1 and list(dilation) == [1, 1]:
        return RowGeometry(
            ow, w, c, oc, kw, int(stride[1]), int(padding[1]), 1, kh, oh, h, int(stride[0]), int(padding[0]), wide
        )
    return None


def _field_order(geometry: RowGeometry) -> NDArray[Any]:
    """For each value of a widened field, its index in a CMSIS-NN filter row [rows][kernel][in_ch]:
    cmx_conv_row_s8 widens a 2-D chunk column by column (kernel column, kernel row, channel)."""
    index = np.arange(geometry.cols).reshape(geometry.rows, geometry.kernel, geometry.in_ch)
    return index.transpose(1, 0, 2).reshape(-1)


def row_weights(filter_ohwi: NDArray[Any], geometry: RowGeometry) -> bytes:
    """A CMSIS-NN filter [out_ch][rows * kernel * in_ch] as cmx_conv_row_s8 reads it: the field in
    widened order, each run (the field, or each tap's channels when dilated) padded with zeros to
    four, groups of four in ROW_ORDER (wide: int16 values in order), the rows of each channel pair
    interleaved a group at a time (one LDRD reads both), an odd last row on its own."""
    oc, runs, row_bytes = filter_ohwi.shape[0], geometry.runs, geometry.row_bytes
    dtype = geometry.weight_dtype
    ordered = filter_ohwi.reshape(oc, -1)[:, _field_order(geometry)]
    if geometry.field != geometry.cols:  # each column's zero (cmx_conv_row_s8_column)
        columns = ordered.reshape(oc, geometry.kernel, -1)
        ordered = np.pad(columns, ((0, 0), (0, 0), (0, geometry.column - columns.shape[2]))).reshape(oc, -1)
    flat = ordered.reshape(oc, runs, -1).astype(dtype)
    padded = np.zeros((oc, runs, row_bytes // runs), dtype=dtype)
    padded[:, :, : flat.shape[2]] = flat
    grouped = padded.reshape(oc, row_bytes // 4, 4)
    if geometry.wide != 1:
        grouped = grouped[:, :, ROW_ORDER]
    pairs = oc // 2
    interleaved = grouped[: 2 * pairs].reshape(pairs, 2, row_bytes // 4, 4).transpose(0, 2, 1, 3)
    return np.ascontiguousarray(interleaved).tobytes() + grouped[2 * pairs :].tobytes()


def row_filter(blob: bytes, geometry: RowGeometry) -> NDArray[Any]:
    """row_weights read back: the CMSIS-NN filter [out_ch][rows * kernel * in_ch]."""
    out_ch, row_bytes, runs = geometry.out_ch, geometry.row_bytes, geometry.runs
    groups, pairs = row_bytes // 4, out_ch // 2
    data = np.frombuffer(blob, dtype=geometry.weight_dtype, count=out_ch * row_bytes)
    paired = data[: pairs * 2 * row_bytes].reshape(pairs, groups, 2, 4).transpose(0, 2, 1, 3)
    grouped = np.concatenate(
        [paired.reshape(2 * pairs, groups, 4), data[pairs * 2 * row_bytes :].reshape(out_ch - 2 * pairs, groups, 4)]
    )
    if geometry.wide != 1:
        grouped = grouped[:, :, ROW_ORDER]  # ROW_ORDER is its own inverse
    padded = grouped.reshape(out_ch, runs, row_bytes // runs)
    widened = padded[:, :, : geometry.field // runs].reshape(out_ch, geometry.field)
    if geometry.field != geometry.cols:
        widened = widened.reshape(out_ch, geometry.kernel, geometry.column)[:, :, : geometry.rows * geometry.in_ch]
        widened = widened.reshape(out_ch, geometry.cols)
    filt = np.empty((out_ch, geometry.cols), dtype=np.int8)
    filt[:, _field_order(geometry)] = widened
    return filt


# columns of a row laid side by side with its block's other rows
FC_GROUP = {isa: define("cmx_nn.h", f"CMX_FC_GROUP_{isa}") for isa in ("DSP", "MVE")}
# the input counts it takes: a multiple of this (Helium: any, its last group predicated)
FC_COLS = {isa: define("cmx_fully_connected_s8.c", f"CMX_FC_COLS_{isa}") for isa in ("DSP", "MVE")}


def fc_applies(in_features: int, filter_offset: int, isa: str) -> bool:
    """cmx_fully_connected_s8 takes symmetric weights over a multiple of FC_COLS inputs (DSP: four;
    Helium: any number)."""
    return isa in FC_GROUP and filter_offset == 0 and in_features % FC_COLS[isa] == 0


def _fc_width(cols: int, isa: str) -> int:
    """A row's columns in cmx_fully_connected_s8's layout: cols rounded up to FC_GROUP[isa]."""
    return -(-cols // FC_GROUP[isa]) * FC_GROUP[isa]


def fc_weights(filter_rc: NDArray[Any], isa: str) -> bytes:
    """A fully connected filter [rows][cols] as cmx_fully_connected_s8 reads it on `isa`: each row
    padded with zeros to a multiple of G = FC_GROUP columns, rows in blocks of four, each G columns of
    a block's rows side by side (one pointer feeds the block), the last rows % 4 rows as they are."""
    group = FC_GROUP[isa]
    rows, cols = filter_rc.shape
    padded = np.zeros((rows, _fc_width(cols, isa)), dtype=np.int8)
    padded[:, :cols] = filter_rc
    blocks = rows // 4
    head = padded[: blocks * 4].reshape(blocks, 4, padded.shape[1] // group, group).transpose(0, 2, 1, 3)
    return np.ascontiguousarray(head).tobytes() + padded[blocks * 4 :].tobytes()


def fc_filter(blob: bytes, rows: int, cols: int, isa: str) -> NDArray[Any]:
    """fc_weights read back: the filter [rows][cols]."""
    group = FC_GROUP[isa]
    width = _fc_width(cols, isa)
    blocks = rows // 4
    data = np.frombuffer(blob, dtype=np.int8, count=rows * width)
    head = data[: blocks * 4 * width].reshape(blocks, width // group, 4, group).transpose(0, 2, 1, 3)
    padded = np.concatenate([head.reshape(blocks * 4, width), data[blocks * 4 * width :].reshape(-1, width)])
    result: NDArray[Any] = padded[:, :cols]
    return result


S4_GROUP = 8  # cmx_fully_connected_s4: columns a word (CMX_FC_S4_GROUP), in blocks of four rows


def fc_s4_weights(values_rc: NDArray[Any]) -> bytes:
    """4-bit weights [rows][cols] (values in [-8, 7]) as cmx_fully_connected_s4 reads them: each value
    plus 8 in a nibble, each row's columns 8 a word (byte k: column k low, column 4 + k high; missing
    columns 8), rows in blocks of four with their words side by side, the last rows % 4 rows alone."""
    rows, cols = values_rc.shape
    groups = -(-cols // S4_GROUP)
    u = np.full((rows, groups * S4_GROUP), 8, dtype=np.uint8)
    u[:, :cols] = (values_rc.astype(np.int16) + 8).astype(np.uint8)
    u = u.reshape(rows, groups, 2, 4)  # [row][group][low or high half][byte]
    words = (u[:, :, 0, :] | (u[:, :, 1, :] << 4)).astype(np.uint8)  # [row][group][4 bytes]
    blocks = rows // 4
    head = words[: blocks * 4].reshape(blocks, 4, groups, 4).transpose(0, 2, 1, 3)
    return np.ascontiguousarray(head).tobytes() + words[blocks * 4 :].tobytes()


def fc_s4_filter(blob: bytes, rows: int, cols: int) -> NDArray[Any]:
    """fc_s4_weights read back: the values [rows][cols] in [-8, 7]."""
    groups = -(-cols // S4_GROUP)
    data = np.frombuffer(blob, dtype=np.uint8, count=rows * groups * 4)
    blocks = rows // 4
    head = data[: blocks * 16 * groups].reshape(blocks, groups, 4, 4).transpose(0, 2, 1, 3).reshape(-1, groups, 4)
    words = np.concatenate([head, data[blocks * 16 * groups :].reshape(-1, groups, 4)])
    u = np.stack([words & 0x0F, words >> 4], axis=2).reshape(rows, groups * S4_GROUP)
    result: NDArray[Any] = (u[:, :cols].astype(np.int16) - 8).astype(np.int8)
    return result


def kernel_sums(filter_rc: NDArray[Any], bias: NDArray[Any] | None, input_offset: int) -> NDArray[Any]:
    """Per row, bias + input offset x the row's sum, as int32 with its wraparound (CMSIS-NN's
    arm_vector_sum_s8): where cmx_conv_helium_s8's accumulators start."""
    sums = filter_rc.astype(np.int64).sum(axis=1) * int(input_offset)
    if bias is not None:
        sums = sums + bias.astype(np.int64)
    wrapped: NDArray[Any] = wrap_int32(sums).astype("<i4")
    return wrapped


def bias_from_sums(sums: NDArray[Any], filter_rc: NDArray[Any], input_offset: int) -> NDArray[Any]:
    """kernel_sums read back: the bias (zeros where the layer had none: the same outputs)."""
    bias = sums.astype(np.int64) - filter_rc.astype(np.int64).sum(axis=1) * int(input_offset)
    wrapped: NDArray[Any] = wrap_int32(bias).astype(np.int32)
    return wrapped


def helium_constants(sums: NDArray[Any], mults: NDArray[Any], shifts: NDArray[Any]) -> bytes:
    """The channel constants as cmx_conv_helium_s8 reads them (cmx_conv_helium_s8_constants): per
    block of four channels four kernel sums, four multipliers, four shifts; then each of the last
    rows % 4 channels' sum, multiplier and shift. One pointer walks them."""
    table = np.stack([np.asarray(v, dtype="<i4") for v in (sums, mults, shifts)])  # [3][rows]
    blocks = table.shape[1] // 4
    head = table[:, : blocks * 4].reshape(3, blocks, 4).transpose(1, 0, 2)
    return np.ascontiguousarray(head).tobytes() + np.ascontiguousarray(table[:, blocks * 4 :].T).tobytes()


def helium_constants_read(blob: bytes, rows: int) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any]]:
    """helium_constants read back: (sums, multipliers, shifts)."""
    words = np.frombuffer(blob, dtype="<i4", count=3 * rows)
    blocks = rows // 4
    head = words[: 12 * blocks].reshape(blocks, 3, 4).transpose(1, 0, 2).reshape(3, 4 * blocks)
    table = np.concatenate([head, words[12 * blocks :].reshape(-1, 3).T], axis=1)
    return table[0].copy(), table[1].copy(), table[2].copy()
