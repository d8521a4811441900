"""Which model inputs go in channels-last memory format.

The cortex_m quantizer refuses NCHW convolutions, so an input that a convolution or pool consumes,
directly or through element-wise operators (an activation, a scale: they keep the memory format),
is made channels-last. Every other input keeps the layout the user gave: cortex_m's matmul,
elementwise and transpose kernels read a channels-last input as if it were contiguous, which gave
wrong results on the target (docs/conformance.md)."""

from __future__ import annotations

from typing import Any

import torch

from cmx_gen.common.op_classes import elementwise_ops
from cmx_gen.model.source import Inputs, channels_last

# Ops whose cortex_m kernels work on NHWC data (matched in the exported op's name).
SPATIAL_OPS = ("conv", "pool", "batch_norm", "upsample", "pixel_shuffle")


def spatial_inputs(program: Any) -> set[int]:
    """Positions of the user inputs that a conv/pool/... op consumes directly.

    A 1-channel input is the same bytes either way, but ExecuTorch serializes its channels-last
    strides as dim order [0, 2, 1, 3], which portable kernels refuse (target_checks.py): it goes
    channels-last only for a convolution, whose quantizer insists on it, reached directly or through
    ops that keep the layout (an activation, a BatchNorm, a pool: an audio model's input normalized or
    pooled first), else every conv after them sees a contiguous image and stays float."""
    names = list(program.graph_signature.user_inputs)
    found = set()
    for node in program.graph_module.graph.nodes:
        if node.op != "placeholder" or node.name not in names:
            continue
        value = node.meta.get("val")
        kinds = (
            ("conv",) if isinstance(value, torch.Tensor) and value.dim() == 4 and value.shape[1] == 1 else SPATIAL_OPS
        )
        if _reaches(node, kinds, through=("pool", "batch_norm") if kinds == ("conv",) else ()):
            found.add(names.index(node.name))
    return found


_ZERO_PADS = ("aten.pad.default", "aten.constant_pad_nd.default")


def symmetric_zero_pad(node: torch.fx.Node) -> list[int] | None:
    """[top, left] of a zero pad the same on both sides of height and width (nn.ZeroPad2d(1)), which
    a convolution after it takes as its own padding (lower/rewrites/shape_rules.py); else None."""
    if node.op != "call_function" or str(node.target) not in _ZERO_PADS or len(node.args) < 2:
        return None
    extra = list(node.args[2:]) + [None, None]
    mode, value = (
        (extra[0] or "constant", extra[1]) if str(node.target) == "aten.pad.default" else ("constant", extra[0])
    )
    widths = node.args[1]
    if mode != "constant" or value not in (0, 0.0, None) or not isinstance(widths, (list, tuple)) or len(widths) != 4:
        return None
    left, right, top, bottom = (int(w) for w in widths)  # type: ignore[arg-type]
    return [top, left] if left == right >= 0 and top == bottom >= 0 else None


def _reaches(node: torch.fx.Node, kinds: tuple[str, ...], through: tuple[str, ...] = ()) -> bool:
    """Whether a user of `node` is one of `kinds`, or an element-wise operator of `node` alone (its
    other arguments constants), a zero pad a convolution folds, or one of `through` whose output does."""
    for user in node.users:
        if user.op != "call_function":
            continue
        if any(k in str(user.target) for k in kinds):
            return True
        name = "aten::" + str(getattr(user.target, "__name__", "")).split(".")[0]
        elementwise = name in elementwise_ops() and [n for n in user.all_input_nodes if n.op != "get_attr"] == [node]
        folded = (  # the convolutions' own padding (shape_rules.zero_pad_into_conv): they read the input
            symmetric_zero_pad(user) is not None
            and user.args[0] is node
            and all(str(u.target) == "aten.conv2d.default" for u in user.users)
        )
        if elementwise or folded or (any(k in str(user.target) for k in through) and user.args[0] is node):
            if _reaches(user, kinds, through):
                return True
    return False


def lay_out(program: Any, inputs: Inputs, calibration: tuple[Inputs, ...]) -> tuple[Inputs, tuple[Inputs, ...]]:
    """The example and calibration inputs laid out for `program` (the model exported as given):
    channels-last where a conv/pool reads them. New tuples; the caller's tensors are not touched."""
    positions = spatial_inputs(program)

    def convert(sample: Inputs) -> Inputs:
        return tuple(channels_last(x) if i in positions else x for i, x in enumerate(sample))

    return convert(inputs), tuple(convert(sample) for sample in calibration)
