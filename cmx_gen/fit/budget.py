"""What a lowered program needs before it is placed anywhere: flash for the runtime, each kernel
once (data/kernel_sizes.yaml) and the .pte; RAM for the planned buffers, the method and temp pools,
static data, stack and heap. memory.py then places that budget in a board's regions.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import yaml

from cmx_gen.common.errors import TargetError
from cmx_gen.common.paths import DATA_DIR
from cmx_gen.program.report import Report

ALIGN = 16  # pools are 16-byte aligned in the firmware (CMSIS-NN / MVE loads)
KERNEL_SIZES_FILE = DATA_DIR / "kernel_sizes.yaml"


def _align(n: int) -> int:
    return (int(n) + ALIGN - 1) // ALIGN * ALIGN


# ---------------------------------------------------------------------------------------------
# Kernel code size table
# ---------------------------------------------------------------------------------------------


@functools.cache
def kernel_sizes() -> dict[str, Any]:
    """cmx_gen/data/kernel_sizes.yaml, parsed once."""
    return yaml.safe_load(KERNEL_SIZES_FILE.read_text())


def _op_key(name: str) -> str:
    """'cortex_m::quantized_conv2d.out' -> 'cortex_m::quantized_conv2d' (overload stripped)."""
    ns, sep, rest = name.partition("::")
    return f"{ns}{sep}{rest.split('.', 1)[0]}" if sep else name.split(".", 1)[0]


@dataclass(frozen=True)
class CodeSize:
    name: str
    bytes: int
    status: str  # "estimated" | "measured"
    source: str  # "table" | "default:<class>" | "runtime" | "backend"


def code_sizes(report: Report, isa: str) -> list[CodeSize]:
    """Runtime + one entry per distinct operator of the program."""
    return _code_sizes(report.operators, isa)


def _code_sizes(operators: list[Any], isa: str) -> list[CodeSize]:
    """Runtime + one entry per distinct operator: several programs in one image share each kernel."""
    table = kernel_sizes()["isa"][isa]
    out = [CodeSize("runtime", table["runtime"]["code"], table["runtime"]["status"], "runtime")]
    seen: set[str] = set()
    for op in operators:
        key = _op_key(op.name)
        if key in seen:
            continue
        seen.add(key)
        entry = table["ops"].get(key)
        if entry is not None:
            out.append(CodeSize(key, entry["code"], entry["status"], "table"))
        else:
            cls = op.class_
            default = table["defaults"].get(cls, table["defaults"]["fallback"])
            out.append(CodeSize(key, default["code"], default["status"], f"default:{cls}"))
    kinds = [key for key in seen if key.startswith("cmx::")]
    if kinds:  # the backend's plan check (cmx_plan_check.c), once, and its part for each kind
        check = kernel_sizes()["backend_check"]
        out.append(CodeSize("plan check", check["code"] + check["per_kind"] * len(kinds), check["status"], "backend"))
    return out


# ---------------------------------------------------------------------------------------------
# Budget: what the program needs, independent of the board
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Budget:
    isa: str
    code: list[CodeSize]
    pte_bytes: int
    planned_buffer_sizes: list[int]
    method_pool_bytes: int
    temp_pool_bytes: int
    static_ram_bytes: int
    stack_bytes: int
    heap_bytes: int
    reference_bytes: int = 0  # the reference input/expected output the firmware checks against

    @property
    def code_bytes(self) -> int:
        return sum(c.bytes for c in self.code)

    @property
    def code_estimated(self) -> bool:
        return any(c.status != "measured" for c in self.code)

    @property
    def arena_bytes(self) -> int:
        return sum(self.planned_buffer_sizes) + self.method_pool_bytes + self.temp_pool_bytes

    @property
    def data_bytes(self) -> int:
        return self.static_ram_bytes + self.stack_bytes + self.heap_bytes


# The firmware allocates the method pool at the exact need (replayed by method_pool.py, in the
# report) plus this margin: never short, and allocated <= used + 5 % (issue 4).
METHOD_POOL_MARGIN = 0.03


def reference_bytes(report: Report) -> int:
    """Bytes of the embedded reference data (.cmx_reference): every input and output, 16-aligned.

    It sits beside the program: for MobileNet at 96x96 the float input alone is 108 KiB.
    """
    import numpy as np

    total = 0
    for spec in [*report.inputs, *report.outputs]:
        itemsize = np.dtype(spec.dtype).itemsize if spec.dtype in np.sctypeDict else 4
        total += _align(spec.numel * itemsize)
    return total


def budget(report: Report) -> Budget:
    """The program's needs from its lowering report, and the pools the firmware will allocate for it:
    the method pool at the exact need (method_pool.py's replay) plus METHOD_POOL_MARGIN, the temp pool
    at the size where the runtime resolves operators in it at all (else it takes those bytes from the
    method pool for good). The placement carries them on to model/cmx_model.h and Zephyr's Kconfig:
    one place, so the budget and the firmware cannot disagree."""
    isa = report.target.isa
    sizes = kernel_sizes()
    if isa == "unknown":
        raise TargetError(
            f"the program {report.model.source} does not record the core it was lowered for "
            "(a .pte analysed without --target)",
            "analyse it for its core: cmx-gen lower X.pte --target cortex-mXX -o DIR, then check DIR",
        )
    if isa not in sizes["isa"]:
        raise TargetError(f"report target ISA {isa!r} is unknown", f"expected one of {', '.join(sizes['isa'])}")
    mem = report.memory
    return Budget(
        reference_bytes=reference_bytes(report),
        isa=isa,
        code=code_sizes(report, isa),
        pte_bytes=report.pte.bytes,
        planned_buffer_sizes=[_align(s) for s in mem.planned_buffer_sizes],
        method_pool_bytes=_align(int(mem.method_allocator_bytes * (1 + METHOD_POOL_MARGIN))),
        temp_pool_bytes=_align(mem.temp_allocator_bytes),
        static_ram_bytes=int(sizes["isa"][isa]["runtime"]["ram"]),
        stack_bytes=int(sizes["stack_bytes"]),
        heap_bytes=int(sizes["heap_bytes"]),
    )


# Models that run one after another share one arena; models that may run at the same time do not.
ArenaLayout = Literal["shared", "separate"]


@dataclass(frozen=True)
class ModelPools:
    """One model's pools in an image of several: its method pool is always its own (it holds the
    model's state); its planned buffers and temp pool are its own only in the separate layout."""

    name: str
    method_pool_bytes: int
    planned_buffer_sizes: list[int]
    temp_pool_bytes: int
    pte_bytes: int

    @property
    def planned_bytes(self) -> int:
        return sum(self.planned_buffer_sizes)


def arena_pools(pools: list[ModelPools], layout: ArenaLayout) -> tuple[list[int], int]:
    """(planned buffer sizes, temp pool bytes) of the whole image: models that run one after another
    (shared) need the planned buffers of the model with the most and the largest temp pool, models that
    may run at the same time (separate) every model's; one model, in either layout, its own."""
    if layout == "shared":
        largest = max(pools, key=lambda p: p.planned_bytes)
        return list(largest.planned_buffer_sizes), max(p.temp_pool_bytes for p in pools)
    return [s for p in pools for s in p.planned_buffer_sizes], sum(p.temp_pool_bytes for p in pools)


def image_budget(reports: Mapping[str, Report], layout: ArenaLayout) -> tuple[Budget, list[ModelPools]]:
    """The programs of one image (one or several): one runtime and each kernel once, every program and
    its reference data, each model's method pool, and the planned and temp pools as `layout` shares
    them. For one program, its own budget."""
    singles = {name: budget(report) for name, report in reports.items()}
    isas = {b.isa for b in singles.values()}
    if len(isas) != 1:
        raise TargetError(
            f"the models were lowered for different ISAs ({', '.join(sorted(isas))})",
            "lower every model of one image for the board's core",
        )
    pools = [
        ModelPools(name, b.method_pool_bytes, b.planned_buffer_sizes, b.temp_pool_bytes, b.pte_bytes)
        for name, b in singles.items()
    ]
    planned, temp = arena_pools(pools, layout)
    first = next(iter(singles.values()))
    isa = first.isa
    return Budget(
        isa=isa,
        code=_code_sizes([op for report in reports.values() for op in report.operators], isa),
        pte_bytes=sum(b.pte_bytes for b in singles.values()),
        planned_buffer_sizes=planned,
        method_pool_bytes=sum(p.method_pool_bytes for p in pools),
        temp_pool_bytes=temp,
        static_ram_bytes=first.static_ram_bytes,
        stack_bytes=first.stack_bytes,
        heap_bytes=first.heap_bytes,
        reference_bytes=sum(b.reference_bytes for b in singles.values()),
    ), pools
