"""The int16 layers (8w16a, activation_bits.py) as cmx-gen's ops, before upstream's passes see them.

Upstream's cortex_m passes take int8 patterns only: on int16 ones they make int8 kernel calls on int16
tensors, or leave a float `aten.linear` reading int16 data when a ReLU does not fuse. So `to_int16` runs
on the edge program first and replaces each `dequantize(int16) -> layer [-> activation] -> quantize(int16)`
(a convolution, linear layer, add, multiplication, pool, batch matmul, softmax, sigmoid or tanh) by
cmx-gen's s16 op on the int16 tensors (ops/s16_kernel_ops.py): the int8 weights and int32 bias as the
quantizer made them, the multipliers and shifts CMSIS-NN's s16 kernels take; a scaling by a constant that
kept its integers (activation_bits) is dropped. An int8 layer's output into an int16 one becomes
`cmx::quantized_lut_s16` (256 int16 entries), an int16 layer's into an int8 one
`cmx::quantized_narrow_s16` (the int16 values where the int8 output steps up). Only cmx-gen's backend runs these ops
(delegate/s16_layers.py); their Python implementations are the kernels' arithmetic
(host_models/s16_models.py), so the host reference is bit-exact. A layer with no s16 kernel, and any
cortex_m kernel left on int16 data after upstream's passes, is refused in one line."""

from __future__ import annotations

import math
import operator
from typing import Any

import torch

from cmx_gen.common.errors import ExportError
from cmx_gen.lower.fx_nodes import constant_tensor, fx_args, module_path, op_name, source_line
from cmx_gen.lower.host_models import s16_models
from cmx_gen.lower.ops import s16_kernel_ops  # noqa: F401  (registers the cmx::*_s16 ops)
from cmx_gen.lower.ops.lstm import GATE_POWER, multiplier
from cmx_gen.lower.ops.own_ops import swaps_last_two
from cmx_gen.lower.ops.quantized_pattern import fused_end, take_over

_LAYERS = ("aten::convolution", "aten::linear")
_ELEMENTWISE = ("aten::add", "aten::mul")
_POOLS = ("aten::avg_pool2d", "aten::max_pool2d", "aten::max_pool2d_with_indices")
_MATMUL = ("cmx::bmm",)  # own_ops' float bmm
_SOFTMAX = ("aten::_softmax",)
_SQUASHING = ("aten::sigmoid", "aten::tanh")
_TAKEN = (*_LAYERS, *_ELEMENTWISE, *_POOLS, *_MATMUL, *_SOFTMAX, *_SQUASHING)


def int16_qparams(node: Any, kind: str) -> tuple[float, int, int] | None:
    """(scale, quant_min, quant_max) of an int16 per-tensor quantize/dequantize with zero point 0."""
    if not (isinstance(node, torch.fx.Node) and op_name(node) == f"quantized_decomposed::{kind}"):
        return None
    args = fx_args(node)
    if len(args) < 6 or args[5] != torch.int16 or int(args[2]) != 0:
        return None
    return float(args[1]), int(args[3]), int(args[4])


def _weight(program: Any, node: Any) -> tuple[torch.fx.Node, list[float]] | None:
    """The int8 weight constant under a dequantize, and its scale per output channel."""
    name = op_name(node) if isinstance(node, torch.fx.Node) else ""
    if name not in ("quantized_decomposed::dequantize_per_channel", "quantized_decomposed::dequantize_per_tensor"):
        return None
    args = fx_args(node)
    const = constant_tensor(program, args[0]) if isinstance(args[0], torch.fx.Node) else None
    if const is None or const.dtype != torch.int8:
        return None
    if name.endswith("per_tensor"):
        return args[0], [float(args[1])] * int(const.shape[0])
    scales = constant_tensor(program, args[1])
    if scales is None or int(args[3]) != 0:
        return None
    return args[0], [float(s) for s in scales.reshape(-1)]


def _bias(program: Any, node: Any) -> torch.fx.Node | None:
    """The int32 bias constant under its dequantize (None: no bias)."""
    if node is None or not isinstance(node, torch.fx.Node):
        return None
    source = fx_args(node)[0] if op_name(node).startswith("quantized_decomposed::dequantize") else None
    const = constant_tensor(program, source) if isinstance(source, torch.fx.Node) else None
    if const is None or const.dtype != torch.int32:
        raise ExportError(f"int16 layer {node.name}: its bias is not an int32 constant", "report it with the model")
    return source


