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


def _reaches(node: torch.fx.Node, kinds: tuple[str, ...], through: tuple[str, ...] = ()) -> bool:
    """Whether a user of `node` is one of `kinds`, or an element-wise operator of `node` alone (its
    other arguments constants) or one of `through` whose output does."""
    for user in node.users:
        if user.op != "call_function":
            continue
        if any(k in str(user.target) for k in kinds):
            return True
        name = "aten::" + str(getattr(user.target, "__name__", "")).split(".")[0]
        elementwise = name in elementwise_ops() and [n for n in user.all_input_nodes if n.op != "get_attr"] == [node]
        if elementwise or (any(k in str(user.target) for k in through) and user.args[0] is node):
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
