"""Int8 layers of cmx-gen's own for what the cortex_m backend leaves in float (issue 34): bmm,
LayerNorm, a mean over some dimensions and an attention's masked softmax (element-wise ops as tables:
tables.py).

Their way through the graphs, like the recurrent layers' (recurrent_graph.py): `aten.layer_norm`
becomes `cmx::layer_norm` (the same float computation) before quantizing; `annotate` observes the
inputs and outputs of LayerNorm and mean nodes no cortex_m annotator took; after the cortex_m passes
`to_int8` replaces `dequantize -> op -> quantize` by `cmx::quantized_layer_norm`,
`cmx::quantized_mean` or `cmx::quantized_bmm` on the int8 tensors. Each one's host implementation
is its C kernel's arithmetic (kernel_models.py), in integers, so the check stays bit-exact.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from cmx_gen.lower.facts import Rewrite
from cmx_gen.lower.fx_nodes import constant_tensor, fx_args, module_path, op_name, source_line
from cmx_gen.lower.host_models import layer_models
from cmx_gen.lower.rewrites import masked_softmax

NORM_GAIN_BITS = 16  # LayerNorm's per-channel gain and bias, in output LSB times 2^16


@torch.library.custom_op("cmx::layer_norm", mutates_args=())
def float_layer_norm(
    x: torch.Tensor, weight: torch.Tensor | None, bias: torch.Tensor | None, eps: float
) -> torch.Tensor:
    """LayerNorm over the last dimension (PyTorch's own)."""
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, eps)


@float_layer_norm.register_fake
def _(x: torch.Tensor, weight: Any, bias: Any, eps: float) -> torch.Tensor:
    return torch.empty_like(x)


@torch.library.custom_op("cmx::quantized_layer_norm", mutates_args=())
def quantized_layer_norm(
    x: torch.Tensor,
    weight: torch.Tensor | None,
    bias: torch.Tensor | None,
    eps: float,
    input_scale: float,
    input_zero_point: int,
    output_scale: float,
    output_zero_point: int,
) -> torch.Tensor:
    """cmx_layer_norm_s8 on the host, bit for bit (layer_models.layer_norm_s8)."""
    norm = layer_norm_args(
        x.shape[-1], weight, bias, eps, (input_scale, input_zero_point), (output_scale, output_zero_point)
    )
    return torch.from_numpy(layer_models.layer_norm_s8(x.numpy(), *norm)).reshape(x.shape)


@quantized_layer_norm.register_fake
def _(x: torch.Tensor, *rest: Any) -> torch.Tensor:
    return torch.empty_like(x, dtype=torch.int8)


@torch.library.custom_op("cmx::bmm", mutates_args=())
def float_bmm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """torch.bmm, as one op of cmx-gen's so that upstream's passes leave it to cmx-gen."""
    return torch.bmm(a, b)


