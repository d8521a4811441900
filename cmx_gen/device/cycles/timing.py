"""A block's cycles: priced instruction by instruction with the core's timing table
(data/timing/<core>.yaml, which cites its source), and the refill a taken branch at its end costs
(estimate.py adds the blocks that ran, and the board's wait states on each load and store).

A core whose pipes overlap (the Cortex-M55's Helium beats, `model: pipelined`) is priced by
issue.py's in-order issue model instead of instruction by instruction.

A least / typical / most figure: where the table gives a range (a divide, the refill P = 1-3, an IT
folded or not) the three figures take its ends. Zero wait states on instruction fetch (a flash
accelerator or cache that hits; QEMU's MPS2/MPS3 memories are single-cycle); interrupts are priced as
the instructions they run, not their entry and exit."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import yaml

from cmx_gen.common.errors import RunError
from cmx_gen.common.paths import DATA_DIR
from cmx_gen.device.cycles import issue
from cmx_gen.device.cycles.listing import Instruction

Range = tuple[int, int, int]  # least, typical, most
_CONDITIONS = ("eq", "ne", "cs", "hs", "cc", "lo", "mi", "pl", "vs", "vc", "hi", "ls", "ge", "lt", "gt", "le", "al")
_NO_DESTINATION = {"cmp", "cmn", "tst", "teq", "b", "bl", "bx", "blx", "cbz", "cbnz", "it", "nop"}


def as_range(value: Any) -> Range:
    if isinstance(value, list):
        low, typical, high = (int(v) for v in value)
        return low, typical, high
    return int(value), int(value), int(value)


def _plus(cycles: Range, extra: int) -> Range:
    return cycles[0] + extra, cycles[1] + extra, cycles[2] + extra


@dataclass(frozen=True)
class TimingClass:
    name: str
    cycles: Range  # sequential: what it costs; pipelined: the cycles it holds its pipe
    per_register: bool = False
    registers_per_cycle: int = 1
    # pipelined tables only (issue.Slot)
    pipe: str | None = None
    latency: int = 1
    dual: str = ""  # "always" / "immediate" (with an immediate operand): may issue beside a 16-bit one
    store: bool = False
    no_store_forwarding: bool = False
    issues: bool = True
    refill: Range | None = None  # a taken branch at the end of a block: its own refill, not the table's


@dataclass(frozen=True)
class Table:
    """One core's timings: class per mnemonic, the refill P, the load/store rules, its source."""

    core: str
    source: str
    classes: dict[str, TimingClass]  # mnemonic -> its class
    refill: Range
    default: int
    load_pipelining: bool
    store_immediate_one_cycle: bool
    address_dependency_stall: int
    borrowed: str | None = None
    pipelined: bool = False  # issue.py's model; `classes` keyed mnemonic[.type][/q or /s] (pipelined_class)
    disassemble_as: str | None = None  # objdump's -m for the core's code
    stored_late: int = 0
    shifted_operand_latency: int = 1


def _raw(core: str) -> dict[str, Any]:
    path = DATA_DIR / "timing" / f"{core}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in (DATA_DIR / "timing").glob("*.yaml"))
        raise RunError(
            f"cmx-gen has no cycle timings for {core} yet (it has {', '.join(known)})",
            "run --cycles on a board with one of those cores; instr= is the instruction count",
        )
    data: dict[str, Any] = yaml.safe_load(path.read_text())
    return data


