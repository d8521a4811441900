"""`precision = "int16"` (8w16a): convolutions, depthwise convolutions, fully connected layers, adds,
multiplications, LSTMs, batch matmuls and softmaxes read and write 16-bit activations, symmetric (zero point
0, [-32767, 32767], upstream's INT16_ACTIVATION_PER_TENSOR_QSPEC), with int8 weights; the backend runs them
on CMSIS-NN's s16 kernels (ops/s16_ops.py, delegate/s16_layers.py). Per-layer overrides name a part as
`--keep-fp32` does: `--precision-for head=int16`.

The quantizer annotates as for int8; `widen_annotations` then gives the chosen layers' activation
specs 16 bits, and what carries their output on (a fused activation, a pool, a reshape, a selection, a
concat, a scaling by a constant) follows them; a softmax's output is Q0.15, and a sigmoid's or tanh's
input a power-of-two scale (its producer's output too) and its output Q0.15, as CMSIS-NN's s16 kernels take them.
Where an int8 layer meets an int16 one, prepare_pt2e observes both sides and convert_pt2e requantizes
between them (ops/s16_ops.py tabulates the int8 to int16 step)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import partial

import torch

from cmx_gen.common.goals import Precision, parse_precision_override
from cmx_gen.lower.facts import LowerOptions
from cmx_gen.lower.keep_fp32 import last_override, names_nothing, selects

# The layers that take int16 activations (after the exact rewrites: 1-D layers are 2-D), and the
# activations fused into them. A convolution's or linear layer's weight and bias stay int8 and int32.
WEIGHTED = ("aten.conv2d.default", "aten.linear.default")
BINARY = ("aten.add.Tensor", "aten.mul.Tensor")
TWO_ACTIVATIONS = (*BINARY, "cmx.bmm.default")  # the layers that read two activations
SOFTMAX = ("aten.softmax.int", "aten._softmax.default")
WIDENED = (*WEIGHTED, *TWO_ACTIVATIONS, "cmx.lstm.default", *SOFTMAX)
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
                f"--precision-for {text} names no convolution, linear layer, add, multiplication, LSTM, batch matmul or softmax of the model",
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
        if target == "aten.mul.Tensor" and node.args[0] in widened and _factor(graph, node) > 0:
            _widen_scaling(node, _factor(graph, node), int16)
            widened.add(node)
        elif target in SQUASHING and _squashes_widened(node, widened, default, overrides):
            _widen_squashing(node, int16)
            widened.add(node)
        elif target in WIDENED:
            if chosen(node, default, overrides) != "int16" or not _of_tensors(node, target):
                continue
            count += 1
            if target in SOFTMAX:
                _widen_softmax(node, int16)
            else:
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
    _unshare_int8_readers(graph, widened)
    return count


def _unshare_int8_readers(graph: torch.fx.GraphModule, widened: set[torch.fx.Node]) -> None:
    """An int8 reader that shared a widened node's quantization (own_ops reads an annotated producer at
    its output scale: a LayerNorm after a residual add) reads an int8 copy of it instead: its input
    observed apart, requantized from int16 at the edge (prepare_pt2e refused the sharing: KeyError)."""
    from executorch.backends.cortex_m.quantizer.quantization_configs import INT8_ACTIVATION_PER_TENSOR_QSPEC
    from torchao.quantization.pt2e.quantizer import SharedQuantizationSpec

    for node in graph.graph.nodes:
        annotation = node.meta.get("quantization_annotation")
        if node in widened or annotation is None:
            continue
        for arg, spec in list(annotation.input_qspec_map.items()):
            if isinstance(spec, SharedQuantizationSpec):
                shared = spec.edge_or_node
                source = shared[0] if isinstance(shared, tuple) else shared
                if source in widened:
                    annotation.input_qspec_map[arg] = INT8_ACTIVATION_PER_TENSOR_QSPEC


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
    "aten.transpose.int",  # an attention's heads split and merged, its keys transposed
    "aten.permute.default",
)


def _of_tensors(node: torch.fx.Node, target: str) -> bool:
    """An add or multiplication of two computed tensors (one by a constant, a scaling, stays int8: the
    int8 path runs it as a table; CMSIS-NN's s16 kernels take two tensors); a softmax over the last
    dimension (arm_softmax_s16's rows)."""
    if target in SOFTMAX:
        value = node.meta.get("val")
        return value is not None and int(str(node.args[1])) % value.dim() == value.dim() - 1
    if target not in BINARY:
        return True
    return all(isinstance(a, torch.fx.Node) and a.op in ("call_function", "placeholder") for a in node.args[:2])


def _factor(graph: torch.fx.GraphModule, node: torch.fx.Node) -> float:
    """The number a multiplication scales its first operand by (a Python number or a one-element constant:
    an attention's 1/sqrt(d)); 0 where it multiplies by anything else."""
    factor = node.args[1] if len(node.args) > 1 else None
    if isinstance(factor, torch.fx.Node) and factor.op == "get_attr":
        factor = getattr(graph, str(factor.target), None)
    if isinstance(factor, torch.Tensor) and factor.numel() == 1:
        factor = float(factor.reshape(-1)[0])
    return float(factor) if isinstance(factor, (int, float)) else 0.0


# sigmoid and tanh (CMSIS-NN's arm_nn_activation_s16 reads Q3.12 after a left shift: a power-of-two input
# scale) of a program input or after a layer that requantizes its output (so either's scale can be the power
# of two)
SQUASHING = ("aten.sigmoid.default", "aten.sigmoid_.default", "aten.tanh.default", "aten.tanh_.default")
REQUANTIZING = (*WEIGHTED, *TWO_ACTIVATIONS)


def _squashes_widened(
    node: torch.fx.Node, widened: set[torch.fx.Node], default: Precision, overrides: tuple[str, ...]
) -> bool:
    source = node.args[0]
    if not isinstance(source, torch.fx.Node) or chosen(node, default, overrides) != "int16":
        return False
    if source.op == "placeholder":  # each reader's quantize is made from the float input
        return True
    # the layer's output scale changes for it: no other reader may read it at another int16 scale
    return source in widened and str(source.target) in REQUANTIZING and len(source.users) == 1


def _pot_int16_spec() -> object:
    """Upstream's int16 activation spec with its scale rounded up to a power of two."""
    from executorch.backends.cortex_m.quantizer.quantization_configs import INT16_ACTIVATION_PER_TENSOR_QSPEC

    from cmx_gen.lower.observers import PowerOfTwoMinMaxObserver

    return dataclasses.replace(INT16_ACTIVATION_PER_TENSOR_QSPEC, observer_or_fake_quant_ctr=PowerOfTwoMinMaxObserver)


def _widen_squashing(node: torch.fx.Node, int16: object) -> None:
    """A sigmoid or tanh: its producer's output and its input int16 at a power-of-two scale, its output
    arm_nn_activation_s16's Q0.15 (zero point 0)."""
    source = node.args[0]
    annotation, made = node.meta.get("quantization_annotation"), source.meta.get("quantization_annotation")  # type: ignore[union-attr]
    if annotation is None or (made is None and source.op != "placeholder"):  # type: ignore[union-attr]
        return
    pot = _pot_int16_spec()
    if made is not None:  # a program input is quantized as its reader's input spec says
        made.output_qspec = pot
    annotation.input_qspec_map = {source: pot}
    annotation.output_qspec = _q15_spec(int16)


def _widen_softmax(node: torch.fx.Node, int16: object) -> None:
    """A softmax's input int16, its output arm_softmax_s16's fixed Q0.15 (zero point 0)."""
    annotation = node.meta.get("quantization_annotation")
    if annotation is None:
        return
    _widen_specs(node, int16, skip=set())
    annotation.output_qspec = _q15_spec(int16)


def _q15_spec(int16: object) -> object:
    """The fixed output of CMSIS-NN's s16 softmax and sigmoid/tanh: Q0.15, zero point 0, in `int16`'s range."""
    from torchao.quantization.pt2e.quantizer import FixedQParamsQuantizationSpec

    from cmx_gen.lower.host_models.s16_models import Q15_SCALE

    return FixedQParamsQuantizationSpec(
        dtype=torch.int16,
        scale=Q15_SCALE,
        zero_point=0,
        quant_min=int16.quant_min,  # type: ignore[attr-defined]
        quant_max=int16.quant_max,  # type: ignore[attr-defined]
        qscheme=torch.per_tensor_affine,
    )


def _widen_scaling(node: torch.fx.Node, factor: float, int16: object) -> None:
    """A scaling of an int16 tensor by `factor` keeps its integers: its input int16, its output's scale the
    input's times the factor (a derived spec), so ops/s16_ops.py drops it."""
    from torchao.quantization.pt2e.quantizer import DerivedQuantizationSpec, QuantizationAnnotation

    source = node.args[0]
    if not isinstance(source, torch.fx.Node):
        return
    annotation = QuantizationAnnotation(input_qspec_map={source: int16}, _annotated=True)
    node.meta["quantization_annotation"] = annotation  # the cortex_m quantizer leaves a scaling alone

    def derive(observers: list) -> tuple[torch.Tensor, torch.Tensor]:  # type: ignore[type-arg]
        scale, zero_point = observers[0].calculate_qparams()
        return scale * factor, zero_point

    annotation.output_qspec = DerivedQuantizationSpec(
        derived_from=[(source, node)],
        derive_qparams_fn=derive,
        dtype=torch.int16,
        quant_min=int16.quant_min,  # type: ignore[attr-defined]
        quant_max=int16.quant_max,  # type: ignore[attr-defined]
        qscheme=int16.qscheme,  # type: ignore[attr-defined]
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


def _reads_as_activation(user: torch.fx.Node, node: torch.fx.Node) -> bool:
    """Whether `user` reads `node` as an activation: its first argument, or either of an add's, a
    multiplication's or a batch matmul's two."""
    two = str(user.target) in TWO_ACTIVATIONS
    return bool(user.args) and (user.args[0] is node or (two and len(user.args) > 1 and user.args[1] is node))


def _widen_producers(graph: torch.fx.GraphModule, widened: set[torch.fx.Node], int16: object) -> None:
    """A program input, or a reshape of one (a 1-D signal made 2-D), every reader of which reads int16 is
    quantized to int16 itself, or its int8 copy would be requantized to 16 bits having lost the bits.
    (An int8 layer's output stays int8: its kernel writes int8; an int16 reader gets it requantized,
    ops/s16_ops.py.) Walked from the output back, so a chain of reshapes widens whole."""
    for node in reversed(list(graph.graph.nodes)):
        carried = node.op == "call_function" and str(node.target) in CARRIED and not str(node.target) in FUSED
        if node in widened or not node.users or not (node.op == "placeholder" or carried):
            continue
        if not all(user in widened and _reads_as_activation(user, node) for user in node.users):
            continue
        if carried and not (isinstance(node.args[0], torch.fx.Node) and node.args[0].op == "placeholder"):
            continue  # a reshape of an int8 layer's output: that layer writes int8
        _widen_specs(node, int16, skip=set())
        widened.add(node)
