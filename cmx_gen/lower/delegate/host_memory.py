"""The delegate's memory as the host run of a plan sees it (host_run.py, host_own.py): its arguments
and working memory as writable byte views, read and written at the plan's operands."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray


class DelegateMemory:
    """The delegate's arguments (inputs, the working memory, outputs) as writable byte views; an
    operand >= 0 is an offset into the working memory, < 0 the argument -1-x (plan.py)."""

    def __init__(self, args: Sequence[memoryview], work: int) -> None:
        self.args = list(args)
        self.work = work

    def view(self, operand: int, nbytes: int) -> memoryview:
        if operand >= 0:
            return self.args[self.work][operand : operand + nbytes]
        return self.args[-1 - operand][:nbytes]


def int8(memory: DelegateMemory, operand: int, count: int) -> NDArray[np.int8]:
    """`count` int8 values at an operand, copied out."""
    return np.frombuffer(memory.view(operand, count), dtype=np.int8).copy()


def int16(memory: DelegateMemory, operand: int, count: int) -> NDArray[np.int16]:
    """`count` int16 values at an operand (the s16 kinds' tensors), copied out."""
    return np.frombuffer(memory.view(operand, 2 * count), dtype="<i2").copy()


def put(memory: DelegateMemory, operand: int, values: NDArray[Any], dtype: str = "i1") -> None:
    """int8 values (dtype "<i2": int16) written at an operand."""
    raw = np.ascontiguousarray(values, dtype=dtype).tobytes()
    memory.view(operand, len(raw))[:] = raw


def plan_values(plan: bytes, offset: int, count: int, dtype: str) -> NDArray[Any]:
    """`count` values of `dtype` among a plan's constants at `offset`, copied out."""
    return np.frombuffer(plan, dtype=dtype, count=count, offset=offset).copy()
