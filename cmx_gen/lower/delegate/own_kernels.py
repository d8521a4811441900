"""When the plan runs one of cmx-gen's own kernels (kernels/nn/) instead of CMSIS-NN's, and how it
reads a layer for them (the layouts and sizes themselves are the kernels' C: kernel_numbers.py).

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

from cmx_gen.lower.delegate import kernel_numbers
from cmx_gen.lower.delegate.kernel_facts import define
from cmx_gen.lower.host_models.kernel_models import wrap_int32

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
# a 2-D layer's chunk, in ROW_SCRATCH_BUDGET_2D: each chunk widens its overlapping columns again (VWW's stem,
# 24 positions a chunk: -24 K cycles); a 1-D one of 32 took VWW's 8 -> 16 layer past its RAM peak (+224 B)
ROW_MAX_CHUNK_2D = 32
# A 1x1 layer whose positions run three at a time (cmx_conv_row_s8_triples): chunks of 6 positions where
# this much scratch holds them (VWW's 6 x 6 x 128 layers took chunks of 2 in 512 B).
# Not under `--memory min` (narrow), whose chunks stay in ROW_SCRATCH_BUDGET.
ROW_SCRATCH_BUDGET_TRIPLES = 4096
# Staged (stage_weights), a layer of at least this many output positions widens its int8 weights into
# its scratch at each call: its 2 x 2 blocks would read them from flash again for each of 16 or more
# position pairs. Fewer buy little for the RAM (twice the weights): from 8 on, VWW priced as on the
# NUCLEO-L4R5ZI took 18,662,292 cycles and 144 KB of RAM, its 3 x 3 layers' 64 KB of weights staged.
ROW_STAGE_MIN_POSITIONS = 32


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
    def row_bytes(self) -> int:
        """cmx_conv_row_s8_row_bytes: weight bytes per output channel."""
        return kernel_numbers.row_bytes(self)

    def chunk_bytes(self, chunk: int) -> int:
        """cmx_conv_row_s8_chunk_bytes: the widened chunk's bytes."""
        return kernel_numbers.row_chunk_bytes(self, chunk)

    def scratch_bytes(self, chunk: int) -> int:
        """cmx_conv_row_s8_scratch_bytes."""
        return kernel_numbers.row_scratch_bytes(self, chunk)

    def chunk(self, cmsis_scratch: int, narrow: bool = False) -> int:
        """Output positions per widened chunk: even, at least 2, as many as fit in CMSIS-NN's own
        scratch size or ROW_SCRATCH_BUDGET (a longer chunk only saves re-widening the overlap), or
        with staged weights ROW_SCRATCH_BUDGET_STAGED; a layer whose positions run three at a time
        (not `narrow`) 6 (or all its positions) where ROW_SCRATCH_BUDGET_TRIPLES holds them."""
        budget = max(cmsis_scratch, ROW_SCRATCH_BUDGET if self.rows == 1 else ROW_SCRATCH_BUDGET_2D)
        if self.wide == 2:
            budget = max(budget, ROW_SCRATCH_BUDGET_STAGED)
        most = min(ROW_MAX_CHUNK if self.rows == 1 else ROW_MAX_CHUNK_2D, self.positions + self.positions % 2)
        if not narrow and self.positions >= 3 and kernel_numbers.row_triples(self):
            n = min(most, 6)  # two triples: the least scratch (more positions a chunk saved ~nothing)
            if self.chunk_bytes(n) <= max(budget, ROW_SCRATCH_BUDGET_TRIPLES):
                return n
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


# columns of a row laid side by side with its block's other rows
FC_GROUP = {isa: define("cmx_nn_layout.h", f"CMX_FC_GROUP_{isa}") for isa in ("DSP", "MVE")}
# the input counts it takes: a multiple of this (Helium: any, its last group predicated)
FC_COLS = {isa: define("cmx_fully_connected_s8.c", f"CMX_FC_COLS_{isa}") for isa in ("DSP", "MVE")}


def fc_applies(in_features: int, filter_offset: int, isa: str) -> bool:
    """cmx_fully_connected_s8 takes symmetric weights over a multiple of FC_COLS inputs (DSP: four;
    Helium: any number)."""
    return isa in FC_GROUP and filter_offset == 0 and in_features % FC_COLS[isa] == 0


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
