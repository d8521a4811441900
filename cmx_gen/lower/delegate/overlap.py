"""How far below its input a layer's output must start for the two to share bytes, bit-exact.

vMCU's partial overlap (MLSys 2024), for the kernels the backend calls: a kernel walks its output
positions (pixels of an NHWC image, rows, elements) in order, in blocks, and writes position p's
bytes at out + p * out_bytes. A write may land on input bytes no later read needs. Two ways of
reading, read off each kernel's loops (CMSIS-NN dbf45dbf, kernels/nn/):

- copy-in: a block's whole input is copied to scratch before any of its outputs is written
  (im2col in arm_convolve_s8, cmx_conv_row_s8's widened chunks);
- direct: a block's outputs are written while its inputs are still being read.

So if the output starts `lead` bytes below the input, every write is below every input byte still
to be read. `lead` is the largest, over the blocks, of (the block's last write end) - (the first input
byte read from then on: by later blocks for copy-in, by this block for direct); it may be negative
(a strided layer's output may start inside its input). A kernel that walks the channels in an
outer loop (CMSIS-NN's DSP matrix multiply, grouped convolutions) is one block: its output lies
wholly below its input, as if disjoint but for the placement.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from cmx_gen.lower.delegate import own_layers
from cmx_gen.lower.delegate.kernel_choice import (
    DEPTHWISE_BAND,
    DEPTHWISE_STEP,
    HELIUM_CHANNELS,
    conv_kind,
    depthwise_band,
    depthwise_kind,
    depthwise_plane_bytes,
    node_val,
    row_plan,
)
from cmx_gen.lower.delegate.own_kernels import RowGeometry
from cmx_gen.lower.fx_nodes import fx_args, op_name

CH_IN_BLOCK_MVE = 124  # arm_depthwise_conv_s8_opt's channel block with MVE: more channels, channel-outer
MVE_ROWS = 4  # arm_nn_mat_mult_nt_t_s8 (MVE) and arm_convolve_s8 (MVE) take four positions at a time
DSP_COLUMNS = 2  # arm_convolve_s8 (DSP) fills two im2col columns before it multiplies
ELEMENT_BLOCK = 16  # arm_elementwise_add_s8 / _mul_s8: four (DSP) or sixteen (MVE) elements at a time


@dataclass(frozen=True)
class Walk:
    """A kernel's walk over its output: `blocks` of positions in the order written, each position
    `out_bytes` wide; `first_read[p]` the first input byte any position >= p reads. `step`: a
    depthwise kernel that reads and writes a position a few channels at a time (a step reads only
    its own channels of the field): the bytes each step writes; 0, the position's whole output."""

    blocks: tuple[tuple[int, int], ...]
    out_bytes: int
    first_read: tuple[int, ...]
    copy_in: bool
    step: int = 0

    def lead(self) -> int:
        worst = None
        for start, end in self.blocks:
            if self.copy_in and end >= len(self.first_read):
                continue  # the last block read all it needs before writing
            read_from = self.first_read[end] if self.copy_in else self.first_read[start]
            written = (end - 1) * self.out_bytes + (self.step or self.out_bytes)
            worst = written - read_from if worst is None else max(worst, written - read_from)
        return worst if worst is not None else -(1 << 30)


def flat_blocks(positions: int, block: int) -> tuple[tuple[int, int], ...]:
    return tuple((s, min(s + block, positions)) for s in range(0, positions, block))


def row_blocks(rows: int, width: int, block: int) -> tuple[tuple[int, int], ...]:
    return tuple(
        (r * width + s, r * width + min(s + block, width)) for r in range(rows) for s in range(0, width, block)
    )


def band_blocks(n: int, oh: int, ow: int, band: int = DEPTHWISE_BAND) -> tuple[tuple[int, int], ...]:
    """cmx_depthwise_3x3_s8's planar and grouped paths: bands of `band` output rows of each image
    (kernel_choice.depthwise_band), a band's every channel written while later channels' input rows
    are still to be read."""
    return tuple(((b * oh + y) * ow, (b * oh + min(y + band, oh)) * ow) for b in range(n) for y in range(0, oh, band))


