"""The one way to a program's artifacts, behind every command that needs them (`lower`, `check`,
`create`, `regen`): a model is exported and lowered, or served from the lowering cache; a program
lowered elsewhere (.pte, .bpte) is analysed."""

from __future__ import annotations

from typing import NamedTuple

from cmx_gen.lower.facts import LowerOptions
from cmx_gen.model.source import ModelSource
from cmx_gen.program import artifacts, cache


class Produced(NamedTuple):
    artifacts: artifacts.Artifacts
    from_cache: bool  # served from the lowering cache: nothing was lowered


def produce(source: ModelSource, core: str, options: LowerOptions = LowerOptions(), use_cache: bool = True) -> Produced:
    """`source`'s program for `core`, its report and reference (cached on everything that decides the
    program, program/cache.py). `core` may be "" for a .pte: its ISA then stays unknown."""
    from cmx_gen.model.export import export

    if source.is_program:
        return Produced(artifacts.analyse_pte(source, core), False)
    exported = export(source)
    if not use_cache:
        return Produced(artifacts.lower_model(exported, core, options), False)
    entry, cached = cache.lookup(exported, core, options)
    if cached is not None:
        return Produced(cached, True)
    result = artifacts.lower_model(exported, core, options)
    cache.store(entry, result)
    return Produced(result, False)