def _requantize(in_scale: float, weight_scales: list[float], out_scale: float, at: str) -> tuple[list[int], list[int]]:
    pairs = [multiplier(in_scale * w / out_scale) for w in weight_scales]
    if any(shift > s16_models.MAX_SHIFT_S16 for _, shift in pairs):
        raise ExportError(
            f"int16 layer {at}: its output scale is too fine for CMSIS-NN's s16 requantization (shift above 14)",
            "run that layer at int8: --precision-for PART=int8",
        )
    return [m for m, _ in pairs], [s for _, s in pairs]


def int16_source(graph: torch.fx.Graph, quantize: torch.fx.Node) -> torch.fx.Node:
    """An int16 quantize of an int8 dequantize (an int8 layer's output into an int16 one) as
    cmx::quantized_lut_s16: the 256 values the int8 tensor can hold, each dequantized and quantized as the
    two nodes do. Upstream's passes would fold the pair away and hand the int8 bytes to the int16 layer.
    Anything else is returned as it is."""
    source = fx_args(quantize)[0]
    name = op_name(source) if isinstance(source, torch.fx.Node) else ""
    if name != "quantized_decomposed::dequantize_per_tensor" or fx_args(source)[5] != torch.int8:
        return quantize
    table = _through_pair(source, quantize, torch.arange(-128, 128, dtype=torch.int8))
    return _replace_pair(graph, source, quantize, torch.ops.cmx.quantized_lut_s16.default, (table.tolist(),))


def _through_pair(source: torch.fx.Node, quantize: torch.fx.Node, values: torch.Tensor) -> torch.Tensor:
    """What `quantize(source)` gives each of `values`, `source` a dequantize: both as the nodes compute them."""
    floats = torch.ops.quantized_decomposed.dequantize_per_tensor(values, *fx_args(source)[1:6])
    out: torch.Tensor = torch.ops.quantized_decomposed.quantize_per_tensor(floats, *fx_args(quantize)[1:6])
    return out


def _replace_pair(
    graph: torch.fx.Graph, source: torch.fx.Node, quantize: torch.fx.Node, op: Any, args: tuple[Any, ...]
) -> torch.fx.Node:
    """`op` on the dequantize `source`'s integers, then `args`, in place of `quantize`; `source` erased once
    nothing else reads it."""
    with graph.inserting_before(quantize):
        made = graph.call_function(op, (fx_args(source)[0], *args))
    made.meta = {**quantize.meta}
    quantize.replace_all_uses_with(made)
    graph.erase_node(quantize)
    if not source.users:
        graph.erase_node(source)
    return made


def _narrowed(graph: torch.fx.Graph, quantize: torch.fx.Node) -> bool:
    """An int8 quantize of an int16 dequantize (an int16 layer's output into an int8 one) as
    cmx::quantized_narrow_s16: the int8 output of each of the 65,536 int16 values, dequantized and quantized
    as the two nodes do, given by the values where it steps up. Upstream's passes would leave the pair as
    two float kernels outside the delegate, the tensor between them float. True where it was replaced."""
    if op_name(quantize) != "quantized_decomposed::quantize_per_tensor" or fx_args(quantize)[5] != torch.int8:
        return False
    source = fx_args(quantize)[0]
    if op_name(source) != "quantized_decomposed::dequantize_per_tensor" or fx_args(source)[5] != torch.int16:
        return False
    out = _through_pair(source, quantize, torch.arange(-32768, 32768, dtype=torch.int32).to(torch.int16)).numpy()
    if (out[1:] < out[:-1]).any():  # not a staircase: left to the float kernels
        return False
    _replace_pair(graph, source, quantize, torch.ops.cmx.quantized_narrow_s16.default, s16_models.narrowing(out))
    return True


def to_int16(program: Any) -> int:
    """Replace each int16 `dequantize -> layer [-> activation] -> quantize` of the edge program (edited
    in place; a convolution, linear layer, add or pool) by cmx-gen's s16 op, and each int16 dequantize an
    int8 quantize reads by a narrowing. Returns how many it replaced."""
    graph = program.graph_module.graph
    count = 0
    for node in list(graph.nodes):
        if op_name(node) not in _TAKEN or len(node.users) != 1:
            continue
        if _drop_scaling(program, node):
            count += 1
            continue
        first = _values(node)
        if first is None:
            continue
        last, q = fused_end(first)
        out_q = int16_qparams(q, "quantize_per_tensor")
        if out_q is None:
            continue
        made = _s16_call(program, graph, node, out_q, q)
        if made is None:
            continue
        take_over(graph, made, node, q, [q, last, first, node, *fx_args(node)[:3]])
        count += 1
    count += sum(_narrowed(graph, node) for node in list(graph.nodes))
    graph.eliminate_dead_code()
    graph.lint()
    program.graph_module.recompile()
    return count


