"""Images read by the cortex_m convolution and pool kernels are laid out channels-last.

CMSIS-NN reads an image as NHWC bytes, and upstream's conversion gives a convolution the tensor it was
given, whatever its dim order. A convolution's own output is channels-last, but an image made by a
reshape (an attention's tokens back to an image, `t.transpose(1, 2).reshape(b, c, h, w)`) is
contiguous: the kernel read its bytes as NHWC and computed a wrong image (a FAIL on the target). Such
an input is first laid out channels-last by a `_clone_dim_order` (an int8 transpose in cmx-gen's
backend, the portable kernel without it)."""

from __future__ import annotations

import torch

from cmx_gen.common.dim_order import placed_dims
from cmx_gen.lower.fx_nodes import fx_args, op_name

CHANNELS_LAST = (0, 2, 3, 1)

NHWC_READERS = (
    "cortex_m::quantized_conv2d",
    "cortex_m::quantized_depthwise_conv2d",
    "cortex_m::quantized_transpose_conv2d",
    "cortex_m::quantized_avg_pool2d",
    "cortex_m::quantized_max_pool2d",
)


def reads_nhwc(node: torch.fx.Node) -> bool:
    """`node` is a kernel that reads its first input as NHWC bytes."""
    return op_name(node) in NHWC_READERS


def laid_out(val: torch.Tensor, order: tuple[int, ...]) -> torch.Tensor:
    """A tensor like `val` (a fake one: its fake mode) in memory order `order`."""
    with val.fake_mode:  # type: ignore[attr-defined]
        return val.permute(order).contiguous().permute(*[order.index(d) for d in range(len(order))])


def placed_like(val: torch.Tensor, order: tuple[int, ...]) -> bool:
    """`val`'s bytes lie as they would in memory order `order` (dims of size 1 place none)."""
    return placed_dims(val) == [d for d in order if int(val.shape[d]) != 1]


def in_order(tensor: torch.fx.Node, order: tuple[int, ...], before: torch.fx.Node) -> torch.fx.Node:
    """`tensor`, or a `_clone_dim_order` of it into `order` inserted before `before`."""
    from executorch.exir.dialects._ops import ops as exir_ops

    val = tensor.meta["val"]
    if placed_like(val, order):
        return tensor
    graph = before.graph
    with graph.inserting_before(before):
        made = graph.call_function(
            exir_ops.edge.dim_order_ops._clone_dim_order.default, (tensor,), {"dim_order": list(order)}
        )
    made.meta = {k: v for k, v in before.meta.items() if k in ("stack_trace", "nn_module_stack")}
    made.meta["val"] = laid_out(val, order)
    return made


def to_channels_last(program: torch.export.ExportedProgram) -> None:
    """Each NHWC reader's image input channels-last (one layout copy per tensor, shared by its readers)."""
    graph = program.graph_module.graph
    copies: dict[torch.fx.Node, torch.fx.Node] = {}
    for node in list(graph.nodes):
        if not reads_nhwc(node):
            continue
        x = fx_args(node)[0]
        if not isinstance(x, torch.fx.Node) or x.meta["val"].dim() != 4 or placed_like(x.meta["val"], CHANNELS_LAST):
            continue
        if x not in copies:
            copies[x] = in_order(x, CHANNELS_LAST, node)
        node.replace_input_with(x, copies[x])
    graph.lint()
    program.graph_module.recompile()
