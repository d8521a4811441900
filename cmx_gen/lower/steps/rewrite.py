"""Rewrite layers the target's kernels get wrong into exact equivalents they get right
(exact_rewrites.py), and export the rewritten graph again: the quantizer reads every node's shapes."""

from __future__ import annotations

import torch

from cmx_gen.lower.rewrites import exact_rewrites
from cmx_gen.lower.state import Given, Rewritten, Step


def run(given: Given) -> Rewritten:
    graph = given.exported.program.module(check_guards=False)  # a new GraphModule: rewritten in place
    keep = given.options.keep_fp32 + tuple(island.part for island in given.islands)
    rewrites = exact_rewrites.apply(graph, keep, own=given.options.delegate)
    if rewrites:
        graph = torch.export.export(graph, given.exported.inputs).module(check_guards=False)
    return Rewritten(graph=graph, rewrites=tuple(rewrites))


STEP = Step("rewrite", run)