def _drop_scaling(program: Any, node: torch.fx.Node) -> bool:
    """`dequantize(int16, s) -> mul(c) -> quantize(int16, s * c)` (activation_bits' scaling: the integers
    are kept): its users read the int16 tensor itself. True where it was dropped."""
    if op_name(node) != "aten::mul" or len(node.users) != 1:
        return False
    x, factor = fx_args(node)[:2]
    constant = constant_tensor(program, factor) if isinstance(factor, torch.fx.Node) else None
    q = next(iter(node.users))
    in_q, out_q = int16_qparams(x, "dequantize_per_tensor"), int16_qparams(q, "quantize_per_tensor")
    if constant is None or constant.numel() != 1 or in_q is None or out_q is None:
        return False
    if abs(in_q[0] * float(constant.reshape(-1)[0]) - out_q[0]) > 1e-6 * out_q[0]:
        return False
    q.replace_all_uses_with(fx_args(x)[0])
    return True


def _values(node: torch.fx.Node) -> torch.fx.Node | None:
    """The node that carries a layer's values: itself, or a max pool's getitem 0 (its indices unused)."""
    if op_name(node) != "aten::max_pool2d_with_indices":
        return node
    item = next(iter(node.users))
    return item if item.target is operator.getitem and item.args[1] == 0 else None


def check_no_int16_left(program: Any) -> None:
    """After upstream's passes: no int16 tensor goes into or out of a cortex_m kernel but a quantize or
    dequantize (an int16 pattern cmx-gen does not take would run an int8 kernel on int16 bytes)."""
    for node in program.graph_module.graph.nodes:
        name = op_name(node)
        if not name.startswith("cortex_m::") or "quantize_per_tensor" in name:
            continue
        values = [node, *node.all_input_nodes]
        if any(getattr(v.meta.get("val"), "dtype", None) == torch.int16 for v in values):
            raise unsupported(node, f"{name.split('::')[1]} on int16 data")


def check_all_delegated(program: Any) -> None:
    """After delegation: an int16 op the backend did not take has no kernel anywhere else; refused by the
    user's line rather than left to fail serialization on a missing out variant."""
    for node in program.graph_module.graph.nodes:
        if node.op == "call_function" and op_name(node).startswith("cmx::") and op_name(node).endswith("_s16"):
            raise unsupported(node, f"{op_name(node)} of this shape")


def _s16_call(
    program: Any, graph: torch.fx.Graph, node: torch.fx.Node, out_q: tuple[float, int, int], before: torch.fx.Node
) -> torch.fx.Node | None:
    """The s16 op for `node` whose int16 output quantize is `before` (out_q: its scale and range), inserted
    before it; None when its inputs are not int16 dequantizes (an int8 layer, left to upstream)."""
    name, args = op_name(node), fx_args(node)
    if name in _MATMUL:
        return _bmm_call(graph, node, out_q, before)
    if name in _SOFTMAX:
        return _softmax_call(graph, node, out_q, before)
    if name in _SQUASHING:
        return _squashing_call(graph, node, out_q, before)
    inputs = [a for a in args[:2] if isinstance(a, torch.fx.Node)] if name in _ELEMENTWISE else [args[0]]
    in_qs = [int16_qparams(a, "dequantize_per_tensor") for a in inputs]
    if any(q is None for q in in_qs):
        return None
    scales = [q[0] for q in in_qs if q is not None]
    call: tuple[Any, tuple[Any, ...]]
    if name in _LAYERS:
        weight = _weight(program, args[1])
        if weight is None:
            return None
        w_node, w_scales = weight
        bias = _bias(program, args[2] if len(args) > 2 else None)
        mults, shifts = _requantize(scales[0], w_scales, out_q[0], node.name)
        x16 = int16_source(graph, fx_args(inputs[0])[0])
        if name == "aten::linear":
            call = (torch.ops.cmx.quantized_linear_s16.default, (x16, w_node, bias, mults[0], shifts[0], *out_q[1:]))
        else:
            stride, padding, dilation, transposed, _, groups = args[3:9]
            if transposed:
                raise unsupported(node, "a transposed convolution")
            if 1 < int(groups) != int(inputs[0].meta["val"].shape[1]):
                raise unsupported(node, f"a convolution of {int(groups)} groups (neither one nor one a channel)")
            window = (list(stride), list(padding), list(dilation), int(groups))
            call = (torch.ops.cmx.quantized_conv2d_s16.default, (x16, w_node, bias, *window, mults, shifts, *out_q[1:]))
    elif name in _ELEMENTWISE:
        shapes = [tuple(a.meta["val"].shape) for a in inputs]
        what = "an add" if name == "aten::add" else "a multiplication"
        if len(inputs) != 2 or shapes[0] != shapes[1] or (len(args) > 2 and args[2] != 1):
            raise unsupported(node, f"{what} of two tensors of other shapes (or with alpha)")
        xs = [int16_source(graph, fx_args(a)[0]) for a in inputs]
        if name == "aten::add":
            pairs = s16_models.add_multipliers(scales[0], scales[1], out_q[0])
            call = (torch.ops.cmx.quantized_add_s16.default, (*xs, [v for pair in pairs for v in pair], *out_q[1:]))
        else:
            mult, shift = multiplier(scales[0] * scales[1] / out_q[0])
            call = (torch.ops.cmx.quantized_mul_s16.default, (*xs, mult, shift, *out_q[1:]))
    else:
        call = (torch.ops.cmx.quantized_pool2d_s16.default, _pool_args(graph, node, inputs[0], scales[0], out_q))
    with graph.inserting_before(before):
        return graph.call_function(*call)


