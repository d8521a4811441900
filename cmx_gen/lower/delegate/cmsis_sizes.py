"""CMSIS-NN's own scratch sizes for the CMSIS-NN functions the plan calls, asked of CMSIS-NN: its
get_buffer_size functions, host-built at the commit ExecuTorch pins, through the ExecuTorch wheel's
`cmsis_nn` bindings (as upstream's cortex_m passes size the wrappers' scratch). Shapes are NHWC,
as CMSIS-NN's dims are."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from executorch.backends.cortex_m.library import cmsis_nn

Width = Literal["s4", "s8", "s16"]  # weights s4 or activations s16, else int8 both
_TYPES = {"s4": cmsis_nn.DataType.A8W4, "s8": cmsis_nn.DataType.A8W8, "s16": cmsis_nn.DataType.A16W8}
_BACKENDS = {"MVE": cmsis_nn.Backend.MVE, "DSP": cmsis_nn.Backend.DSP, "SCALAR": cmsis_nn.Backend.SCALAR}


def dims(val: Any) -> tuple[int, int, int, int]:
    """cmsis_nn_dims {n, h, w, c} of a logical NCHW tensor, as the wrappers read them."""
    n, c, h, w = (int(s) for s in val.shape)
    return n, h, w, c


def _backend(isa: str) -> cmsis_nn.Backend:
    return _BACKENDS[isa]


@dataclass(frozen=True)
class ConvShapes:
    """A convolution's shapes (NHWC, as CMSIS-NN's dims read them) and window (height first)."""

    input_nhwc: Sequence[int]
    filter_nhwc: Sequence[int]
    output_nhwc: Sequence[int]
    padding: Sequence[int]
    stride: Sequence[int]
    dilation: Sequence[int]

    def keywords(self) -> dict[str, list[int]]:
        """As the bindings' keywords take them."""
        named = {
            "input_nhwc": self.input_nhwc,
            "filter_nhwc": self.filter_nhwc,
            "output_nhwc": self.output_nhwc,
            "padding_hw": self.padding,
            "stride_hw": self.stride,
            "dilation_hw": self.dilation,
        }
        return {name: [int(v) for v in values] for name, values in named.items()}


def convolve_wrapper(isa: str, width: Width, shapes: ConvShapes) -> int:
    """arm_convolve_wrapper_<width>_get_buffer_size on `isa`."""
    return int(cmsis_nn.convolve_wrapper_buffer_size(_backend(isa), _TYPES[width], **shapes.keywords()))


def convolve_s8(isa: str, in_ch: int, kernel: Sequence[int]) -> int:
    """arm_convolve_s8_get_buffer_size on `isa`: the wrapper's size on a shape it sends to
    arm_convolve_s8 (two input rows and a padding: neither its 1x1 nor its 1xN path), which reads
    only the input channels and the kernel."""
    kh, kw = (int(v) for v in kernel)
    general = ConvShapes((1, 2, kw, in_ch), (1, kh, kw, in_ch), (1, 2, kw, 1), (1, 1), (1, 1), (1, 1))
    return convolve_wrapper(isa, "s8", general)


def depthwise_wrapper(isa: str, width: Width, shapes: ConvShapes, ch_mult: int) -> int:
    """arm_depthwise_conv_wrapper_<width>_get_buffer_size on `isa`."""
    keywords = shapes.keywords()
    return int(cmsis_nn.depthwise_conv_wrapper_buffer_size(_backend(isa), _TYPES[width], ch_mult=ch_mult, **keywords))


def avgpool(isa: str, width: Width, out_w: int, channels: int) -> int:
    """arm_avgpool_<width>_get_buffer_size on `isa`."""
    return int(
        cmsis_nn.avgpool_buffer_size(_backend(isa), _TYPES[width], dim_dst_width=int(out_w), ch_src=int(channels))
    )
