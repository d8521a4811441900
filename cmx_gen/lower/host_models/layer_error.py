"""Per-layer quantization error: which layer loses the accuracy when the int8 program disagrees with
the float model.

Each operator of the lowered program is traced back to the float graph node it was made from (the
`from_node` provenance torch.fx keeps through quantization and the cortex_m passes; a fused
batch norm or activation moves the comparison to where the quantizer quantized the value). Its int8 output, as the CMSIS-NN
kernels compute it on the host (reference.py) and dequantized with the scale the quantizer gave that
tensor, is compared with the float model's value there, over the same calibration samples as the
output error. Errors accumulate along the network, as on the target: a layer's SQNR includes what
it inherits from the layers before it. What the layer itself loses is `sqnr_drop_db`: its input's
SQNR minus its own (the worst input's, for an op with several), and the worst layers are the ones
that lose the most.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import torch

from cmx_gen.lower.facts import LayerError
from cmx_gen.lower.fx_nodes import module_path, op_name, origins, source_line

_QUANTIZE = "quantize_per_tensor"
_BOUNDARY_OPS = ("cortex_m::quantize_per_tensor", "cortex_m::dequantize_per_tensor")


def _root(node: torch.fx.Node) -> str | None:
    """The name of the float graph node a lowered node was made from."""
    names = origins(node)
    return names[-1] if names else None


def _counterpart(nodes: dict[str, torch.fx.Node], name: str, roots: set[str], quantized: set[str]) -> str:
    """The float node whose value a lowered op computes: its root, or, when the root's output is not
    quantized, the first node after it that is (a batch norm folded and an activation fused into a
    convolution), as long as no other lowered op was made from the nodes in between."""
    node = nodes.get(name)
    while node is not None and node.name not in quantized and len(node.users) == 1:
        user = next(iter(node.users))
        if user.name in roots or user.op != "call_function":
            break
        node = user
    return node.name if node is not None else name


def output_scales(converted: torch.fx.GraphModule) -> dict[str, tuple[float, int]]:
    """(scale, zero point) of every float node whose output the quantizer quantizes."""
    scales = {}
    for node in converted.graph.nodes:
        if node.op == "call_function" and _QUANTIZE in str(node.target) and isinstance(node.args[0], torch.fx.Node):
            scale, zero_point = node.args[1], node.args[2]
            if isinstance(scale, (int, float)) and isinstance(zero_point, int):
                scales[node.args[0].name] = (float(scale), int(zero_point))
    return scales


class _Recorder(torch.fx.Interpreter):
    def __init__(self, module: torch.fx.GraphModule, keep: set[str]) -> None:
        super().__init__(module)
        self.keep, self.values = keep, cast(dict[str, torch.Tensor], {})

    def run_node(self, node: torch.fx.Node) -> Any:
        result = super().run_node(node)
        if node.name in self.keep and isinstance(result, torch.Tensor):
            self.values[node.name] = result.detach()
        return result


def layer_errors(
    float_graph: torch.fx.GraphModule,
    scales: dict[str, tuple[float, int]],
    program: torch.fx.GraphModule,
    samples: Sequence[tuple[tuple[torch.Tensor, ...], dict[str, object]]],
) -> list[LayerError]:
    """`samples`: per calibration sample, (the float model's inputs, every lowered op's int8 result by
    node name). One float pass per sample; the int8 results come from the reference runs."""
    calls = [n for n in program.graph.nodes if op_name(n)]
    roots = {n.name: _root(n) for n in calls}
    float_nodes = {n.name: n for n in float_graph.graph.nodes}
    made_from, quantized = {root for root in roots.values() if root}, set(scales)
    pairs = {n.name: _counterpart(float_nodes, root, made_from, quantized) for n in calls if (root := roots[n.name])}
    sums = _Sums({name: 0.0 for name in pairs}, {name: 0.0 for name in pairs}, {name: 0.0 for name in pairs})
    for inputs, int8_values in samples:
        recorder = _Recorder(float_graph, set(pairs.values()))
        with torch.no_grad():
            recorder.run(*(x.clone() for x in inputs))
        for name, float_name in pairs.items():
            sums.add(name, recorder.values.get(float_name), int8_values.get(name), scales.get(float_name))
    return _rows(calls, sums)


@dataclass
class _Sums:
    """What the samples add up per lowered op, for its SQNR and worst error; which ops were compared
    and which computed in float (--keep-fp32 parts, portable fallbacks) decide its row's kind."""

    signal: dict[str, float]
    noise: dict[str, float]
    worst: dict[str, float]
    compared: set[str] = field(default_factory=set)
    floats: set[str] = field(default_factory=set)

    def add(self, name: str, f: torch.Tensor | None, q: object, qp: tuple[float, int] | None) -> None:
        """One sample's float value `f` and int8 result `q` (dequantized with `qp`) of op `name`."""
        if isinstance(q, torch.Tensor) and q.is_floating_point():
            self.floats.add(name)
        if f is None or not isinstance(q, torch.Tensor) or qp is None or q.dtype != torch.int8 or q.shape != f.shape:
            return
        real = (q.to(torch.float64) - qp[1]) * qp[0]
        diff = f.to(torch.float64) - real
        self.signal[name] += float((f.to(torch.float64) ** 2).sum())
        self.noise[name] += float((diff**2).sum())
        self.worst[name] = max(self.worst[name], float(diff.abs().max()) if diff.numel() else 0.0)
        self.compared.add(name)


def _rows(calls: list[torch.fx.Node], sums: _Sums) -> list[LayerError]:
    """A row per lowered op, in program order: a row's SQNR drop needs its inputs' rows first."""
    rows: list[LayerError] = []
    by_name: dict[str, LayerError] = {}
    for index, node in enumerate(calls):
        name, op = node.name, op_name(node)
        common = {"index": index, "node": name, "op": op, "module": module_path(node), "source": source_line(node)}
        if name in sums.compared and not sums.noise[name]:
            rows.append(LayerError(**common, kind="exact", max_abs_err=0.0))
        elif name in sums.compared:
            signal = sums.signal[name]
            sqnr = round(10 * math.log10(signal / sums.noise[name]), 2) if signal else None
            rows.append(
                LayerError(
                    **common,
                    kind="compared",
                    sqnr_db=sqnr,
                    max_abs_err=round(sums.worst[name], 6),
                    sqnr_drop_db=_drop(node, sqnr, by_name),
                )
            )
        else:
            kind = (
                "quant_boundary" if op in _BOUNDARY_OPS else "float" if name in sums.floats else "no_float_counterpart"
            )
            rows.append(LayerError(**common, kind=kind))
        by_name[name] = rows[-1]
    return rows


def _drop(node: torch.fx.Node, sqnr: float | None, by_name: dict[str, LayerError]) -> float | None:
    """Its worst input's SQNR minus its own; an input without error (exact) counts as lossless, and a
    layer fed by no compared op (the input's quantization) loses all of its own."""
    if sqnr is None:
        return None
    inputs = [by_name[a.name] for a in node.all_input_nodes if a.name in by_name]
    known = [r.sqnr_db for r in inputs if r.kind == "compared" and r.sqnr_db is not None]
    return round(min(known) - sqnr, 2) if known else None
