"""Patch-based execution (MCUNetV2): the subgraph's first layers, where the images are large, run
one patch of their last output at a time, each patch with the halo its receptive field reads, and
each patch's result is copied into that output. Only one patch's tensors are alive at once, so the
early layers' peak falls to the image, that output and one patch.

Bit-exact against layer-by-layer execution by construction: every output value is computed by
the same kernel call from the same input values (a patch's box holds its whole receptive field),
padding is applied only at the image's real border (a box's `pad` is its share of the layer's),
and requantization is the layer's own. What it costs: the halos' values are computed once per
patch that reads them (`extra_macs`).

A stage is a prefix of the subgraph's layers that reads one subgraph input and hands one tensor on:
convolutions, depthwise convolutions and same-shape adds over batch-1 images (no global operator).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import torch

from cmx_gen.lower.delegate.kernel_choice import node_val
from cmx_gen.lower.fx_nodes import fx_args, op_name

WINDOWED = ("cortex_m::quantized_conv2d", "cortex_m::quantized_depthwise_conv2d")
ELEMENTWISE = ("cortex_m::quantized_add",)
GRIDS = tuple((n, n) for n in range(2, 9))  # patch grids a schedule tries (rows x columns of patches)


@dataclass(frozen=True)
class Box:
    """Rows [h0, h1) and columns [w0, w1) of an image."""

    h0: int
    h1: int
    w0: int
    w1: int

    @property
    def rows(self) -> int:
        return self.h1 - self.h0

    @property
    def cols(self) -> int:
        return self.w1 - self.w0

    @classmethod
    def whole(cls, node: torch.fx.Node) -> Box:
        """All of a node's image."""
        h, w = hw(node)
        return cls(0, h, 0, w)

    def union(self, other: Box | None) -> Box:
        if other is None:
            return self
        return Box(min(self.h0, other.h0), max(self.h1, other.h1), min(self.w0, other.w0), max(self.w1, other.w1))


def hw(node: torch.fx.Node) -> tuple[int, int]:
    shape = node_val(node).shape
    return int(shape[2]), int(shape[3])


def channels(node: torch.fx.Node) -> int:
    return int(node_val(node).shape[1])


@dataclass(frozen=True)
class Window:
    """How a windowed layer's output position reads its input, per dimension (h, w)."""

    kernel: tuple[int, int]
    stride: tuple[int, int]
    pad: tuple[int, int]
    dilation: tuple[int, int]

    def reads(self, box: Box, size: tuple[int, int]) -> Box:
        """The input box the outputs in `box` read (clipped to the image: the rest is padding)."""
        (h0, h1), (w0, w1) = (
            (
                max(0, lo * self.stride[d] - self.pad[d]),
                min(size[d], (hi - 1) * self.stride[d] - self.pad[d] + (self.kernel[d] - 1) * self.dilation[d] + 1),
            )
            for d, (lo, hi) in enumerate(((box.h0, box.h1), (box.w0, box.w1)))
        )
        return Box(h0, h1, w0, w1)

    def pads(self, box: Box) -> tuple[int, int]:
        """The padding before the box's first row and column: the layer's own at the border, else 0."""
        return max(0, self.pad[0] - box.h0 * self.stride[0]), max(0, self.pad[1] - box.w0 * self.stride[1])


def window(node: torch.fx.Node) -> Window | None:
    """A windowed layer's window; None for an element-wise one."""
    if op_name(node) not in WINDOWED:
        return None
    args = fx_args(node)
    weight = node_val(args[1])
    return Window(
        (int(weight.shape[1]), int(weight.shape[2])),
        (int(args[3][0]), int(args[3][1])),
        (int(args[4][0]), int(args[4][1])),
        (int(args[5][0]), int(args[5][1])),
    )


def tensor_inputs(node: torch.fx.Node, images: Collection[torch.fx.Node]) -> list[torch.fx.Node]:
    """The node's image inputs, in argument order: weights, biases, scratch and an add's constant
    operand (a parameter or buffer: a placeholder or attribute not among the subgraph's `images`)
    left out."""
    if op_name(node) in WINDOWED:
        return [fx_args(node)[0]]
    a, b = fx_args(node)[0], fx_args(node)[4]
    constant = b.op in ("placeholder", "get_attr") and b not in images
    return [a] if constant else [a, b]


