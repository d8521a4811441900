"""The recurrent layers' way through the graphs (lstm.py and gru.py say why): `aten.lstm` and
`aten.gru` rewritten into one `cmx::lstm` / `cmx::gru` per layer before quantizing (`as_own_op`, an
exact rewrite), annotated so that their inputs and outputs are observed int8 tensors (`annotate`),
the LSTM cell state's range measured on the calibration set (`cell_ranges`), and after the cortex_m
passes `dq -> cmx::lstm -> q` replaced by `cmx::quantized_lstm` on the int8 tensors, the GRU's
likewise (`to_int8`)."""

from __future__ import annotations

import operator
from typing import Any

import torch

from cmx_gen.lower.facts import Rewrite
from cmx_gen.lower.fx_nodes import constant_tensor, fx_args, module_path, op_name, origins, source_line, with_provenance
from cmx_gen.lower.host_models import layer_models, s16_models
from cmx_gen.lower.ops import gru, lstm, s16_ops
from cmx_gen.lower.ops.own_ops import qparams_of
from cmx_gen.lower.ops.quantized_pattern import take_over


@torch.library.custom_op("cmx::lstm", mutates_args=())
def float_lstm(
    x: torch.Tensor,
    w_ih: torch.Tensor,
    w_hh: torch.Tensor,
    b_ih: torch.Tensor | None,
    b_hh: torch.Tensor | None,
    batch_first: bool,
    reverse: bool,
) -> torch.Tensor:
    """One LSTM layer, zero initial state: every step's hidden state (PyTorch's LSTM equations), the
    steps run last to first where `reverse` (a bidirectional LSTM's backward direction)."""
    y, _ = _run(x, w_ih, w_hh, b_ih, b_hh, batch_first, reverse)
    return y


@float_lstm.register_fake
def _(x: torch.Tensor, w_ih: torch.Tensor, w_hh: torch.Tensor, *rest: Any) -> torch.Tensor:
    return x.new_empty((*x.shape[:-1], w_hh.shape[1]))


@torch.library.custom_op("cmx::quantized_lstm", mutates_args=())
def quantized_lstm(
    x: torch.Tensor,
    w_ih: torch.Tensor,
    w_hh: torch.Tensor,
    b_ih: torch.Tensor | None,
    b_hh: torch.Tensor | None,
    batch_first: bool,
    reverse: bool,
    input_scale: float,
    input_zero_point: int,
    output_scale: float,
    output_zero_point: int,
    cell_power: int,
) -> torch.Tensor:
    """arm_lstm_unidirectional_s8 on the host, bit for bit (layer_models.lstm_s8)."""
    quant = lstm.quantize(
        (w_ih, w_hh, b_ih, b_hh), (input_scale, input_zero_point), (output_scale, output_zero_point), cell_power
    )
    return torch.from_numpy(layer_models.lstm_s8(x.numpy(), quant, batch_first, reverse))


@quantized_lstm.register_fake
def _(x: torch.Tensor, w_ih: torch.Tensor, w_hh: torch.Tensor, *rest: Any) -> torch.Tensor:
    return x.new_empty((*x.shape[:-1], w_hh.shape[1]), dtype=torch.int8)


@torch.library.custom_op("cmx::quantized_lstm_s16", mutates_args=())
def quantized_lstm_s16(
    x: torch.Tensor,
    w_ih: torch.Tensor,
    w_hh: torch.Tensor,
    b_ih: torch.Tensor | None,
    b_hh: torch.Tensor | None,
    batch_first: bool,
    reverse: bool,
    input_scale: float,
    output_scale: float,
    cell_power: int,
) -> torch.Tensor:
    """arm_lstm_unidirectional_s16 on the host, bit for bit (s16_models.lstm_s16): int16 in and out."""
    quant = lstm.quantize_s16((w_ih, w_hh, b_ih, b_hh), input_scale, output_scale, cell_power)
    return torch.from_numpy(s16_models.lstm_s16(x.numpy(), quant, batch_first, reverse))


@quantized_lstm_s16.register_fake
def _(x: torch.Tensor, w_ih: torch.Tensor, w_hh: torch.Tensor, *rest: Any) -> torch.Tensor:
    return x.new_empty((*x.shape[:-1], w_hh.shape[1]), dtype=torch.int16)