@float_bmm.register_fake
def _(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a.new_empty((a.shape[0], a.shape[1], b.shape[2]))


@torch.library.custom_op("cmx::quantized_bmm", mutates_args=())
def quantized_bmm(
    a: torch.Tensor,
    a_offset: int,
    b: torch.Tensor,
    b_offset: int,
    b_transposed: bool,
    output_offset: int,
    multiplier: int,
    shift: int,
) -> torch.Tensor:
    """arm_batch_matmul_s8 on the host (layer_models.bmm_s8); b is [batch][inner][cols], or
    [batch][cols][inner] when b_transposed."""
    rhs = b.numpy() if b_transposed else b.numpy().transpose(0, 2, 1)
    return torch.from_numpy(layer_models.bmm_s8(a.numpy(), a_offset, rhs, b_offset, output_offset, multiplier, shift))


@quantized_bmm.register_fake
def _(a: torch.Tensor, a_offset: int, b: torch.Tensor, b_offset: int, b_transposed: bool, *rest: Any) -> torch.Tensor:
    return a.new_empty((a.shape[0], a.shape[1], b.shape[1] if b_transposed else b.shape[2]), dtype=torch.int8)


@torch.library.custom_op("cmx::quantized_mean", mutates_args=())
def quantized_mean(
    x: torch.Tensor,
    outer: int,
    count: int,
    inner: int,
    multiplier: int,
    shift: int,
    input_offset: int,
    output_offset: int,
    shape: list[int],
) -> torch.Tensor:
    """cmx_mean_s8 on the host (layer_models.mean_s8): x read as [outer][count][inner], summed over count."""
    return torch.from_numpy(
        layer_models.mean_s8(x.numpy(), outer, count, inner, multiplier, shift, input_offset, output_offset)
    ).reshape(shape)


@quantized_mean.register_fake
def _(
    x: torch.Tensor, outer: int, count: int, inner: int, m: int, s: int, i: int, o: int, shape: list[int]
) -> torch.Tensor:
    return x.new_empty(shape, dtype=torch.int8)


def layer_norm_args(
    channels: int, weight: Any, bias: Any, eps: float, x_q: tuple[float, int], y_q: tuple[float, int]
) -> tuple[int, int, int, NDArray[np.int64], NDArray[np.int64]]:
    """cmx_layer_norm_s8's integers: input offset, output offset, the variance's epsilon term
    (C^2 eps / s_in^2), and each channel's gain (gamma / s_out) and bias (beta / s_out) in 2^-16 LSB."""
    (x_scale, x_zp), (y_scale, y_zp) = x_q, y_q
    gamma = np.ones(channels) if weight is None else weight.detach().to(torch.float64).numpy().reshape(-1)
    beta = np.zeros(channels) if bias is None else bias.detach().to(torch.float64).numpy().reshape(-1)
    unit = float(1 << NORM_GAIN_BITS) / y_scale
    gains = np.clip(np.round(gamma * unit), -(2**31), 2**31 - 1).astype(np.int64)
    biases = np.clip(np.round(beta * unit), -(2**31), 2**31 - 1).astype(np.int64)
    eps_term = int(round(channels * channels * eps / (x_scale * x_scale)))
    return -x_zp, y_zp, eps_term, gains, biases


def mean_multiplier(count: int, x_q: tuple[float, int], y_q: tuple[float, int]) -> tuple[int, int]:
    """(multiplier, shift) that takes a sum of `count` input steps to output steps."""
    from cmx_gen.lower.ops.lstm import multiplier

    return multiplier(x_q[0] / (count * y_q[0]))


def as_own_op(graph: torch.fx.Graph, node: torch.fx.Node) -> Rewrite | None:
    """`aten.layer_norm` over the last dimension into `cmx::layer_norm`, `aten.bmm` into `cmx::bmm`
    (int8 after the cortex_m passes)."""
    if node.target == torch.ops.aten.bmm.default:
        activations = not any(_from_constant(a) for a in fx_args(node)[:2])
        if not activations:  # a constant operand: upstream's path takes it
            return None
        return _replace(
            graph, node, torch.ops.cmx.bmm.default, tuple(fx_args(node)[:2]), "CMSIS-NN's arm_batch_matmul_s8"
        )
    if node.target != torch.ops.aten.layer_norm.default:
        return None
    args = fx_args(node)
    x, shape = args[0], args[1]
    weight = args[2] if len(args) > 2 else None
    bias = args[3] if len(args) > 3 else None
    eps = float(str(args[4])) if len(args) > 4 else 1e-5
    if len(list(shape)) != 1:
        return None
    return _replace(
        graph, node, torch.ops.cmx.layer_norm.default, (x, weight, bias, eps), "cmx-gen's cmx_layer_norm_s8"
    )


def _from_constant(node: Any) -> bool:
    """A value made from a parameter or constant alone (through views and transposes)."""
    while isinstance(node, torch.fx.Node) and node.op == "call_function" and len(node.all_input_nodes) == 1:
        node = node.all_input_nodes[0]
    return isinstance(node, torch.fx.Node) and node.op == "get_attr"


def _replace(graph: torch.fx.Graph, node: torch.fx.Node, target: Any, args: tuple[Any, ...], kernel: str) -> Rewrite:
    """`node` replaced by a call of cmx-gen's float op `target` (the same value, provenance and user's
    line), named as the rewrite."""
    with graph.inserting_before(node):
        own = graph.call_function(target, args)
    own.meta.update({k: v for k, v in node.meta.items() if k in ("stack_trace", "nn_module_stack", "from_node", "val")})
    node.replace_all_uses_with(own)
    graph.erase_node(node)
    kind = op_name(node).removeprefix("aten::")
    return Rewrite(
        node=node.name,
        op=f"aten::{kind}",
        module=module_path(node),
        source=source_line(node),
        what=f"as cmx::{kind}: int8 on {kernel} in cmx-gen's backend",
    )


# Activations no upstream annotator takes on their own: hardswish and hardsigmoid (portable ExecuTorch
# has no float kernel for them) and LeakyReLU (left float, a flatten after it reshaped a float
# channels-last image on the portable kernel, which gets that wrong: refused).
_STANDALONE_ACTIVATIONS = (
    torch.ops.aten.hardswish.default,
    torch.ops.aten.hardswish_.default,
    torch.ops.aten.hardsigmoid.default,
    torch.ops.aten.hardsigmoid_.default,
    torch.ops.aten.leaky_relu.default,
    torch.ops.aten.leaky_relu_.default,
)


def annotate(graph: torch.fx.GraphModule, skip: frozenset[str] = frozenset()) -> None:
    """Observe the input and output of each LayerNorm, mean, bmm and standalone activation no annotator
    took (_STANDALONE_ACTIVATIONS: each becomes a table, tables.py), as int8 per-tensor; the copies
    after such an activation (a flatten, a transpose) share its quantization, as upstream's
    SharedQspecQuantizer would have had it annotated when it ran."""
    from executorch.backends.cortex_m.quantizer.quantization_configs import (
        INT8_ACTIVATION_PER_TENSOR_QSPEC,
        SOFTMAX_OUTPUT_FIXED_QSPEC,
    )
    from torchao.quantization.pt2e.quantizer import QuantizationAnnotation

    aten, cmx = torch.ops.aten, torch.ops.cmx
    targets = (cmx.layer_norm.default, aten.mean.dim, cmx.bmm.default, masked_softmax.FLOAT)
    for node in graph.graph.nodes:
        if node.op != "call_function" or node.target not in (*targets, *_STANDALONE_ACTIVATIONS):
            continue
        if node.name in skip or node.meta.get("quantization_annotation") is not None:
            continue
        inputs = fx_args(node)[:2] if node.target == cmx.bmm.default else fx_args(node)[:1]
        # a masked softmax's output in arm_softmax_s8's fixed quantization, as upstream's softmax
        softmax = node.target == masked_softmax.FLOAT
        node.meta["quantization_annotation"] = QuantizationAnnotation(
            input_qspec_map={x: _input_spec(x, INT8_ACTIVATION_PER_TENSOR_QSPEC) for x in inputs},
            output_qspec=SOFTMAX_OUTPUT_FIXED_QSPEC if softmax else INT8_ACTIVATION_PER_TENSOR_QSPEC,
            _annotated=True,
        )
        if node.target in _STANDALONE_ACTIVATIONS:
            _share_copies_after(node)


def _share_copies_after(node: torch.fx.Node) -> None:
    """Each unannotated copy op (upstream's shared-quantization list) reading `node`, and so on down a
    chain of them, annotated to share `node`'s quantization (quantized, so upstream folds it)."""
    from executorch.backends.cortex_m.quantizer.quantizer import SharedQspecQuantizer, mark_node_as_annotated
    from torchao.quantization.pt2e.quantizer import SharedQuantizationSpec

    shared = set(SharedQspecQuantizer.SHARED_QSPEC_OPS_DEFAULT)
    for user in list(node.users):
        if user.target not in shared or user.meta.get("quantization_annotation") is not None:
            continue
        if not user.args or user.args[0] is not node:
            continue
        mark_node_as_annotated(user, {node: SharedQuantizationSpec(node)}, SharedQuantizationSpec((node, user)), True)
        _share_copies_after(user)


def _input_spec(x: Any, default: Any) -> Any:
    """An input produced by an annotated op is read at that op's output scale (no requantize in
    between: softmax's fixed 1/256 reaches the attention's second bmm as it is)."""
    from torchao.quantization.pt2e.quantizer import SharedQuantizationSpec

    producer = x.meta.get("quantization_annotation") if isinstance(x, torch.fx.Node) else None
    if producer is not None and producer.output_qspec is not None:
        return SharedQuantizationSpec(x)
    return default


def qparams_of(node: Any, kind: str, program: Any = None, plain: bool = False) -> tuple[float, int] | None:
    """(scale, zero point) of an int8 `quantize_per_tensor`/`dequantize_per_tensor` node; None for
    anything else, for a dequantize of a constant (cmx-gen's layers take activations only), and with
    `plain` for a tensor whose memory is not in its logical order (channels-last: the kernels walk
    rows of the last dimension)."""
    if not (isinstance(node, torch.fx.Node) and op_name(node).split("::")[-1] == kind):
        return None
    args = fx_args(node)
    if len(args) <= 5 or args[5] != torch.int8:
        return None
    source = args[0]
    if kind == "dequantize_per_tensor" and isinstance(source, torch.fx.Node) and source.op == "placeholder":
        if program is not None and constant_tensor(program, source) is not None:
            return None
    val = node.meta.get("val")
    if plain and (val is None or list(val.dim_order()) != list(range(val.dim()))):
        return None
    return float(args[1]), int(args[2])


def to_int8(program: Any) -> None:
    """Replace `dequantize -> op -> quantize` (LayerNorm, mean, bmm) in the lowered program, edited in
    place, by cmx-gen's int8 op; anything else stays as it is (element-wise runs: tables.py)."""
    graph = program.graph_module.graph
    for node in list(graph.nodes):
        name = op_name(node)
        if not name or len(node.users) != 1 or not fx_args(node):
            continue
        dq, q = fx_args(node)[0], next(iter(node.users))
        x_q = qparams_of(dq, "dequantize_per_tensor", program, plain=True)
        y_q = qparams_of(q, "quantize_per_tensor", program, plain=True)
        if x_q is None or y_q is None:
            continue
        if name == "cmx::bmm":
            made = _int8_bmm(graph, node, x_q, y_q, q, program)
        else:
            made = _int8_call(graph, node, name, program, fx_args(dq)[0], x_q, y_q, q)
        if made is None:
            continue
        made.meta = {**node.meta, "val": q.meta["val"]}
        q.replace_all_uses_with(made)
        graph.erase_node(q)
        inputs = [a for a in fx_args(node) if isinstance(a, torch.fx.Node)]
        graph.erase_node(node)
        drop_unused(graph, inputs)
    graph.lint()
    program.graph_module.recompile()


def _int8_call(
    graph: torch.fx.Graph,
    node: torch.fx.Node,
    name: str,
    program: Any,
    xq: Any,
    x_q: tuple[float, int],
    y_q: tuple[float, int],
    before: torch.fx.Node,
) -> torch.fx.Node | None:
    args = fx_args(node)
    with graph.inserting_before(before):
        if name == "cmx::layer_norm":
            _, weight, bias, eps = args
            return graph.call_function(torch.ops.cmx.quantized_layer_norm.default, (xq, weight, bias, eps, *x_q, *y_q))
        if name == "cmx::masked_softmax":
            return masked_softmax.int8_call(graph, xq, list(args[1]), x_q, y_q)
        if name == "aten::mean":
            shape = [int(s) for s in node.args[0].meta["val"].shape]  # type: ignore[union-attr]
            dims = sorted(
                int(d) % len(shape) for d in (args[1] if len(args) > 1 and args[1] is not None else range(len(shape)))
            )
            if dims != list(range(dims[0], dims[-1] + 1)):
                return None
            outer, count = math.prod(shape[: dims[0]]), math.prod(shape[dims[0] : dims[-1] + 1])
            inner = math.prod(shape[dims[-1] + 1 :])
            out_shape = [int(s) for s in before.meta["val"].shape]
            mult, shift = mean_multiplier(count, x_q, y_q)
            return graph.call_function(
                torch.ops.cmx.quantized_mean.default, (xq, outer, count, inner, mult, shift, -x_q[1], y_q[1], out_shape)
            )
    return None


def drop_unused(graph: torch.fx.Graph, nodes: list[torch.fx.Node]) -> None:
    """Erase the dequantizes (and the layout copies before them) nothing reads any more."""
    for node in nodes:
        if node.op == "call_function" and not node.users:
            upstream = [a for a in node.all_input_nodes]
            graph.erase_node(node)
            drop_unused(graph, [a for a in upstream if op_name(a) in _TRANSPOSES])


_TRANSPOSES = ("aten::permute_copy", "aten::transpose_copy", "cortex_m::transpose")


def swaps_last_two(node: Any) -> bool:
    """A copy of a 3-D tensor with its last two dimensions swapped (a transpose or a permute)."""
    if not isinstance(node, torch.fx.Node) or op_name(node) not in _TRANSPOSES:
        return False
    args = fx_args(node)
    perm = [int(str(p)) % 3 for p in args[1]] if op_name(node) != "aten::transpose_copy" else None
    if perm is None:
        swap = sorted(int(str(d)) % 3 for d in args[1:3])
        return swap == [1, 2] and node.meta["val"].dim() == 3
    return perm == [0, 2, 1] and node.meta["val"].dim() == 3


def _int8_bmm(
    graph: torch.fx.Graph,
    node: torch.fx.Node,
    a_q: tuple[float, int],
    y_q: tuple[float, int],
    before: torch.fx.Node,
    program: Any,
) -> torch.fx.Node | None:
    """cmx::quantized_bmm for `dequantize(a) @ dequantize(b) -> quantize`; b taken before a transpose
    of its last two dimensions when it has one (arm_batch_matmul_s8 reads b transposed)."""
    from cmx_gen.lower.ops.lstm import multiplier

    dq_a, dq_b = fx_args(node)[:2]
    b_q = qparams_of(dq_b, "dequantize_per_tensor", program, plain=True)
    if b_q is None:
        return None
    b = fx_args(dq_b)[0]
    transposed = swaps_last_two(b) and len(b.users) == 1
    if transposed:
        b = fx_args(b)[0]
    mult, shift = multiplier(a_q[0] * b_q[0] / y_q[0])
    with graph.inserting_before(before):
        return graph.call_function(
            torch.ops.cmx.quantized_bmm.default,
            (fx_args(dq_a)[0], -a_q[1], b, -b_q[1], transposed, y_q[1], mult, shift),
        )