def _softmax_call(
    graph: torch.fx.Graph, node: torch.fx.Node, out_q: tuple[float, int, int], before: torch.fx.Node
) -> torch.fx.Node | None:
    """cmx::quantized_softmax_s16 for an int16 softmax over the last dimension into Q0.15."""
    dq, dim = fx_args(node)[:2]
    in_q = int16_qparams(dq, "dequantize_per_tensor")
    if in_q is None:
        return None
    value = node.meta["val"]
    if int(dim) % value.dim() != value.dim() - 1 or out_q[0] != s16_models.Q15_SCALE:
        raise unsupported(node, "a softmax over another dimension than the last, or to another scale")
    mult, shift = s16_models.softmax_s16_multiplier(in_q[0])
    with graph.inserting_before(before):
        return graph.call_function(
            torch.ops.cmx.quantized_softmax_s16.default, (int16_source(graph, fx_args(dq)[0]), mult, shift)
        )


def _squashing_call(
    graph: torch.fx.Graph, node: torch.fx.Node, out_q: tuple[float, int, int], before: torch.fx.Node
) -> torch.fx.Node | None:
    """cmx::quantized_activation_s16 for an int16 sigmoid or tanh: its input at a power-of-two scale
    (activation_bits' observer), read as Q3.12 after a left shift, into Q0.15."""
    dq = fx_args(node)[0]
    in_q = int16_qparams(dq, "dequantize_per_tensor")
    if in_q is None:
        return None
    power = math.log2(in_q[0])
    left_shift = round(power) - GATE_POWER  # Q3.12 (the LSTM gates' format) from 2^power a unit
    if power != round(power) or not LEFT_SHIFTS[0] <= left_shift <= LEFT_SHIFTS[1] or out_q[0] != s16_models.Q15_SCALE:
        raise unsupported(node, "a sigmoid or tanh whose input scale is not a power of two near Q3.12")
    x = int16_source(graph, fx_args(dq)[0])
    with graph.inserting_before(before):
        made = (x, left_shift, op_name(node) == "aten::tanh")
        return graph.call_function(torch.ops.cmx.quantized_activation_s16.default, made)


# arm_nn_activation_s16's left shift: its int32 product of the input and 3 << shift stays exact up to 14
LEFT_SHIFTS = (-15, 14)