@torch.library.custom_op("cmx::gru", mutates_args=())
def float_gru(
    x: torch.Tensor,
    w_ih: torch.Tensor,
    w_hh: torch.Tensor,
    b_ih: torch.Tensor | None,
    b_hh: torch.Tensor | None,
    batch_first: bool,
    reverse: bool,
) -> torch.Tensor:
    """One GRU layer, zero initial state: every step's hidden state (PyTorch's own float GRU), the
    steps run last to first where `reverse` (a bidirectional GRU's backward direction)."""
    params = [w for w in (w_ih, w_hh, b_ih, b_hh) if w is not None]
    batch, time = (x.shape[0], 1) if batch_first else (x.shape[1], 0)
    h0 = x.new_zeros(1, batch, w_hh.shape[1])
    seq = x.flip(time) if reverse else x
    y, _ = torch.ops.aten.gru.input(seq, h0, params, b_ih is not None, 1, 0.0, False, False, batch_first)
    out: torch.Tensor = (y.flip(time) if reverse else y).contiguous()
    return out


@float_gru.register_fake
def _(x: torch.Tensor, w_ih: torch.Tensor, w_hh: torch.Tensor, *rest: Any) -> torch.Tensor:
    return x.new_empty((*x.shape[:-1], w_hh.shape[1]))


@torch.library.custom_op("cmx::quantized_gru", mutates_args=())
def quantized_gru(
    x: torch.Tensor,
    w_ih: torch.Tensor,
    w_hh: torch.Tensor,
    b_ih: torch.Tensor | None,
    b_hh: torch.Tensor | None,
    batch_first: bool,
    reverse: bool,
    input_scale: float,
    input_zero_point: int,
    output_scale: float,
    output_zero_point: int,
) -> torch.Tensor:
    """cmx_gru_s8 on the host, bit for bit (layer_models.gru_s8)."""
    quant = gru.quantize((w_ih, w_hh, b_ih, b_hh), (input_scale, input_zero_point), (output_scale, output_zero_point))
    return torch.from_numpy(layer_models.gru_s8(x.numpy(), quant, batch_first, reverse))


@quantized_gru.register_fake
def _(x: torch.Tensor, w_ih: torch.Tensor, w_hh: torch.Tensor, *rest: Any) -> torch.Tensor:
    return x.new_empty((*x.shape[:-1], w_hh.shape[1]), dtype=torch.int8)


# The float op each PyTorch recurrent layer becomes, and the int8 op that replaces it.
OWN_OPS = {torch.ops.aten.lstm.input: "lstm", torch.ops.aten.gru.input: "gru"}
FLOAT_TARGETS = {"lstm": torch.ops.cmx.lstm.default, "gru": torch.ops.cmx.gru.default}
FLOAT_OPS = tuple(FLOAT_TARGETS.values())
KERNELS = {"lstm": "CMSIS-NN's arm_lstm_unidirectional_s8", "gru": "cmx-gen's cmx_gru_s8"}


