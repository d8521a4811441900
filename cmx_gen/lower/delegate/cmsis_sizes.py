"""CMSIS-NN's own scratch sizes for the CMSIS-NN functions the plan calls, asked of CMSIS-NN: its
get_buffer_size functions, host-built at the commit ExecuTorch pins, through the ExecuTorch wheel's
`cmsis_nn` bindings (as upstream's cortex_m passes size the wrappers' scratch). Shapes are NHWC,
as CMSIS-NN's dims are."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from executorch.backends.cortex_m.library import cmsis_nn

Width = Literal["s4", "s8", "s16"]  # weights s4 or activations s16, else int8 both
_TYPES = {"s4": cmsis_nn.DataType.A8W4, "s8": cmsis_nn.DataType.A8W8, "s16": cmsis_nn.DataType.A16W8}
_BACKENDS = {"MVE": cmsis_nn.Backend.MVE, "DSP": cmsis_nn.Backend.DSP, "SCALAR": cmsis_nn.Backend.SCALAR}


def _backend(isa: str) -> cmsis_nn.Backend:
    return _BACKENDS[isa]


def _shapes(
    input_nhwc: Sequence[int],
    filter_nhwc: Sequence[int],
    output_nhwc: Sequence[int],
    padding: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
) -> dict[str, list[int]]:
    """A convolution's shapes and window as the bindings' keywords take them."""
    named = {
        "input_nhwc": input_nhwc,
        "filter_nhwc": filter_nhwc,
        "output_nhwc": output_nhwc,
        "padding_hw": padding,
        "stride_hw": stride,
        "dilation_hw": dilation,
    }
    return {name: [int(v) for v in values] for name, values in named.items()}


def convolve_wrapper(
    isa: str,
    width: Width,
    input_nhwc: Sequence[int],
    filter_nhwc: Sequence[int],
    output_nhwc: Sequence[int],
    padding: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
) -> int:
    """arm_convolve_wrapper_<width>_get_buffer_size on `isa`."""
    shapes = _shapes(input_nhwc, filter_nhwc, output_nhwc, padding, stride, dilation)
    return int(cmsis_nn.convolve_wrapper_buffer_size(_backend(isa), _TYPES[width], **shapes))


def convolve_s8(isa: str, in_ch: int, kernel: Sequence[int]) -> int:
    """arm_convolve_s8_get_buffer_size on `isa`: the wrapper's size on a shape it sends to
    arm_convolve_s8 (two input rows and a padding: neither its 1x1 nor its 1xN path), which reads
    only the input channels and the kernel."""
    kh, kw = (int(v) for v in kernel)
    return convolve_wrapper(isa, "s8", (1, 2, kw, in_ch), (1, kh, kw, in_ch), (1, 2, kw, 1), (1, 1), (1, 1), (1, 1))


def depthwise_wrapper(
    isa: str,
    width: Width,
    input_nhwc: Sequence[int],
    filter_nhwc: Sequence[int],
    output_nhwc: Sequence[int],
    padding: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
    ch_mult: int,
) -> int:
    """arm_depthwise_conv_wrapper_<width>_get_buffer_size on `isa`."""
    shapes = _shapes(input_nhwc, filter_nhwc, output_nhwc, padding, stride, dilation)
    return int(
        cmsis_nn.depthwise_conv_wrapper_buffer_size(_backend(isa), _TYPES[width], ch_mult=int(ch_mult), **shapes)
    )


def avgpool(isa: str, width: Width, out_w: int, channels: int) -> int:
    """arm_avgpool_<width>_get_buffer_size on `isa`."""
    return int(
        cmsis_nn.avgpool_buffer_size(_backend(isa), _TYPES[width], dim_dst_width=int(out_w), ch_src=int(channels))
    )
