"""`--keep-fp32 PART`: leave parts of a model in float, on portable kernels, when the cortex_m
lowering cannot take them (an upstream pass failing on them, an op CMSIS-NN gets wrong).

A part is a module path (`features.3`), a line of the model file (`model.py:15`, what cmx-gen's
error lines print), or a node name of the exported graph (`bmm_1`). Float `linear` left this way
is rewritten to ops portable has (fp32_linear.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import torch

from cmx_gen.common.errors import ModelSourceError
from cmx_gen.lower.fx_nodes import user_frame
from cmx_gen.lower.ops import own_ops, recurrent_graph

T = TypeVar("T")


def selects(node: torch.fx.Node, pattern: str) -> bool:
    """Does `--keep-fp32 pattern` name this node (see LowerOptions.keep_fp32)?"""
    if node.name == pattern:
        return True
    frame = user_frame(node)
    if frame and ":" in pattern:
        file_name, _, line = pattern.rpartition(":")
        if line == frame[1] and file_name in (Path(frame[0]).name, frame[0]):
            return True
    paths = [str(path) for path, _ in (node.meta.get("nn_module_stack") or {}).values() if path]
    return bool(paths) and (paths[-1] == pattern or paths[-1].startswith(pattern + "."))


def last_override(
    node: torch.fx.Node, default: T, overrides: tuple[str, ...], parse: Callable[[str], tuple[str, T]]
) -> T:
    """What the last of `overrides` (PART=VALUE, PART as --keep-fp32 names a part; `parse` splits one) that
    names `node` gives it, else `default`: --weights-for and --precision-for."""
    value = default
    for text in overrides:
        part, wanted = parse(text)
        if selects(node, part):
            value = wanted
    return value


def names_nothing(problem: str, nodes: list[torch.fx.Node]) -> ModelSourceError:
    """The error for a PART that selects none of `nodes`: how a part is named, with their module paths."""
    modules = sorted({str(p) for n in nodes for p, _ in (n.meta.get("nn_module_stack") or {}).values() if p})
    return ModelSourceError(
        problem,
        "give a module path (" + (", ".join(modules[:8]) or "none here") + "), a line of the model file "
        "(model.py:15) or a node name of the exported graph",
    )


def quantizer(
    keep_fp32: tuple[str, ...],
    graph: torch.fx.GraphModule,
    then: Callable[[torch.fx.GraphModule], object] | None = None,
) -> Any:
    """CortexMQuantizer, leaving the nodes `keep_fp32` names unquantized (portable fp32 kernels), and
    observing the cmx::lstm nodes' inputs and outputs (recurrent_graph.annotate); `then` edits the
    annotations last (weight_bits.narrow_annotations: int4 weights).

    The nodes are marked "annotated, not quantized" after the cortex_m annotators ran (before, the
    composable quantizer refuses the change), so their neighbours quantize at the edge instead."""
    from executorch.backends.cortex_m.quantizer.quantizer import CortexMQuantizer, mark_node_as_annotated

    nodes = [n for n in graph.graph.nodes if n.op == "call_function"]
    for pattern in keep_fp32:
        if not any(selects(n, pattern) for n in nodes):
            raise names_nothing(f"--keep-fp32 {pattern} names no part of the model", nodes)

    class KeepFp32Quantizer(CortexMQuantizer):
        def annotate(self, model: torch.fx.GraphModule) -> torch.fx.GraphModule:
            keep = [n for n in model.graph.nodes if n.op == "call_function" and any(selects(n, p) for p in keep_fp32)]
            kept = frozenset(n.name for n in keep)
            recurrent_graph.annotate(model, skip=kept)  # first: a concat of their outputs shares their quantization
            model = super().annotate(model)
            own_ops.annotate(model, skip=kept)
            _observe_shared_roots(model, kept)
            for node in keep:
                mark_node_as_annotated(node, {}, None, False)
            if then is not None:
                then(model)
            return model

    return KeepFp32Quantizer()


def _observe_shared_roots(model: torch.fx.GraphModule, kept: frozenset[str]) -> None:
    """An op no annotator took (an upsampling, a BatchNorm the conv fold missed) whose output a pool
    annotated as sharing (SharedQuantizationSpec of that node): prepare_pt2e looked the node up and
    stopped ("KeyError: upsample_nearest2d"). Its output is observed as int8 per tensor instead: a float
    island between a dequantize and a quantize, which a later step may take to int8 (upsample.py)."""
    from executorch.backends.cortex_m.quantizer.quantization_configs import INT8_ACTIVATION_PER_TENSOR_QSPEC
    from torchao.quantization.pt2e.quantizer import QuantizationAnnotation, SharedQuantizationSpec

    for node in list(model.graph.nodes):
        annotation = node.meta.get("quantization_annotation")
        if annotation is None:
            continue
        specs = [*annotation.input_qspec_map.values(), annotation.output_qspec]
        for spec in specs:
            root = spec.edge_or_node if isinstance(spec, SharedQuantizationSpec) else None
            if not isinstance(root, torch.fx.Node) or root.op != "call_function" or root.name in kept:
                continue
            found = root.meta.get("quantization_annotation")
            if found is not None and found.output_qspec is not None:
                continue
            root.meta["quantization_annotation"] = QuantizationAnnotation(
                input_qspec_map=dict(found.input_qspec_map) if found is not None else {},
                output_qspec=INT8_ACTIVATION_PER_TENSOR_QSPEC,
                _annotated=True,
            )