def conv_row_blocks(geometry: RowGeometry, chunk: int) -> tuple[tuple[int, int], ...]:
    """cmx_conv_row_s8's blocks, as its loop takes them: each output row's positions `chunk` at a
    time. A 1x1 layer is one row of N * H * W positions (own_kernels.row_geometry), so its chunks
    run across the image's rows: per-image-row blocks would undercount how far its writes lead."""
    return row_blocks(geometry.out_rows, geometry.positions, chunk)


def image_reads(x_shape: Any, out_shape: Any, stride: Any, padding: Any) -> tuple[int, ...]:
    """first_read of a convolution or pooling window walking an NHWC image (logical NCHW shapes)
    in raster order."""
    _, c, h, w = (int(s) for s in x_shape)
    n, _, oh, ow = (int(s) for s in out_shape)
    reads = []
    for b in range(n):
        for oy in range(oh):
            y = min(max(oy * int(stride[0]) - int(padding[0]), 0), h - 1)
            for ox in range(ow):
                xx = min(max(ox * int(stride[1]) - int(padding[1]), 0), w - 1)
                reads.append(((b * h + y) * w + xx) * c)
    # the first byte any position >= p reads: where padding clamps a window to the image's first
    # row or column, a later position reads from lower than an earlier one (3x3, padding 1: output
    # rows 0 and 1 both start at input row 0)
    for p in range(len(reads) - 2, -1, -1):
        reads[p] = min(reads[p], reads[p + 1])
    return tuple(reads)


def _whole(out: Any) -> Walk:
    return Walk(((0, 1),), int(out.numel()) * out.element_size(), (0,), copy_in=False)


def _conv_walk(node: torch.fx.Node, isa: str) -> Walk:
    x, weight, _, stride, padding, dilation = fx_args(node)[:6]
    xv, wv, out = node_val(x), node_val(weight), node_val(node)
    n, oc, oh, ow = (int(s) for s in out.shape)
    reads = image_reads(xv.shape, out.shape, stride, padding)
    kind = conv_kind(node, isa)
    if kind == "conv_s4":  # CMSIS-NN's s4 paths: not traced here
        return _whole(out)
    if kind == "conv_row":
        return Walk(conv_row_blocks(*row_plan(node)), oc, reads, copy_in=True)
    if kind == "conv_helium":  # cmx_conv_helium_s8: a position at a time, a field inside the input read in place
        return Walk(flat_blocks(n * oh * ow, 1), oc, reads, copy_in=False)
    c, kc = int(xv.shape[1]), int(wv.shape[3])
    kh, kw = int(wv.shape[1]), int(wv.shape[2])
    if c != kc:  # grouped: arm_convolve_s8 walks the groups outermost
        return _whole(out)
    if kind == "conv" and kh == kw == 1 and list(padding) == [0, 0] and list(dilation) == [1, 1]:
        if isa != "MVE":  # arm_nn_mat_mult_nt_t_s8 without MVE: output channel pairs outermost
            return _whole(out) if list(stride) == [1, 1] else Walk(row_blocks(n * oh, ow, ow), oc, reads, False)
        blocks = flat_blocks(n * oh * ow, MVE_ROWS) if list(stride) == [1, 1] else row_blocks(n * oh, ow, MVE_ROWS)
        return Walk(blocks, oc, reads, copy_in=False)
    if kind == "conv" and int(xv.shape[2]) == 1 and kh == 1:  # arm_convolve_1_x_n_s8: sections, not traced here
        return _whole(out)
    return Walk(flat_blocks(n * oh * ow, MVE_ROWS if isa == "MVE" else DSP_COLUMNS), oc, reads, copy_in=True)