def _run(
    x: torch.Tensor, w_ih: torch.Tensor, w_hh: torch.Tensor, b_ih: Any, b_hh: Any, batch_first: bool, reverse: bool
) -> tuple[torch.Tensor, float]:
    """PyTorch's LSTM equations step by step (last to first where `reverse`): the outputs and the
    largest |cell state|."""
    seq = x if batch_first else x.transpose(0, 1)
    seq = seq.flip(1) if reverse else seq
    hidden = w_hh.shape[1]
    h = seq.new_zeros(seq.shape[0], hidden)
    c = seq.new_zeros(seq.shape[0], hidden)
    outs, peak = [], 0.0
    for t in range(seq.shape[1]):
        gates = seq[:, t] @ w_ih.T + h @ w_hh.T
        if b_ih is not None:
            gates = gates + b_ih
        if b_hh is not None:
            gates = gates + b_hh
        i, f, g, o = gates.chunk(4, dim=1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        peak = max(peak, float(c.abs().max()) if c.numel() else 0.0)
        outs.append(h)
    y = torch.stack(outs, dim=1)
    y = y.flip(1) if reverse else y
    return (y if batch_first else y.transpose(0, 1)).contiguous(), peak


def _is_zeros(node: Any) -> bool:
    return isinstance(node, torch.fx.Node) and node.target in (
        torch.ops.aten.zeros.default,
        torch.ops.aten.zeros_like.default,
    )


def as_own_op(graph: torch.fx.Graph, node: torch.fx.Node) -> Rewrite | None:
    """`aten.lstm` / `aten.gru` (no projection, zero initial state, the LSTM's final cell state
    unused) into one `cmx::lstm` / `cmx::gru` per layer and direction; anything else stays as it is
    (in float). A bidirectional layer's backward direction runs its steps last to first, its outputs
    concatenated after the forward's (PyTorch's order); the final hidden state, where it is used, is
    each direction's last step run."""
    kind = OWN_OPS.get(node.target)  # type: ignore[call-overload]
    if kind is None:
        return None
    x, state, params, has_biases, layers, _dropout, _train, bidirectional, batch_first = fx_args(node)
    per_layer, layers, directions = (4 if has_biases else 2), int(str(layers)), 2 if bidirectional else 1
    users = {int(str(u.args[1])): u for u in node.users if u.target is operator.getitem}
    states = list(state) if isinstance(state, (list, tuple)) else [state]
    if (
        len(params) != per_layer * layers * directions
        or not all(_is_zeros(s) for s in states)
        or (2 in users and users[2].users)  # an LSTM's final cell state
    ):
        return None
    with graph.inserting_before(node):
        final = 1 in users and bool(users[1].users)
        y, finals = _layers(graph, node, (x, list(params)), (per_layer, layers, directions), bool(batch_first), final)
        if final:
            users[1].replace_all_uses_with(
                with_provenance(graph.call_function(torch.ops.aten.stack.default, (finals, 0)), node)
            )
    if 0 in users:
        users[0].replace_all_uses_with(y)
    for user in users.values():
        graph.erase_node(user)
    graph.erase_node(node)
    return Rewrite(
        node=node.name,
        op=f"aten::{kind}",
        module=module_path(node),
        source=source_line(node),
        what=f"{layers} layer(s){' bidirectional' if directions == 2 else ''} as cmx::{kind}: int8 on {KERNELS[kind]}"
        " in cmx-gen's backend",
    )


def _layers(
    graph: torch.fx.Graph,
    node: torch.fx.Node,
    inputs: tuple[Any, list[Any]],
    sizes: tuple[int, int, int],
    batch_first: bool,
    final: bool,
) -> tuple[torch.fx.Node, list[torch.fx.Node]]:
    """The layers' nodes at the graph's insertion point: the last layer's output, and (`final`) each
    layer's and direction's last step, the final hidden state's rows in PyTorch's order."""
    (x, params), (per_layer, layers, directions) = inputs, sizes
    target = FLOAT_TARGETS[OWN_OPS[node.target]]  # type: ignore[index]
    time = 1 if batch_first else 0
    y, finals = x, []
    for layer in range(layers):
        outs = []
        for direction in range(directions):
            at = (layer * directions + direction) * per_layer
            weights = params[at : at + per_layer]
            biases = weights[2:] if per_layer == 4 else [None, None]
            out = with_provenance(
                graph.call_function(target, (y, weights[0], weights[1], *biases, batch_first, bool(direction))), node
            )
            if final:
                last = 0 if direction else -1
                finals.append(with_provenance(graph.call_function(torch.ops.aten.select.int, (out, time, last)), node))
            outs.append(out)
        y = (
            outs[0]
            if directions == 1
            else with_provenance(graph.call_function(torch.ops.aten.cat.default, (outs, -1)), node)
        )
    return y, finals


def cell_ranges(graph: torch.fx.GraphModule, samples: Any) -> dict[str, float]:
    """The largest |cell state| of each cmx::lstm node of the float graph over the calibration samples."""
    peaks: dict[str, float] = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n: torch.fx.Node) -> Any:
            if n.op == "call_function" and n.target == torch.ops.cmx.lstm.default:
                args = self.fetch_args_kwargs_from_env(n)[0]
                y, peak = _run(*args)
                peaks[n.name] = max(peaks.get(n.name, 0.0), peak)
                return y
            return super().run_node(n)

    if any(n.target == torch.ops.cmx.lstm.default for n in graph.graph.nodes):
        with torch.no_grad():
            for sample in samples:
                Recorder(graph).run(*sample)
    return peaks


