"""`weights = "int4"` (4w8a): the weights of convolutions, depthwise convolutions and fully connected
layers quantized to 4 bits, symmetric, in [-8, 7], their activations int8 as before. The quantizer
observes them over that range; the backend stores them two a byte (CMSIS-NN's s4 layout) and runs
CMSIS-NN's s4 kernels on them (delegate/layers.py). Per-layer overrides name a part as `--keep-fp32`
does: `--weights-for blocks.0=int8`.

The 4-bit values are the quantized weights themselves (an int8 tensor whose values lie in [-8, 7]),
so every host reference computes them as it computes int8 weights: only their storage and the kernel
that reads them change."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import torch

from cmx_gen.common.goals import WeightBits, parse_weight_override
from cmx_gen.lower.facts import LowerOptions
from cmx_gen.lower.keep_fp32 import last_override, names_nothing, selects

INT4_MIN, INT4_MAX = -8, 7

# The layers whose weights can take 4 bits: the targets after the exact rewrites (1-D layers are 2-D).
_WEIGHTED = ("aten.conv2d.default", "aten.linear.default")


def chosen(node: torch.fx.Node, default: WeightBits, overrides: tuple[str, ...]) -> WeightBits:
    """The weights a layer takes: the last override that names it, else the default."""
    return last_override(node, default, overrides, parse_weight_override)


def layer_default(options: LowerOptions) -> WeightBits:
    """The precision of a layer no override names. `weights = "auto"` is resolved before lowering
    (weight_choice.py, program/artifacts.py) into int8 and overrides: lowered unresolved it is int8."""
    return "int4" if options.weights == "int4" else "int8"


def any_int4(options: LowerOptions) -> bool:
    """Whether any layer may take int4 weights (the backend then looks for them)."""
    overrides = options.weights_for
    return layer_default(options) == "int4" or any(parse_weight_override(text)[1] == "int4" for text in overrides)


def annotator(graph: torch.fx.GraphModule, options: LowerOptions) -> Callable[[torch.fx.GraphModule], int]:
    """What the quantizer runs after annotating (keep_fp32.quantizer's `then`): narrow_annotations with
    the options' precisions, once they are checked to name layers of `graph`."""
    check_overrides(graph, options.weights_for)
    return partial(narrow_annotations, default=layer_default(options), overrides=options.weights_for)


def check_overrides(graph: torch.fx.GraphModule, overrides: tuple[str, ...]) -> None:
    """Each override names at least one weighted layer (else the user's intent would be dropped)."""
    layers = [n for n in graph.graph.nodes if n.op == "call_function" and str(n.target) in _WEIGHTED]
    for text in overrides:
        part, _ = parse_weight_override(text)
        if not any(selects(n, part) for n in layers):
            raise names_nothing(f"--weights-for {text} names no convolution or linear layer of the model", layers)


def narrow_annotations(graph: torch.fx.GraphModule, default: WeightBits, overrides: tuple[str, ...]) -> int:
    """After the quantizer annotated `graph`: each weighted layer that takes int4 observes its weight
    over [-8, 7] (same dtype, scheme and axis). Returns how many layers take int4."""
    count = 0
    for node in graph.graph.nodes:
        if node.op != "call_function" or str(node.target) not in _WEIGHTED:
            continue
        annotation = node.meta.get("quantization_annotation")
        if annotation is None or len(node.args) < 2 or chosen(node, default, overrides) != "int4":
            continue
        weight = node.args[1]
        spec = annotation.input_qspec_map.get(weight)
        if spec is None or getattr(spec, "dtype", None) != torch.int8:
            continue
        annotation.input_qspec_map[weight] = dataclasses.replace(spec, quant_min=INT4_MIN, quant_max=INT4_MAX)
        count += 1
    return count


def fits_int4(values: np.ndarray[Any, Any]) -> bool:
    """Whether int8 weights lie in [-8, 7]: an int4 layer's always do; an int8 layer's never do unless
    all zero (symmetric quantization puts each channel's largest weight at +-127)."""
    return bool(values.size) and int(values.min()) >= INT4_MIN and int(values.max()) <= INT4_MAX


def pack_int4(values: np.ndarray[Any, Any]) -> bytes:
    """Weights in [-8, 7], in their flat order, two a byte, the first in the low nibble (CMSIS-NN's s4
    layout: [1, 2, 3, 4] as [0x21, 0x43]); an odd count's last byte holds one."""
    flat = values.astype(np.int8).reshape(-1)
    if flat.size % 2:
        flat = np.concatenate([flat, np.zeros(1, np.int8)])
    low, high = flat[0::2].view(np.uint8) & 0x0F, flat[1::2].view(np.uint8) & 0x0F
    return (low | (high << 4)).astype(np.uint8).tobytes()


def unpack_int4(data: bytes, count: int) -> np.ndarray[Any, Any]:
    """pack_int4's inverse: `count` int8 values in [-8, 7] from the first (count + 1) // 2 bytes."""
    raw = np.frombuffer(data, dtype=np.uint8, count=(count + 1) // 2)
    out = np.empty(raw.size * 2, np.int8)
    out[0::2] = ((raw & 0x0F).astype(np.int16) ^ 8) - 8
    out[1::2] = ((raw >> 4).astype(np.int16) ^ 8) - 8
    return out[:count]