def _depthwise_walk(node: torch.fx.Node, isa: str) -> Walk:
    x, _, _, stride, padding, dilation, ch_mult = fx_args(node)[:7]
    xv, out = node_val(x), node_val(node)
    n, oc, oh, ow = (int(s) for s in out.shape)
    reads = image_reads(xv.shape, out.shape, stride, padding)
    if depthwise_kind(node, isa) == "depthwise_s4":  # CMSIS-NN's s4 paths: not traced here
        return _whole(out)
    if depthwise_plane_bytes(node, isa):  # its planar or grouped path: a band's every channel, read as written
        return Walk(band_blocks(n, oh, ow, depthwise_band(node)), oc, reads, copy_in=False)
    if depthwise_kind(node, isa) == "depthwise_3x3":  # cmx_depthwise_3x3_s8: four (Helium: eight) channels a step
        step = HELIUM_CHANNELS if isa == "MVE" and oc >= HELIUM_CHANNELS else DEPTHWISE_STEP
        return Walk(flat_blocks(n * oh * ow, 1), oc, reads, copy_in=False, step=step)
    c = int(xv.shape[1])
    if isa == "MVE" and c == 1 and oc > 8:  # arm_depthwise_conv_to_conv_s8
        return _whole(out)
    if isa == "MVE" and int(ch_mult) == 1 and n == 1 and list(dilation) == [1, 1]:  # arm_depthwise_conv_s8_opt
        return Walk(flat_blocks(oh * ow, MVE_ROWS), oc, reads, copy_in=False) if c <= CH_IN_BLOCK_MVE else _whole(out)
    return Walk(flat_blocks(n * oh * ow, 1), oc, reads, copy_in=False)  # 3x3, opt (DSP) and generic: pixel by pixel


def _pool_walk(node: torch.fx.Node) -> Walk:
    x, _, stride, padding = fx_args(node)[:4]
    xv, out = node_val(x), node_val(node)
    n, c, oh, ow = (int(s) for s in out.shape)
    return Walk(flat_blocks(n * oh * ow, 1), c, image_reads(xv.shape, out.shape, stride, padding), copy_in=False)


def _elementwise_walk(node: torch.fx.Node) -> Walk:
    count = int(node_val(node).numel())
    return Walk(flat_blocks(count, ELEMENT_BLOCK), 1, tuple(range(count)), copy_in=False)


def _narrow_walk(node: torch.fx.Node) -> Walk:
    """cmx_narrow_s16_s8: an element at a time, its two input bytes read before its output byte is written."""
    count = int(node_val(node).numel())
    return Walk(flat_blocks(count, 1), 1, tuple(range(0, 2 * count, 2)), copy_in=True)


def _softmax_walk(node: torch.fx.Node) -> Walk:
    val = node_val(fx_args(node)[0])
    row = int(val.shape[-1])
    rows = int(val.numel()) // row
    return Walk(flat_blocks(rows, 1), row, tuple(r * row for r in range(rows)), copy_in=False)


def shareable_inputs(node: torch.fx.Node) -> list[torch.fx.Node]:
    """The inputs whose bytes this layer's output may share (an element-wise layer's broadcast
    operand is read again for every block: never)."""
    name = op_name(node)
    if name in ("cortex_m::quantized_add", "cortex_m::quantized_mul"):
        a, b = (
            (fx_args(node)[0], fx_args(node)[4])
            if name == "cortex_m::quantized_add"
            else (fx_args(node)[0], fx_args(node)[2])
        )
        return [v for v in (a, b) if isinstance(v, torch.fx.Node) and node_val(v).numel() == node_val(node).numel()]
    if name in (
        "cmx::quantized_lstm",
        "cmx::quantized_lstm_s16",
        "cmx::quantized_gru",
        "cmx::quantized_bmm",
        "cmx::quantized_bmm_s16",
    ):
        return []  # every step reads the hidden state it wrote the step before
    first = fx_args(node)[0] if fx_args(node) else None
    return [first] if isinstance(first, torch.fx.Node) else []


def lead(node: torch.fx.Node, isa: str) -> int:
    """How many bytes below the start of a shareable input (shareable_inputs) this layer's output
    must start; negative: it may start that far above."""
    name = op_name(node)
    if name == "cortex_m::quantized_conv2d":
        walk = _conv_walk(node, isa)
    elif name == "cortex_m::quantized_depthwise_conv2d":
        walk = _depthwise_walk(node, isa)
    elif name in ("cortex_m::quantized_avg_pool2d", "cortex_m::quantized_max_pool2d"):
        walk = _pool_walk(node)
    elif name in ("cortex_m::quantized_add", "cortex_m::quantized_mul", *own_layers.TABLES):
        walk = _elementwise_walk(node)
    elif name == "cmx::quantized_narrow_s16":
        walk = _narrow_walk(node)
    elif name in ("cortex_m::softmax", "cmx::quantized_masked_softmax"):
        walk = _softmax_walk(node)
    else:  # linear, copies, transposes: every output reads the whole input
        walk = _whole(node_val(node))
    return walk.lead()