def _patchable(node: torch.fx.Node) -> bool:
    name = op_name(node)
    val = node_val(node)
    if name not in WINDOWED + ELEMENTWISE or val is None or val.dim() != 4 or int(val.shape[0]) != 1:
        return False
    if name in ELEMENTWISE:
        a, b = fx_args(node)[0], fx_args(node)[4]
        return all(isinstance(x, torch.fx.Node) and tuple(node_val(x).shape) == tuple(val.shape) for x in (a, b))
    return True


@dataclass(frozen=True)
class Stage:
    """The first `len(layers)` layers run patch by patch over a grid of their output `output`."""

    layers: tuple[torch.fx.Node, ...]
    image: torch.fx.Node  # the one subgraph input they read
    output: torch.fx.Node  # the one tensor they hand on (the last of `layers`)
    grid: tuple[int, int]
    boxes: tuple[
        dict[torch.fx.Node, Box], ...
    ]  # per patch: the box of each layer's output computed, and the image's read

    def needs(self, patch: int, node: torch.fx.Node, source: torch.fx.Node) -> Box:
        """The box of `source` that `node` reads in this patch (its receptive field of its own box)."""
        box = self.boxes[patch][node]
        win = window(node)
        return win.reads(box, hw(source)) if win else box

    def largest(self, node: torch.fx.Node) -> int:
        """Bytes of the node's largest patch box (the image's: of its largest box read)."""
        return max(b[node].rows * b[node].cols for b in self.boxes) * channels(node)

    def extra_macs(self) -> int:
        """MACs computed more than once: the halos, patch by patch."""
        total = 0
        for node in self.layers:
            win = window(node)
            if win is None:
                continue
            per_position = _macs_per_position(node, win)
            h, w = hw(node)
            total += per_position * (sum(b[node].rows * b[node].cols for b in self.boxes) - h * w)
        return total


def _macs_per_position(node: torch.fx.Node, win: Window) -> int:
    taps = win.kernel[0] * win.kernel[1]
    if op_name(node) == "cortex_m::quantized_depthwise_conv2d":
        return taps * channels(node)
    return taps * channels(node) * int(node_val(fx_args(node)[1]).shape[3])


def prefixes(
    compute: tuple[torch.fx.Node, ...], inputs: tuple[torch.fx.Node, ...], outputs: tuple[torch.fx.Node, ...]
) -> list[tuple[int, torch.fx.Node]]:
    """(length, image) of each prefix of the layers that can be a stage: every layer patchable, one
    subgraph input read (by nothing after it) and one tensor handed on, the prefix's last layer."""
    found: list[tuple[int, torch.fx.Node]] = []
    made: set[torch.fx.Node] = set()
    reads: set[torch.fx.Node] = set()
    for k, node in enumerate(compute, start=1):
        sources = tensor_inputs(node, inputs) if _patchable(node) else []
        if not sources or (op_name(node) in ELEMENTWISE and len(sources) != 2):
            break  # (an add of a constant image: its patches would need boxes of the constant)
        made.add(node)
        reads.update(sources)
        outside = reads - made
        if len(outside) != 1:
            continue
        (image,) = outside
        later = compute[k:]
        handed = {n for n in made if n in outputs or any(u in later for u in n.users)}
        if image in inputs and handed == {node} and node not in outputs and not any(u in later for u in image.users):
            found.append((k, image))
    return found


def _edges(size: int, parts: int) -> list[int]:
    return [size * i // parts for i in range(parts + 1)]


def plan_stage(
    compute: tuple[torch.fx.Node, ...], length: int, image: torch.fx.Node, grid: tuple[int, int]
) -> Stage | None:
    """The stage of the first `length` layers over `grid`; None where the grid is finer than the output."""
    layers = compute[:length]
    output = layers[-1]
    height, width = hw(output)
    if grid[0] > height or grid[1] > width:
        return None
    rows, cols = _edges(height, grid[0]), _edges(width, grid[1])
    boxes = []
    for i in range(grid[0]):
        for j in range(grid[1]):
            need: dict[torch.fx.Node, Box] = {output: Box(rows[i], rows[i + 1], cols[j], cols[j + 1])}
            for node in reversed(layers):
                if node not in need:
                    return None  # a layer the stage's output does not read: not a chain to patch
                win = window(node)
                for source in tensor_inputs(node, (image,)):
                    read = win.reads(need[node], hw(source)) if win else need[node]
                    need[source] = read.union(need.get(source))
            boxes.append(need)
    return Stage(layers, image, output, grid, tuple(boxes))