@cache
def load(core: str) -> Table:
    """`core`'s table; one that borrows another core's takes its classes and rules, then its own."""
    raw = _raw(core)
    base = _raw(raw["borrows"]) if "borrows" in raw else {}
    classes = {**base.get("classes", {}), **raw.get("classes", {})}
    for name in raw.get("drop", []):
        classes.pop(name, None)
    rules = {**base.get("rules", {}), **raw.get("rules", {})}
    by_mnemonic = {}
    for name, spec in classes.items():
        kind = TimingClass(
            name,
            as_range(spec["cycles"]),
            bool(spec.get("per_register", False)),
            int(spec.get("registers_per_cycle", 1)),
            spec.get("pipe"),
            int(spec.get("latency", 1)),
            str(spec.get("dual", "")),
            bool(spec.get("store", False)),
            bool(spec.get("no_store_forwarding", False)),
            bool(spec.get("issues", True)),
            as_range(spec["refill"]) if "refill" in spec else None,
        )
        operands = {True: "/q", False: "/s"}.get(spec.get("vector"), "")  # Helium, scalar FP, either
        for mnemonic in spec["mnemonics"]:
            by_mnemonic[f"{mnemonic}{operands}"] = kind
    return Table(
        core=core,
        source=str(raw["source"]),
        classes=by_mnemonic,
        refill=as_range(raw.get("refill", base.get("refill", 0))),
        default=int(raw.get("default", base.get("default", 1))),
        load_pipelining=bool(rules.get("load_pipelining", False)),
        store_immediate_one_cycle=bool(rules.get("store_immediate_one_cycle", False)),
        address_dependency_stall=int(rules.get("address_dependency_stall", 0)),
        borrowed=raw.get("borrows"),
        pipelined=raw.get("model", base.get("model")) == "pipelined",
        disassemble_as=raw.get("disassemble_as", base.get("disassemble_as")),
        stored_late=int(rules.get("stored_late", 0)),
        shifted_operand_latency=int(rules.get("shifted_operand_latency", 1)),
    )


def base_mnemonic(mnemonic: str, known: dict[str, TimingClass]) -> str:
    """`mnemonic` without its width (.w/.n) or data type (.u32), condition and flag-setting suffixes,
    where taking them off leaves one the table knows ("bne.n" -> "b", "adds" -> "add")."""
    name = mnemonic.split(".")[0].lower()
    candidates = [name]
    if name[-2:] in _CONDITIONS:
        candidates.append(name[:-2])
    candidates += [c[:-1] for c in list(candidates) if c.endswith("s")]
    return next((c for c in candidates if c in known or c in _ALU), name)


@dataclass
class _Priced:
    cycles: list[int] = field(default_factory=lambda: [0, 0, 0])
    unpriced: Counter[str] = field(default_factory=Counter)


def block_cycles(instructions: list[Instruction], table: Table) -> tuple[Range, Counter[str]]:
    """One run of a block, its branch not taken: (least, typical, most) cycles, and the mnemonics the
    table has no class for (priced at its default)."""
    if table.pipelined:
        return _issued(instructions, table)
    priced = _Priced()
    previous: tuple[str, Instruction] | None = None
    for ins in instructions:
        name = base_mnemonic(ins.mnemonic, table.classes)
        kind = table.classes.get(name)
        if kind is None:
            cost = as_range(table.default)
            if name not in _ALU:
                priced.unpriced[name] += 1
        else:
            cost = _plus(kind.cycles, ins.register_list if kind.per_register else 0)
            if kind.name in ("load", "store"):
                cost = _load_store(kind.name, ins, previous, table, cost)
        for i in range(3):
            priced.cycles[i] += cost[i]
        previous = (kind.name if kind else "alu", ins)
    low, typical, high = priced.cycles
    return (low, typical, high), priced.unpriced


def _load_store(
    kind: str, ins: Instruction, previous: tuple[str, Instruction] | None, table: Table, cost: Range
) -> Range:
    """A single load or store after the instruction before it (the TRM's 3.3.2 rules)."""
    address = set(ins.address_registers)
    offset_is_immediate = len(ins.address_registers) <= 1
    if kind == "store" and table.store_immediate_one_cycle and offset_is_immediate:
        cost = as_range(1)
    if previous is None:
        return cost
    before_kind, before = previous
    written = before.registers[:1] if base_mnemonic(before.mnemonic, table.classes) not in _NO_DESTINATION else []
    depends = bool(address & set(written))
    if before_kind == "load" and table.load_pipelining and not depends and cost[0] > 1:
        return _plus(cost, -1)
    if before_kind == "alu" and depends:
        return _plus(cost, table.address_dependency_stall)
    return cost


_SHIFTED = re.compile(r",\s*(lsl|lsr|asr|ror)\b")


