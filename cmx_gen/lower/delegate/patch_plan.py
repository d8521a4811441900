"""A patched stage (patches.py) in the working memory and in the plan: the buffers one patch needs,
and each patch's records, the stage's layers with the patch's boxes for dims and padding.

Each layer's output lives in a buffer the size of its largest patch box, reused patch after patch.
A layer reads its input's buffer in place where its box spans the same columns (rows further in, a
row offset); else, and always from the stage's image, a `copy_region` record first gathers the box
it reads into a buffer of its own. The stage's last layer writes each patch into a buffer of its
own, and a `copy_region` puts it in place in the whole output.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from cmx_gen.lower.delegate.patches import Box, Stage, channels, hw, tensor_inputs, window
from cmx_gen.lower.delegate.plan import Layer
from cmx_gen.lower.delegate.work_memory import Buffer

WINDOW_KINDS = ("conv", "conv_general", "depthwise_conv", "depthwise_3x3")


def patch_key(node: torch.fx.Node) -> str:
    """The buffer the stage's last layer writes one patch into."""
    return f"{node.name}:patch"


def gather_key(node: torch.fx.Node, k: int) -> str:
    """The buffer the box a layer reads of its k-th input is gathered into."""
    return f"{node.name}:in{k}"


def gathered(stage: Stage) -> dict[tuple[torch.fx.Node, int], torch.fx.Node]:
    """(layer, input position) -> the input, where the layer reads a box gathered by copy_region."""
    out = {}
    for node in stage.layers:
        for k, source in enumerate(tensor_inputs(node, (stage.image,))):
            if source is stage.image or any(
                (need.w0, need.w1) != (b[source].w0, b[source].w1)
                for p, b in enumerate(stage.boxes)
                for need in (stage.needs(p, node, source),)
            ):
                out[(node, k)] = source
    return out


def buffers(stage: Stage, index: dict[torch.fx.Node, int]) -> list[Buffer]:
    """The buffers of one patch (every patch reuses them), in layer indices of the subgraph. The
    whole output's buffer and each layer's scratch are the schedule's own (schedule.py)."""
    out = []
    for node in stage.layers:
        at = index[node]
        if node is stage.output:
            out.append(Buffer(patch_key(node), stage.largest(node), at, at))
        else:
            out.append(Buffer(node.name, stage.largest(node), at, max(index[u] for u in node.users)))
    for (node, k), source in gathered(stage).items():
        size = max(need.rows * need.cols for p in range(len(stage.boxes)) for need in (stage.needs(p, node, source),))
        out.append(Buffer(gather_key(node, k), size * channels(source), index[node], index[node]))
    return out


def _copy(debug: int, node: str, src: tuple[int, Box], dst: tuple[int, Box], box: Box, ch: int) -> Layer:
    """copy_region of `box` of an image from a buffer (operand, the box it holds) into another."""
    (src_op, src_box), (dst_op, dst_box) = src, dst
    return Layer(
        "copy_region",
        {
            "input": src_op,
            "input_at": ((box.h0 - src_box.h0) * src_box.cols + box.w0 - src_box.w0) * ch,
            "output": dst_op,
            "output_at": ((box.h0 - dst_box.h0) * dst_box.cols + box.w0 - dst_box.w0) * ch,
            "rows": box.rows,
            "row_bytes": box.cols * ch,
            "input_stride": src_box.cols * ch,
            "output_stride": dst_box.cols * ch,
        },
        debug,
        node,
    )


def records(
    stage: Stage,
    whole: Callable[[torch.fx.Node], Layer],
    offsets: dict[str, int],
    operand: Callable[[torch.fx.Node], int],
) -> list[Layer]:
    """Every patch's records, patch after patch. `whole(node)` is the layer's record over its whole
    image (its constants, quantization and kernel); `operand` places the image and the output."""
    copies = gathered(stage)
    made = {node: whole(node) for node in stage.layers}
    out: list[Layer] = []
    for p, boxes in enumerate(stage.boxes):
        for node in stage.layers:
            layer = made[node]
            box = boxes[node]
            inputs = []
            for k, source in enumerate(tensor_inputs(node, (stage.image,))):
                need = stage.needs(p, node, source)
                if source is stage.image:
                    held = (operand(source), Box.whole(source))
                else:
                    held = (offsets[source.name], boxes[source])
                if (node, k) in copies:
                    gather = (offsets[gather_key(node, k)], need)
                    out.append(_copy(layer.debug, node.name, held, gather, need, channels(source)))
                    inputs.append(gather[0])
                else:
                    inputs.append(held[0] + (need.h0 - held[1].h0) * held[1].cols * channels(source))
            target = offsets[patch_key(node)] if node is stage.output else offsets[node.name]
            out.append(Layer(layer.op, _fields(node, layer, box, inputs, target), layer.debug, node.name))
            if node is stage.output:
                whole_output = (operand(node), Box.whole(node))
                out.append(_copy(layer.debug, node.name, (target, box), whole_output, box, channels(node)))
    return out


def _fields(node: torch.fx.Node, layer: Layer, box: Box, inputs: list[int], target: int) -> dict[str, int]:
    """The layer's fields for one patch: its operands, its dims and padding over the boxes."""
    fields = dict(layer.fields)
    win = window(node)
    if win is None:  # a same-shape add: the box's values, the inputs in the layer's order
        count = box.rows * box.cols * channels(node)
        fields.update(input1=inputs[0], input2=inputs[1], output=target, count=count, block=count)
        return fields
    if layer.op not in WINDOW_KINDS:
        raise ValueError(f"{node.name}: a {layer.op} record cannot run patch by patch")
    read = win.reads(box, hw(node.all_input_nodes[0]))
    pad_h, pad_w = win.pads(box)
    fields.update(
        input=inputs[0],
        output=target,
        input_h=read.rows,
        input_w=read.cols,
        output_h=box.rows,
        output_w=box.cols,
        pad_h=pad_h,
        pad_w=pad_w,
    )
    return fields