def _bmm_call(
    graph: torch.fx.Graph, node: torch.fx.Node, out_q: tuple[float, int, int], before: torch.fx.Node
) -> torch.fx.Node | None:
    """cmx::quantized_bmm_s16 for an int16 `cmx::bmm`. An operand the quantizer left int8 (a softmax's fixed
    1/256 output, which the attention's second matmul reads) is taken exactly: its values less its zero point,
    as int16 at its scale, by a table."""
    operands = []
    for dq in fx_args(node)[:2]:
        q = int16_qparams(dq, "dequantize_per_tensor")
        operands.append((dq, q[0]) if q is not None else _int8_exactly(graph, dq))
    if any(o is None for o in operands):
        return None
    (dq_a, a_scale), (dq_b, b_scale) = operands  # type: ignore[misc]
    mult, shift = _requantize(a_scale, [b_scale], out_q[0], node.name)
    a = dq_a if op_name(dq_a) == "cmx::quantized_lut_s16" else int16_source(graph, fx_args(dq_a)[0])
    b, transposed = (dq_b, False) if op_name(dq_b) == "cmx::quantized_lut_s16" else _rhs(graph, dq_b)
    with graph.inserting_before(before):
        return graph.call_function(torch.ops.cmx.quantized_bmm_s16.default, (a, b, transposed, mult[0], shift[0]))


def _int8_exactly(graph: torch.fx.Graph, dq: Any) -> tuple[torch.fx.Node, float] | None:
    """An int8 dequantize as an int16 tensor of the same values (v - zero point, at the int8 scale) by a
    cmx::quantized_lut_s16 table, and that scale; None for anything else."""
    if not isinstance(dq, torch.fx.Node) or op_name(dq) != "quantized_decomposed::dequantize_per_tensor":
        return None
    args = fx_args(dq)
    if args[5] != torch.int8:
        return None
    table = [v - int(args[2]) for v in range(-128, 128)]
    with graph.inserting_before(dq):
        made = graph.call_function(torch.ops.cmx.quantized_lut_s16.default, (args[0], table))
    made.meta = {**dq.meta, "val": dq.meta["val"].to(torch.int16)}
    return made, float(args[1])


def _rhs(graph: torch.fx.Graph, dq: torch.fx.Node) -> tuple[torch.fx.Node, bool]:
    """A batch matmul's b as the int16 tensor it reads and whether it is transposed: where b is a swap of its
    last two dimensions of an int16 tensor of the same quantization (an attention's k.transpose(1, 2)), the
    tensor before it, transposed (arm_batch_matmul_s16 reads b so); else b, which the run transposes."""
    q = fx_args(dq)[0]
    swap = fx_args(q)[0] if op_name(q) == "quantized_decomposed::quantize_per_tensor" else None
    if isinstance(swap, torch.fx.Node) and len(swap.users) == 1 and swaps_last_two(swap):
        before = fx_args(swap)[0]
        same = int16_qparams(before, "dequantize_per_tensor") == int16_qparams(dq, "dequantize_per_tensor")
        if same and isinstance(before, torch.fx.Node):
            return int16_source(graph, fx_args(before)[0]), True
    return int16_source(graph, q), False


def _pool_args(
    graph: torch.fx.Graph, node: torch.fx.Node, dq: torch.fx.Node, scale: float, out_q: tuple[float, int, int]
) -> tuple[Any, ...]:
    """A pool's arguments: its window, whether it averages, and the output range; refused where CMSIS-NN's
    s16 pools would compute something else (another scale out, ceil mode, padding counted in an average,
    dilation)."""
    args = fx_args(node)
    kernel = [int(k) for k in args[1]]
    stride = [int(s) for s in (args[2] if len(args) > 2 and args[2] else kernel)]
    padding = [int(p) for p in (args[3] if len(args) > 3 else [0, 0])]
    average = op_name(node) == "aten::avg_pool2d"
    ceil = bool(args[4]) if len(args) > 4 else False
    if average:
        counts_pad = bool(args[5]) if len(args) > 5 else True
        if ceil or (counts_pad and any(padding)) or (len(args) > 6 and args[6] is not None):
            raise unsupported(node, "an average pool with ceil mode, a divisor or padding counted")
    elif ceil or (len(args) > 4 and list(args[4]) != [1, 1]):
        raise unsupported(node, "a max pool with ceil mode or dilation")
    if abs(scale - out_q[0]) > 1e-6 * scale:
        raise unsupported(node, "a pool whose output scale is not its input's")
    return (int16_source(graph, fx_args(dq)[0]), kernel, stride, padding, average, *out_q[1:])


def unsupported(node: torch.fx.Node, what: str) -> ExportError:
    where = source_line(node) or module_path(node) or node.name
    return ExportError(
        f"int16 layer at {where}: {what} has no s16 kernel in cmx-gen's backend",
        "run it at int8: --precision-for PART=int8 (PART as --keep-fp32 names it)",
    )
