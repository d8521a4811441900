"""Rewrite layers the target's kernels get wrong into exact equivalents they get right
(exact_rewrites.py), and export the rewritten graph again: the quantizer reads every node's shapes."""

from __future__ import annotations

from dataclasses import replace

import torch

from cmx_gen.lower import exact_rewrites
from cmx_gen.lower.state import Lowering, Step


def run(state: Lowering) -> Lowering:
    graph = state.exported.program.module(check_guards=False)
    rewrites = exact_rewrites.apply(graph)
    if rewrites:
        graph = torch.export.export(graph, state.exported.inputs).module(check_guards=False)
    return replace(state, graph=graph, rewrites=tuple(rewrites))


STEP = Step("rewrite", run)