def annotate(graph: torch.fx.GraphModule, skip: frozenset[str] = frozenset()) -> None:
    """Observe each cmx::lstm's input and output as int8 per-tensor activations (after the cortex_m
    annotators, which leave it alone): convert_pt2e then puts quantize/dequantize around it."""
    from executorch.backends.cortex_m.quantizer.quantization_configs import INT8_ACTIVATION_PER_TENSOR_QSPEC
    from torchao.quantization.pt2e.quantizer import QuantizationAnnotation

    for node in graph.graph.nodes:
        if node.op == "call_function" and node.target in FLOAT_OPS and node.name not in skip:
            x = fx_args(node)[0]
            node.meta["quantization_annotation"] = QuantizationAnnotation(
                input_qspec_map={x: INT8_ACTIVATION_PER_TENSOR_QSPEC},
                output_qspec=INT8_ACTIVATION_PER_TENSOR_QSPEC,
                _annotated=True,
            )


def to_int8(program: Any, cells: dict[str, float]) -> None:
    """Replace each `dequantize -> cmx::lstm / cmx::gru -> quantize` of the lowered program (edited in
    place) by `cmx::quantized_lstm` / `cmx::quantized_gru` on the int8 tensors; one without them stays
    in float."""
    graph = program.graph_module.graph
    for node in list(graph.nodes):
        kind = op_name(node).removeprefix("cmx::")
        if kind not in ("lstm", "gru") or len(node.users) != 1:
            continue
        x, w_ih, w_hh, b_ih, b_hh, batch_first, reverse = fx_args(node)
        quantize = next(iter(node.users))
        x_q = qparams_of(x, "dequantize_per_tensor", program, plain=True)
        h_q = qparams_of(quantize, "quantize_per_tensor", program, plain=True)
        if x_q is None or h_q is None:
            continue
        extra: tuple[int, ...] = ()
        if kind == "lstm":
            peak = next((cells[name] for name in origins(node) if name in cells), None)
            if peak is None:
                continue
            extra = (lstm.cell_power(peak),)
        target = torch.ops.cmx.quantized_lstm.default if kind == "lstm" else torch.ops.cmx.quantized_gru.default
        with graph.inserting_before(quantize):
            args = (fx_args(x)[0], w_ih, w_hh, b_ih, b_hh, batch_first, reverse, *x_q, *h_q, *extra)
            int8 = graph.call_function(target, args)
        take_over(graph, int8, node, quantize, [quantize, node, x])
    graph.lint()
    program.graph_module.recompile()


def to_int16(program: Any, cells: dict[str, float]) -> None:
    """Before upstream's passes (which would fold an int16 pair): each `dequantize(int16) -> cmx::lstm
    -> quantize(int16)` of the edge program (edited in place) as `cmx::quantized_lstm_s16` on the int16
    tensors, an int8 input requantized by a table (s16_ops.int16_source). One that the s16 kernel's
    int32 partial sums could overflow is refused by the user's line."""
    graph = program.graph_module.graph
    for node in list(graph.nodes):
        if op_name(node) != "cmx::lstm" or len(node.users) != 1:
            continue
        x, w_ih, w_hh, b_ih, b_hh, batch_first, reverse = fx_args(node)
        quantize = next(iter(node.users))
        x_q = s16_ops.int16_qparams(x, "dequantize_per_tensor")
        h_q = s16_ops.int16_qparams(quantize, "quantize_per_tensor")
        peak = next((cells[name] for name in origins(node) if name in cells), None)
        if x_q is None or h_q is None or peak is None:
            continue
        args = (w_ih, w_hh, b_ih, b_hh, batch_first, reverse, x_q[0], h_q[0], lstm.cell_power(peak))
        _check_sums(program, node, args)
        source = s16_ops.int16_source(graph, fx_args(x)[0])
        with graph.inserting_before(quantize):
            int16 = graph.call_function(torch.ops.cmx.quantized_lstm_s16.default, (source, *args))
        take_over(graph, int16, node, quantize, [quantize, node, x])
    graph.lint()
    program.graph_module.recompile()


def _check_sums(program: Any, node: torch.fx.Node, args: tuple[Any, ...]) -> None:
    """Refuse an int16 LSTM whose gate sums could leave int32 (lstm.s16_sum_bound): its weights are the
    program's parameters, read as the delegate will read them."""
    w_ih, w_hh, b_ih, b_hh = (constant_tensor(program, w) if isinstance(w, torch.fx.Node) else None for w in args[:4])
    if w_ih is None or w_hh is None:
        raise s16_ops.unsupported(node, "an LSTM whose weights are not constants")
    quant = lstm.quantize_s16((w_ih, w_hh, b_ih, b_hh), *args[6:9])
    if lstm.s16_sum_bound(quant) >= 1 << 31:
        raise s16_ops.unsupported(node, "an LSTM whose gate sums could overflow the s16 kernel's int32")
