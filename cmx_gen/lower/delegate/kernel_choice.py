"""Which kernel each convolution and depthwise layer of a plan runs, and the scratch it needs:
cmx-gen's own (own_kernels.py) where the core has one that applies, else the CMSIS-NN call the
cortex_m wrapper makes, or arm_convolve_s8 itself where the wrapper's MVE 1xN path would misread
(the partitioner refuses none of these; layers.py builds their records)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import torch

from cmx_gen.lower.delegate import cmsis_sizes, kernel_numbers, own_kernels
from cmx_gen.lower.delegate.kernel_facts import define
from cmx_gen.lower.fx_nodes import fx_args, op_name

CHOICE = "cmx_kernel_choice"  # node meta: the layer's Choice


@dataclass(frozen=True)
class Choice:
    """What was chosen for one layer's kernel, read by every question this module answers about it:
    set by schedule.py (small, patched and the weights' form) and preprocess.mark_int4 (int4)."""

    small: bool = False  # cmx-gen's DSP kernel on a Helium core, for memory (no CMSIS-NN scratch, a shorter lead)
    patched: bool = False  # the layer runs patch by patch (patches.py)
    narrow: bool = False  # min: cmx_conv_row_s8 keeps int8 weights
    more_wide: bool = False  # fast: int16 weights for its mid-sized layers too
    staged: bool = False  # stage_weights: int8 weights cmx_conv_row_s8 widens into its scratch
    int4: bool = False  # the weights lie in [-8, 7]


_NONE = Choice()


def choice(node: torch.fx.Node) -> Choice:
    """The layer's Choice (none made: every field False)."""
    found = node.meta.get(CHOICE, _NONE)
    assert isinstance(found, Choice)
    return found


def choose(node: torch.fx.Node, **changes: bool) -> None:
    """Change some of the layer's Choice."""
    node.meta[CHOICE] = replace(choice(node), **changes)


# The layers whose weights may be int4 (weight_bits.py), as the cortex_m passes name them.
WEIGHTED_OPS = ("cortex_m::quantized_conv2d", "cortex_m::quantized_depthwise_conv2d", "cortex_m::quantized_linear")
# arm_depthwise_conv_s4_opt's Helium path, as GCC 12.2 compiles it (-O1 and up), takes the low nibble for
# the odd channels too: its constant predicate 0x0F0F (vrshlq_m_n_s32) becomes `mov r6, #-1; vmsr P0, r6`.
# Every depthwise layer of two or more channels was wrong on QEMU's M55 (6,801 of 69 shapes' outputs; exact
# at -O0, and with a correct P0 under QEMU). CMSIS-NN's generic arm_depthwise_conv_s4 (C), which the wrapper
# calls for a channel multiplier over 1, was wrong on both cores (the M4: upstream's
# depthwise_conv2d_multiplier case, 198 of 216 outputs; the M55, built -Ofast: 29 of 180 outputs of a
# 5-channel layer). So the depthwise_s4 kind runs only the wrapper's _opt path on the DSP and plain cores
# (s4_depthwise_opt); elsewhere an int4 depthwise layer runs the int8 kind on its 4-bit values, a byte
# each (depthwise_kind). arm_convolve_wrapper_s4 and arm_fully_connected_s4 are exact on both.


def small_kernel(node: torch.fx.Node) -> bool:
    """The schedule chose, for memory, cmx-gen's DSP kernel for this layer on a Helium core: no
    CMSIS-NN scratch (arm_depthwise_conv_s8_opt takes 4,464 bytes for a 3x3 layer) and a shorter lead."""
    return choice(node).small


@contextmanager
def kernels_as(node: torch.fx.Node, small: bool) -> Iterator[None]:
    """Ask what `node` would run and cost with the small (or the fast) kernel; its own choice is
    left as it was afterwards."""
    was = choice(node)
    choose(node, small=small)
    try:
        yield
    finally:
        node.meta[CHOICE] = was


def node_val(node: Any) -> Any:
    """A node's example value (its `val` meta), or None for a constant argument."""
    return node.meta.get("val") if isinstance(node, torch.fx.Node) else None


def _planned_scratch(node: torch.fx.Node) -> int:
    alloc = fx_args(node)[-1]
    return int(fx_args(alloc)[0][0][0]) if isinstance(alloc, torch.fx.Node) else 0


def own_scratch(node: torch.fx.Node) -> int:
    """The scratch of a layer no cortex_m pass planned one for, as the backend's C sizes it
    (cmx_nn_layout.h): an LSTM's (cmx_lstm_scratch_bytes), a GRU's (cmx_gru_scratch_bytes), a batch
    matmul's (cmx_bmm_scratch_bytes)."""
    name = op_name(node)
    if name in ("cmx::quantized_bmm", "cmx::quantized_bmm_s16"):
        batches, _, inner = (int(d) for d in node_val(fx_args(node)[0]).shape)
        wide = name == "cmx::quantized_bmm_s16"
        transposed = bool(fx_args(node)[2] if wide else fx_args(node)[4])
        return kernel_numbers.bmm_scratch_bytes(batches, inner, int(node_val(node).shape[2]), transposed, 1 + wide)
    if name == "cmx::quantized_gru":
        return kernel_numbers.gru_scratch_bytes(int(node_val(node).shape[-1]))
    if name not in ("cmx::quantized_lstm", "cmx::quantized_lstm_s16"):
        return 0
    shape = [int(d) for d in node_val(node).shape]
    batch_first, reverse = bool(fx_args(node)[5]), bool(fx_args(node)[6])
    batch, steps = (shape[0], shape[1]) if batch_first else (shape[1], shape[0])
    inputs = int(node_val(fx_args(node)[0]).shape[-1])
    element = 2 if name == "cmx::quantized_lstm_s16" else 1
    return kernel_numbers.lstm_scratch_bytes(batch, steps, inputs, shape[-1], reverse, element)


def scratch_bytes(node: torch.fx.Node, isa: str) -> int:
    """The scratch size of this call: what the cortex_m passes planned for the wrapper (its alloc
    node), arm_convolve_s8's own where the plan calls that directly, or cmx_conv_row_s8's."""
    own = own_scratch(node) or s16_scratch(node, isa)
    if own:
        return own
    if depthwise_kind(node, isa) == "depthwise_3x3":
        return depthwise_plane_bytes(node, isa)
    if depthwise_kind(node, isa) == "depthwise_s4":
        return depthwise_s4_scratch(node, isa)
    kind = conv_kind(node, isa)
    if kind == "conv_s4":
        return conv_s4_scratch(node, isa)
    if kind == "conv_general":
        return max(_planned_scratch(node), _convolve_s8_scratch(node))
    if kind == "conv_row":
        geometry, chunk = row_plan(node)
        return geometry.scratch_bytes(chunk)
    if kind == "conv_helium":
        return _helium_scratch(node)
    return _planned_scratch(node)


def int4_kind(node: torch.fx.Node) -> bool:
    """The layer's weights are int4 (Choice.int4) and it runs a CMSIS-NN s4 kernel: not inside a patched
    stage (whose boxes the s4 kinds do not take) nor with a padding as wide as its kernel (their im2col
    assumes narrower: cmx_plan_check's padded_windows); there it runs the int8 kind on the same values."""
    if not choice(node).int4 or choice(node).patched:
        return False
    if op_name(node) == "cortex_m::quantized_linear":
        return True
    weight, padding, dilation = fx_args(node)[1], fx_args(node)[4], fx_args(node)[5]
    extent = [int(d) * (int(k) - 1) + 1 for d, k in zip(dilation, node_val(weight).shape[1:3])]
    return all(int(p) < e for p, e in zip(padding, extent))


def _pairs(node: torch.fx.Node) -> tuple[list[int], list[int], list[int]]:
    """A convolution's padding, stride and dilation, height first."""
    _, _, _, stride, padding, dilation = fx_args(node)[:6]
    return [int(v) for v in padding], [int(v) for v in stride], [int(v) for v in dilation]


def _conv_shapes(node: torch.fx.Node, filter_nhwc: tuple[int, ...]) -> cmsis_sizes.ConvShapes:
    """A convolution's input, filter (as CMSIS-NN's dims read it) and output, and its window."""
    x_dims, out_dims = cmsis_sizes.dims(node_val(fx_args(node)[0])), cmsis_sizes.dims(node_val(node))
    return cmsis_sizes.ConvShapes(x_dims, filter_nhwc, out_dims, *_pairs(node))


def conv_s4_scratch(node: torch.fx.Node, isa: str) -> int:
    """arm_convolve_wrapper_s4_get_buffer_size for this layer on this core (cmsis_sizes)."""
    filter_nhwc = tuple(int(v) for v in node_val(fx_args(node)[1]).shape)  # OHWI
    return cmsis_sizes.convolve_wrapper(isa, "s4", _conv_shapes(node, filter_nhwc))


def s16_depthwise(node: torch.fx.Node) -> bool:
    """A cmx::quantized_conv2d_s16 of one group per input channel (arm_depthwise_conv_wrapper_s16)."""
    groups = int(fx_args(node)[6])
    return groups > 1 and groups == int(node_val(fx_args(node)[0]).shape[1])


def s16_scratch(node: torch.fx.Node, isa: str) -> int:
    """The s16 wrappers' buffer sizes on this core (cmsis_sizes): a convolution's or a depthwise
    layer's (arm_convolve_wrapper_s16 / arm_depthwise_conv_wrapper_s16), an average pool's
    (arm_avgpool_s16); a fully connected layer's and a max pool's none."""
    if op_name(node) == "cmx::quantized_pool2d_s16":
        average, channels = bool(fx_args(node)[4]), int(node_val(fx_args(node)[0]).shape[1])
        return cmsis_sizes.avgpool(isa, "s16", int(node_val(node).shape[3]), channels) if average else 0
    if op_name(node) != "cmx::quantized_conv2d_s16":
        return 0
    out_c, _, kh, kw = (int(v) for v in node_val(fx_args(node)[1]).shape)  # OIHW
    in_c = int(node_val(fx_args(node)[0]).shape[1])
    if not s16_depthwise(node):
        return cmsis_sizes.convolve_wrapper(isa, "s16", _conv_shapes(node, (out_c, kh, kw, in_c)))
    return cmsis_sizes.depthwise_wrapper(isa, "s16", _conv_shapes(node, (1, kh, kw, out_c)), out_c // in_c)


def s4_depthwise_opt(node: torch.fx.Node) -> bool:
    """arm_depthwise_conv_wrapper_s4 takes its _opt path for this layer (one output channel per input
    channel, one batch, no dilation), the one the kind runs (its generic path, arm_depthwise_conv_s4,
    computed other results: above)."""
    x, _, _, _, _, dilation, ch_mult = fx_args(node)[:7]
    return int(ch_mult) == 1 and int(node_val(x).shape[0]) == 1 and list(dilation) == [1, 1]


def depthwise_s4_scratch(node: torch.fx.Node, isa: str) -> int:
    """arm_depthwise_conv_wrapper_s4_get_buffer_size for this layer on this core (cmsis_sizes)."""
    weight, ch_mult = fx_args(node)[1], fx_args(node)[6]
    kh, kw = int(node_val(weight).shape[1]), int(node_val(weight).shape[2])
    out_c = int(node_val(node).shape[1])
    return cmsis_sizes.depthwise_wrapper(isa, "s4", _conv_shapes(node, (1, kh, kw, out_c)), int(ch_mult))


def _row_geometry(node: torch.fx.Node) -> own_kernels.RowGeometry | None:
    x, weight, _, stride, padding, dilation = fx_args(node)[:6]
    made = choice(node)
    narrow, more, staged = made.narrow, made.more_wide, made.staged
    return own_kernels.row_geometry(
        node_val(x), node_val(weight), node_val(node), stride, padding, dilation, narrow, more, staged
    )


def row_plan(node: torch.fx.Node) -> tuple[own_kernels.RowGeometry, int]:
    """A conv_row layer's geometry and chunk: the one place the chunk is chosen, so the scratch the
    working memory reserves and the chunk the record carries cannot disagree."""
    geometry = _row_geometry(node)
    assert geometry is not None
    return geometry, geometry.chunk(_planned_scratch(node), narrow=choice(node).narrow)


def depthwise_kind(node: torch.fx.Node, isa: str) -> str:
    """ "depthwise_3x3" (cmx-gen's cmx_depthwise_3x3_s8) for a 3x3 depthwise layer with one output
    channel per input channel and no dilation: on a DSP core, on a Helium core where its Helium path
    takes every channel (helium_depthwise: faster than CMSIS-NN's, no scratch), or where
    small_kernel; else "depthwise_conv" (CMSIS-NN's wrapper)."""
    if op_name(node) != "cortex_m::quantized_depthwise_conv2d":
        return ""
    if int4_kind(node) and isa != "MVE" and s4_depthwise_opt(node):  # the s4 paths that compute right (above)
        return "depthwise_s4"
    x, weight, _, _stride, _padding, dilation, ch_mult = fx_args(node)[:7]
    kh, kw = int(node_val(weight).shape[1]), int(node_val(weight).shape[2])
    one_to_one = int(ch_mult) == 1 and int(node_val(x).shape[1]) == int(node_val(node).shape[1])
    own = isa == "DSP" or small_kernel(node) or (isa == "MVE" and helium_depthwise(node))
    if own and one_to_one and kh == kw == 3 and list(dilation) == [1, 1]:
        return "depthwise_3x3"
    return "depthwise_conv"


_DW = "cmx_nn_layout.h"
DEPTHWISE_BAND = define(_DW, "CMX_DW_BAND")  # the planar path: output rows a band (the most of either path)
DEPTHWISE_STEP = define(_DW, "CMX_DW_STEP")  # channels of a pixel the walk finishes at a time
HELIUM_CHANNELS = define(_DW, "CMX_DW_STEP_MVE")  # ... on Helium


def _stride(node: torch.fx.Node) -> tuple[int, int]:
    stride = _pairs(node)[1]
    return stride[0], stride[1]


def depthwise_planar_shape(node: torch.fx.Node) -> bool:
    """cmx_depthwise_3x3_s8's planar path takes this layer on a DSP core (else the grouped one)."""
    return kernel_numbers.dw_planar(_stride(node), int(node_val(node).shape[3]))


def depthwise_plane_bytes(node: torch.fx.Node, isa: str) -> int:
    """The scratch of a depthwise_3x3 layer on a DSP core (cmx_dw3x3_band_scratch_bytes); 0 where the kernel
    walks four channels a pixel (Helium, or the schedule chose that walk for memory: small_kernel)."""
    if isa != "DSP" or depthwise_kind(node, isa) != "depthwise_3x3" or small_kernel(node):
        return 0
    _, oc, oh, ow = (int(s) for s in node_val(node).shape)
    return kernel_numbers.dw_band_scratch_bytes(oc, oh, ow, _stride(node))


def depthwise_band(node: torch.fx.Node) -> int:
    """The output rows of a band of cmx_depthwise_3x3_s8's planar or grouped path (whichever takes
    this shape): how far its writes run ahead of its reads (overlap.band_blocks)."""
    return kernel_numbers.dw_band_rows(_stride(node), int(node_val(node).shape[3]))


def helium_depthwise(node: torch.fx.Node) -> bool:
    """cmx_depthwise_3x3_s8 on a Helium core runs every channel of this layer on its Helium path."""
    return int(node_val(node).shape[1]) % HELIUM_CHANNELS == 0


def conv_kind(node: torch.fx.Node, isa: str) -> str:
    """ "conv_row" (cmx-gen's cmx_conv_row_s8) on a DSP core (or where small_kernel) where it applies
    (own_kernels.py); "conv_helium" (cmx_conv_helium_s8) for one of one group and dilation 1 on a
    Helium core; else "conv" (arm_convolve_wrapper_s8), or "conv_general" (arm_convolve_s8, which
    computes any padding) where the wrapper's 1xN path would misread it (wrapper_misreads)."""
    if op_name(node) != "cortex_m::quantized_conv2d":
        return ""
    x, weight, _, stride, padding, dilation = fx_args(node)[:6]
    c, kc = int(node_val(x).shape[1]), int(node_val(weight).shape[3])
    kh, kw = int(node_val(weight).shape[1]), int(node_val(weight).shape[2])
    one_by_one = padding[0] == padding[1] == 0 and kh == kw == 1 and dilation[0] == dilation[1] == 1 and c == kc
    if choice(node).patched:  # a patch's box may be one row: keep off the wrapper's 1xN path
        return "conv" if one_by_one else "conv_general"
    if int4_kind(node) and c == kc and not (isa == "MVE" and wrapper_misreads(node)):
        return "conv_s4"
    if (isa == "DSP" or small_kernel(node)) and _row_geometry(node) is not None:
        return "conv_row"
    if isa == "MVE" and c == kc and list(dilation) == [1, 1]:
        return "conv_helium"
    return "conv_general" if wrapper_misreads(node) else "conv"


def wrapper_misreads(node: torch.fx.Node) -> bool:
    """arm_convolve_wrapper_s8 would send this convolution to its 1xN path and that path, with MVE,
    refuses it or reads the wrong input (_one_by_n_mve_reads says why)."""
    x, weight, _, stride, padding, dilation = fx_args(node)[:6]
    _, c, h, width = (int(v) for v in node_val(x).shape)
    _, kh, kw, kc = (int(v) for v in node_val(weight).shape)
    one_by_one = padding[0] == padding[1] == 0 and kh == kw == 1 and dilation[0] == dilation[1] == 1 and c == kc
    one_by_n = h == 1 and dilation[1] == 1 and kh == 1 and (stride[1] * c) % 4 == 0 and c == kc
    if one_by_one or not one_by_n:
        return False
    out_w = int(node_val(node).shape[3])
    exact = [
        [p * stride[1] - padding[1] + k if 0 <= p * stride[1] - padding[1] + k < width else None for k in range(kw)]
        for p in range(out_w)
    ]
    reads = _one_by_n_mve_reads(width, kw, stride[1], padding[1], out_w)
    return reads is not None and reads != exact


def _one_by_n_mve_reads(width: int, kernel: int, stride: int, pad: int, out_w: int) -> list[list[Any]] | None:
    """Which input column each output column's taps read in arm_convolve_1_x_n_s8's MVE path
    (None: padding, "?": past the data it copied), as its left-padded, unpadded and right-padded
    sections lay them out; None when it hands the case to arm_convolve_s8 itself. Only the
    left/right split of "SAME" padding comes out right: PyTorch's symmetric padding with a stride
    makes it refuse (status -3) or, with stride 2 and padding 4 over 101 columns, copy one column
    past the input into the right section (wrong results at the edge)."""
    total = (out_w - 1) * stride + kernel - width
    asym = int(math.fmod(total, 2))  # C's remainder
    if pad * 2 + asym != total:
        return [[]]  # ARM_CMSIS_NN_FAILURE
    right = max(1, (pad + asym + stride - 1) // stride) if pad + asym else 0
    left = max(1, (pad + stride - 1) // stride) if pad else 0
    middle = max(out_w - (right + left), 0)
    if right + middle + left != out_w:
        return None

    def column(i: int) -> Any:
        return i if 0 <= i < width else "?"

    def from_buffer(buffer: list[Any], count: int) -> list[list[Any]]:
        """`count` output columns read from an im2col buffer, a stride apart ("?" past its end)."""
        return [
            [buffer[r * stride + k] if r * stride + k < len(buffer) else "?" for k in range(kernel)]
            for r in range(count)
        ]

    start = stride * left - pad
    first = stride * (left + middle) - pad
    return (
        from_buffer([None] * pad + [column(i) for i in range(kernel)], left)
        + [[column(start + r * stride + k) for k in range(kernel)] for r in range(middle)]
        + from_buffer(
            [column(first + i) for i in range(kernel - 1)] + [None] * (right if asym else pad), out_w - left - middle
        )
    )


def _helium_scratch(node: torch.fx.Node) -> int:
    padding = _pairs(node)[0]
    _, kh, kw, c = (int(v) for v in node_val(fx_args(node)[1]).shape)
    return kernel_numbers.helium_field_bytes(c, (kh, kw), _stride(node), (padding[0], padding[1]))


def _convolve_s8_scratch(node: torch.fx.Node) -> int:
    """arm_convolve_s8_get_buffer_size on any ISA (the larger of MVE's and DSP's: a plan is
    checked against its core, and both are a few hundred bytes)."""
    x, weight = fx_args(node)[:2]
    kernel = (int(node_val(weight).shape[1]), int(node_val(weight).shape[2]))
    in_ch = int(node_val(x).shape[1])
    return max(cmsis_sizes.convolve_s8(isa, in_ch, kernel) for isa in ("MVE", "DSP"))
