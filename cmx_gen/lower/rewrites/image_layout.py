"""Images read by the cortex_m convolution and pool kernels are laid out channels-last, and the two
tensors of an element-wise add or mul as its output.

CMSIS-NN reads an image as NHWC bytes, and upstream's conversion gives a convolution the tensor it was
given, whatever its dim order. A convolution's own output is channels-last, but an image made by a
reshape (an attention's tokens back to an image, `t.transpose(1, 2).reshape(b, c, h, w)`) is
contiguous: the kernel read its bytes as NHWC and computed a wrong image (a FAIL on the target). Such
an input is first laid out channels-last by a `_clone_dim_order` (an int8 transpose in cmx-gen's
backend, the portable kernel without it). An add or mul of that image and a conv's output walked
one's bytes in NHWC order and the other's in NCHW order (a wrong image, found by the fuzzer); upstream's
transpose kernel permuted a channels-last image's bytes as if they were contiguous (FAIL 212 LSB on
QEMU, the fuzzer's seed 2002): its input and output are laid out contiguous."""

from __future__ import annotations

import torch

from cmx_gen.common.dim_order import placed_dims
from cmx_gen.lower.fx_nodes import call_like, fx_args, op_name

CHANNELS_LAST: tuple[int, ...] = (0, 2, 3, 1)

NHWC_READERS = (
    "cortex_m::quantized_conv2d",
    "cortex_m::quantized_depthwise_conv2d",
    "cortex_m::quantized_transpose_conv2d",
    "cortex_m::quantized_avg_pool2d",
    "cortex_m::quantized_max_pool2d",
)


# element-wise kernels of two tensors, and which arguments those are: they walk the bytes of both as
# they lie, so both must lie as the output does
ELEMENTWISE_OPERANDS: dict[str, tuple[int, ...]] = {
    "cortex_m::quantized_add": (0, 4),
    "cortex_m::quantized_mul": (0, 2),
}


# kernels that walk their input and output as contiguous bytes of the logical shape, whatever the dim
# order (upstream's op_transpose.cpp calls arm_transpose_s8 on the sizes alone)
CONTIGUOUS_ONLY = ("cortex_m::transpose",)


def reads_nhwc(node: torch.fx.Node) -> bool:
    """`node` is a kernel that reads its first input as NHWC bytes."""
    return op_name(node) in NHWC_READERS


def in_memory_order(tensor: torch.Tensor, order: tuple[int, ...] | list[int]) -> torch.Tensor:
    """`tensor` (its values) laid out in memory order `order`."""
    return tensor.permute(*order).contiguous().permute(*[list(order).index(d) for d in range(len(order))])


def laid_out(val: torch.Tensor, order: tuple[int, ...]) -> torch.Tensor:
    """A tensor like `val` (a fake one: its fake mode) in memory order `order`."""
    with val.fake_mode:  # type: ignore[attr-defined]
        return in_memory_order(val, order)


def placed_like(val: torch.Tensor, order: tuple[int, ...]) -> bool:
    """`val`'s bytes lie as they would in memory order `order` (dims of size 1 place none)."""
    return placed_dims(val) == [d for d in order if int(val.shape[d]) != 1]


def layout_copy() -> object:
    """The edge op of a layout copy (a transpose, or a plain copy, in cmx-gen's backend)."""
    from executorch.exir.dialects._ops import ops as exir_ops

    return exir_ops.edge.dim_order_ops._clone_dim_order.default


def in_order(tensor: torch.fx.Node, order: tuple[int, ...], before: torch.fx.Node) -> torch.fx.Node:
    """`tensor`, or a `_clone_dim_order` of it into `order` inserted before `before`."""
    val = tensor.meta["val"]
    if placed_like(val, order):
        return tensor
    with before.graph.inserting_before(before):
        return call_like(
            before.graph, layout_copy(), (tensor,), before, {"dim_order": list(order)}, laid_out(val, order)
        )


def lay_out(program: torch.export.ExportedProgram) -> None:
    """Each NHWC reader's image input channels-last, each element-wise operand of the output's shape
    laid out as the output, a contiguous-only kernel's input and output contiguous (one layout copy
    per tensor and order, shared by its readers)."""
    graph = program.graph_module.graph
    copies: dict[tuple[torch.fx.Node, tuple[int, ...]], torch.fx.Node] = {}
    for node in list(graph.nodes):
        if reads_nhwc(node):
            wanted = [(fx_args(node)[0], CHANNELS_LAST)]
        elif op_name(node) in ELEMENTWISE_OPERANDS:
            order = tuple(int(d) for d in node.meta["val"].dim_order())
            wanted = [(fx_args(node)[k], order) for k in ELEMENTWISE_OPERANDS[op_name(node)]]
        elif op_name(node) in CONTIGUOUS_ONLY:
            _output_contiguous(node)
            wanted = [(fx_args(node)[0], tuple(range(node.meta["val"].dim())))]
        else:
            continue
        for x, order in wanted:
            if not isinstance(x, torch.fx.Node) or not isinstance(x.meta.get("val"), torch.Tensor):
                continue
            val = x.meta["val"]
            if tuple(val.shape) != _shape_for(node, val, order) or placed_like(val, order):
                continue
            if (x, order) not in copies:
                copies[(x, order)] = in_order(x, order, node)
            node.replace_input_with(x, copies[(x, order)])
    graph.lint()
    program.graph_module.recompile()


def _output_contiguous(node: torch.fx.Node) -> None:
    """The node writes its output contiguous; its readers get it in the order they had, through a
    layout copy after it where that order is another."""
    val = node.meta["val"]
    order = tuple(int(d) for d in val.dim_order())
    contiguous = tuple(range(val.dim()))
    if placed_like(val, contiguous):
        return
    node.meta["val"] = laid_out(val, contiguous)
    users = list(node.users)
    with node.graph.inserting_after(node):
        back = call_like(node.graph, layout_copy(), (node,), node, {"dim_order": list(order)}, val)
    for user in users:
        user.replace_input_with(node, back)


def _shape_for(node: torch.fx.Node, val: torch.Tensor, order: tuple[int, ...]) -> tuple[int, ...]:
    """The shape an operand needs to be laid out in `order`: a 4-D image for an NHWC reader, the
    output's own for an element-wise operand (a broadcast one is left as it is)."""
    if reads_nhwc(node):
        return tuple(val.shape) if val.dim() == 4 else ()
    if op_name(node) in CONTIGUOUS_ONLY:
        return tuple(val.shape)
    return tuple(node.meta["val"].shape)