def pipelined_class(ins: Instruction, table: Table) -> tuple[str, TimingClass | None]:
    """The mnemonic without its suffixes and its class in a pipelined table: a class of the Helium
    form (Q registers named) or of the scalar one first, then of either; a .f type's own class first;
    a predicated Helium instruction (VLDRBT in a VPT block) as the one it predicates."""
    full = ins.mnemonic.lower()
    name, _, kind = full.partition(".")
    letter = kind[:1] if kind[:1] in ("f", "i", "s", "u", "p") else ""
    operands = "/q" if re.search(r"\bq[0-7]\b", ins.operands) else "/s"
    names = [name]
    if name.startswith("v") and name[-1] in "te":
        names.append(name[:-1])
    if name.startswith("vpt"):
        names.append("vpt")
    names.append(base_mnemonic(full, table.classes))
    for candidate in names:
        for key in (f"{candidate}.{letter}{operands}", f"{candidate}{operands}", f"{candidate}.{letter}", candidate):
            if key in table.classes:
                return candidate, table.classes[key]
    return names[-1], None


def slot(ins: Instruction, table: Table, which: int) -> tuple[issue.Slot, str, bool, bool]:
    """`ins`'s issue.Slot with the `which` end of its class's range (0 least, 1 typical, 2 most), its
    mnemonic without suffixes, whether it stores, and whether the table knows it."""
    name, kind = pipelined_class(ins, table)
    if kind is None:
        latency = table.shifted_operand_latency if _SHIFTED.search(ins.operands) else 1
        return issue.Slot("alu", table.default, latency), name, False, name in _ALU
    busy = kind.cycles[which]
    if kind.per_register:
        busy += -(-ins.register_list // kind.registers_per_cycle)
    dual = kind.dual == "always" or (kind.dual == "immediate" and "#" in ins.operands)
    latency = kind.latency
    if kind.pipe == "alu" and _SHIFTED.search(ins.operands):
        latency = max(latency, table.shifted_operand_latency)
    found = issue.Slot(
        None if dual and kind.pipe == "alu" else kind.pipe,
        busy,
        latency,
        dual,
        table.stored_late if kind.store and kind.pipe == "vls" else 0,
        kind.no_store_forwarding,
        kind.issues,
    )
    return found, name, kind.store, True


def _issued(instructions: list[Instruction], table: Table) -> tuple[Range, Counter[str]]:
    """A pipelined table's price of one run of a block (issue.steady_cycles at each end of a range;
    once where the block has no range, as most have none)."""
    unpriced: Counter[str] = Counter()
    priced: dict[tuple[tuple[issue.Slot, str, bool], ...], int] = {}
    cycles = []
    for which in range(3):
        slots = []
        for ins in instructions:
            found, name, store, known = slot(ins, table, which)
            if which == 0 and not known:
                unpriced[name] += 1
            slots.append((found, name, store))
        key = tuple(slots)
        if key not in priced:
            priced[key] = issue.steady_cycles(instructions, slots)
        cycles.append(priced[key])
    return (cycles[0], cycles[1], cycles[2]), unpriced


def block_refill(instructions: list[Instruction] | None, table: Table) -> Range:
    """The refill a taken branch at the end of the block costs: its class's own (a loop end the
    loop cache folds) or the table's."""
    if instructions and table.pipelined:
        kind = pipelined_class(instructions[-1], table)[1]
        if kind is not None and kind.refill is not None:
            return kind.refill
    return table.refill


# Data processing instructions that take the table's default (one cycle): not worth a note.
_ALU = set(
    "add adc sub sbc rsb mov mvn movw movt cmp cmn tst teq and orr eor bic orn lsl lsr asr ror rrx neg clz rbit "
    "rev rev16 revsh sxtb sxth uxtb uxth sxtb16 uxtb16 sxtab sxtah uxtab uxtah sxtab16 uxtab16 bfi bfc ubfx sbfx "
    "ssat usat ssat16 usat16 qadd qsub qdadd qdsub qadd8 qadd16 qsub8 qsub16 qasx qsax sadd8 sadd16 ssub8 ssub16 "
    "sasx ssax uadd8 uadd16 usub8 usub16 uasx usax shadd8 shadd16 shsub8 shsub16 uhadd8 uhadd16 uhsub8 uhsub16 "
    "uqadd8 uqadd16 uqsub8 uqsub16 sel pkhbt pkhtb usad8 usada8 addw subw adr nop cpsid cpsie mrs msr svc bkpt "
    "sev wfi wfe yield udf vadd vsub vmul vnmul vneg vabs vcmp vcmpe vcvt vcvtr vmov vmrs vmsr".split()
)
