"""The lowering steps' order is checked from their signatures (lowering.check_order): a step that
reads a record no earlier step made is named at import, not found halfway through a lowering."""

from __future__ import annotations

import pytest

from cmx_gen.lower.lowering import STEPS, check_order
from cmx_gen.lower.state import Given, Quantized, Rewritten


def test_the_steps_read_only_what_earlier_steps_made():
    check_order(STEPS)
    assert STEPS[0].reads == (Given,) and STEPS[0].makes is Rewritten
    assert STEPS[1].reads == (Given, Rewritten) and STEPS[1].makes is Quantized


def test_a_step_moved_before_what_it_reads_is_named():
    swapped = [STEPS[1], STEPS[0], *STEPS[2:]]
    with pytest.raises(RuntimeError, match="'quantize' reads Rewritten"):
        check_order(swapped)


def test_two_steps_making_one_record_are_refused():
    with pytest.raises(RuntimeError, match="'rewrite' makes Rewritten again"):
        check_order([*STEPS, STEPS[0]])


def test_no_record_of_the_lowering_has_an_any_field():
    """The records the steps hand each other, and the facts the report holds, are typed: a field typed
    Any (an untyped join between stages) fails here (issue 35)."""
    import dataclasses
    import re

    from cmx_gen.common.record import SparseRecord
    from cmx_gen.lower import facts, state

    records = [
        obj
        for module in (state, facts)
        for obj in vars(module).values()
        if isinstance(obj, type)
        and obj.__module__ == module.__name__
        and obj is not state.Step
        and (dataclasses.is_dataclass(obj) or issubclass(obj, SparseRecord))
    ]
    assert len(records) >= 19, [r.__name__ for r in records]
    for record in records:
        for name, annotation in record.__annotations__.items():
            assert not re.search(r"\bAny\b", str(annotation)), f"{record.__name__}.{name}: {annotation}"
