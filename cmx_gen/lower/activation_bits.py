"""`precision = "int16"` (8w16a): convolutions, depthwise convolutions, fully connected layers, adds and
multiplications read and write 16-bit activations, symmetric (zero point 0, [-32767, 32767], upstream's
INT16_ACTIVATION_PER_TENSOR_QSPEC), with int8 weights; the backend runs them on CMSIS-NN's s16 kernels
(ops/s16_ops.py, delegate/s16_layers.py). Per-layer overrides name a part as `--keep-fp32` does:
`--precision-for head=int16`.

The quantizer annotates as for int8; `widen_annotations` then gives the chosen layers' activation
specs 16 bits, and what carries their output on (a fused activation, a pool, a reshape) follows them.
Where an int8 layer meets an int16 one, prepare_pt2e observes both sides and convert_pt2e requantizes
between them (ops/s16_ops.py tabulates the int8 to int16 step)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import torch

from cmx_gen.common.goals import Precision, parse_precision_override
from cmx_gen.lower.facts import LowerOptions
from cmx_gen.lower.keep_fp32 import last_override, names_nothing, selects

# The layers that take int16 activations (after the exact rewrites: 1-D layers are 2-D), and the
# activations fused into them. A convolution's or linear layer's weight and bias stay int8 and int32.
WEIGHTED = ("aten.conv2d.default", "aten.linear.default")
WIDENED = (*WEIGHTED, "aten.add.Tensor", "aten.mul.Tensor", "cmx.lstm.default")
FUSED = (
    "aten.relu.default",
    "aten.relu_.default",
    "aten.hardtanh.default",
    "aten.hardtanh_.default",
    "aten.clamp.default",
    "aten.clamp_.default",
)


def chosen(node: torch.fx.Node, default: Precision, overrides: tuple[str, ...]) -> Precision:
    """The precision a layer takes: the last override that names it, else the default."""
    return last_override(node, default, overrides, parse_precision_override)


def layer_default(options: LowerOptions) -> Precision:
    """The precision of a layer no override names. `precision = "auto"` is resolved before lowering
    (precision_choice.py, program/artifacts.py) into int8 and overrides: lowered unresolved it is int8."""
    return "int16" if options.precision == "int16" else "int8"


def any_int16(options: LowerOptions) -> bool:
    """Whether any layer may take int16 activations."""
    return options.precision == "int16" or any(
        parse_precision_override(text)[1] == "int16" for text in options.precision_for
    )


def annotator(graph: torch.fx.GraphModule, options: LowerOptions) -> Callable[[torch.fx.GraphModule], int]:
    """What the quantizer runs after annotating: widen_annotations with the options' precisions, once
    the overrides are checked to name layers of `graph`."""
    layers = [n for n in graph.graph.nodes if n.op == "call_function" and str(n.target) in WIDENED]
    for text in options.precision_for:
        part, _ = parse_precision_override(text)
        if not any(selects(n, part) for n in layers):
            raise names_nothing(
                f"--precision-for {text} names no convolution, linear layer, add, multiplication or LSTM of the model",
                layers,
            )
    return partial(widen_annotations, default=layer_default(options), overrides=options.precision_for)


def _int16_spec() -> object:
    from executorch.backends.cortex_m.quantizer.quantization_configs import INT16_ACTIVATION_PER_TENSOR_QSPEC

    return INT16_ACTIVATION_PER_TENSOR_QSPEC


def widen_annotations(graph: torch.fx.GraphModule, default: Precision, overrides: tuple[str, ...]) -> int:
    """After the quantizer annotated `graph`: each chosen layer's int8 activation specs (its input and
    output, not its weight or bias) become int16, and so do those of what carries its output on unchanged
    in value or layout (a fused activation, a BatchNorm before folding, a reshape, the program's output).
    Returns how many layers take int16."""
    int16 = _int16_spec()
    count = 0
    widened: set[torch.fx.Node] = set()
    for node in graph.graph.nodes:
        target = str(node.target) if node.op == "call_function" else node.op
        if target in WIDENED:
            if chosen(node, default, overrides) != "int16":
                continue
            count += 1
            _widen_specs(node, int16, skip=set(node.args[1:3]) if target in WEIGHTED else set())
            widened.add(node)
        elif (target in CARRIED and _reads_widened(node, widened)) or (
            target in JOINED and _joins_widened(node, widened)
        ):
            _widen_specs(node, int16, skip=set())
            widened.add(node)
        elif node.op == "output":  # the outputs an int16 layer gives, not an int8 layer's beside them
            values = node.args[0] if isinstance(node.args[0], (list, tuple)) else [node.args[0]]
            _widen_specs(node, int16, skip={v for v in values if v not in widened})
    _widen_producers(graph, widened, int16)
    return count


# What carries a widened layer's output on: its activation, a BatchNorm the quantizer folds into it, the
# reshapes and the selections (they move no value), the pools.
CARRIED = (
    *FUSED,
    "aten.batch_norm.default",
    "aten._native_batch_norm_legit_no_training.default",
    "aten.flatten.using_ints",
    "aten.view.default",
    "aten.reshape.default",
    "aten.squeeze.dim",
    "aten.squeeze.dims",
    "aten.clone.default",
    "aten.unsqueeze.default",
    "aten.dropout.default",
    "aten.max_pool2d.default",
    "aten.avg_pool2d.default",
    "aten.select.int",  # a sequence's last step
    "aten.slice.Tensor",
)


def _reads_widened(node: torch.fx.Node, widened: set[torch.fx.Node]) -> bool:
    return bool(node.args) and node.args[0] in widened


# What joins widened layers' outputs unchanged in value: a concat (a bidirectional LSTM's directions).
JOINED = ("aten.cat.default", "aten.concat.default")


def _joins_widened(node: torch.fx.Node, widened: set[torch.fx.Node]) -> bool:
    parts = node.args[0] if node.args and isinstance(node.args[0], (list, tuple)) else []
    return bool(parts) and all(part in widened for part in parts)


def _widen_specs(node: torch.fx.Node, int16: object, skip: set[object]) -> None:
    """The node's int8 activation specs (its inputs but `skip`, and its output) as int16."""
    from torchao.quantization.pt2e.quantizer import QuantizationSpec

    annotation = node.meta.get("quantization_annotation")
    if annotation is None:
        return
    for arg, spec in list(annotation.input_qspec_map.items()):
        if arg not in skip and isinstance(spec, QuantizationSpec) and spec.dtype == torch.int8:
            annotation.input_qspec_map[arg] = int16
    if isinstance(annotation.output_qspec, QuantizationSpec) and annotation.output_qspec.dtype == torch.int8:
        annotation.output_qspec = int16


def _widen_producers(graph: torch.fx.GraphModule, widened: set[torch.fx.Node], int16: object) -> None:
    """A program input, or a reshape of one (a 1-D signal made 2-D), every reader of which reads int16 is
    quantized to int16 itself, or its int8 copy would be requantized to 16 bits having lost the bits.
    (An int8 layer's output stays int8: its kernel writes int8; an int16 reader gets it requantized,
    ops/s16_ops.py.) Walked from the output back, so a chain of reshapes widens whole."""
    for node in reversed(list(graph.graph.nodes)):
        carried = node.op == "call_function" and str(node.target) in CARRIED and not str(node.target) in FUSED
        if node in widened or not node.users or not (node.op == "placeholder" or carried):
            continue
        if not all(user in widened and user.args and user.args[0] is node for user in node.users):
            continue
        if carried and not (isinstance(node.args[0], torch.fx.Node) and node.args[0].op == "placeholder"):
            continue  # a reshape of an int8 layer's output: that layer writes int8
        _widen_specs(node, int16, skip=set())
        widened.add(node)
