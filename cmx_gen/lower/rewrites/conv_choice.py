"""A convolution with one input channel goes to CMSIS-NN's convolution, not its depthwise kernel.

ExecuTorch 1.5's aten_to_cortex_m pass calls a convolution depthwise when groups == in_channels,
which a one-channel convolution (groups = in_channels = 1) is, and CMSIS-NN runs a depthwise
convolution with a channel multiplier above 1 in its generic loop. TFLite Micro sends the same
layer to arm_convolve_s8; measured side by side with the same CMSIS-NN (bench/peers, DS-CNN's first
layer, 1 -> 64 channels, 10x4): 1,711,800 against 1,111,560 instructions on the M4, 301,281
against 289,406 on the M55. Upstream leaves the choice open (its TODO #16347 in that pass).

The pass takes the depthwise path only when `_get_batch_size_from_conv` says 1; while the passes
run, it says "not 1" for exactly these convolutions, so they take the pass's own regular path
(OHWI weights, arm_convolve_wrapper_s8, its scratch). Remove when upstream decides.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


def _one_input_channel(node: Any) -> bool:
    """An ungrouped convolution whose weight (OIHW) has one input channel."""
    args = node.args
    if len(args) < 9 or args[8] != 1 or bool(args[6]):  # groups, transposed
        return False
    weight = getattr(args[1], "meta", {}).get("val")
    return weight is not None and weight.dim() == 4 and weight.shape[1] == 1 and weight.shape[0] > 1


@contextlib.contextmanager
def one_channel_convs_as_conv() -> Iterator[None]:
    from executorch.backends.cortex_m.passes import aten_to_cortex_m_pass as conversion

    original = conversion._get_batch_size_from_conv

    def batch_size(node: Any) -> Any:
        size = original(node)
        return -1 if size == 1 and _one_input_channel(node) else size

    conversion._get_batch_size_from_conv = batch_size
    try:
        yield
    finally:
        conversion._get_batch_size_from_conv = original
