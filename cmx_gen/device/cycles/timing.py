"""Cycles from what ran: each block the plugin counted, priced instruction by instruction with the
core's timing table (data/timing/<core>.yaml, which cites its source), plus the taken branches'
pipeline refills and the board's wait states on each load and store.

A least / typical / most figure: where the table gives a range (a divide, the refill P = 1-3, an IT
folded or not) the three figures take its ends. Zero wait states on instruction fetch (a flash
accelerator or cache that hits; QEMU's MPS2/MPS3 memories are single-cycle); interrupts are priced as
the instructions they run, not their entry and exit."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import yaml

from cmx_gen.common.errors import RunError
from cmx_gen.common.paths import DATA_DIR
from cmx_gen.device.cycles.listing import Instruction, Listing
from cmx_gen.device.cycles.plugin import Counts

Range = tuple[int, int, int]  # least, typical, most
_CONDITIONS = ("eq", "ne", "cs", "hs", "cc", "lo", "mi", "pl", "vs", "vc", "hi", "ls", "ge", "lt", "gt", "le", "al")
_NO_DESTINATION = {"cmp", "cmn", "tst", "teq", "b", "bl", "bx", "blx", "cbz", "cbnz", "it", "nop"}


def _as_range(value: Any) -> Range:
    if isinstance(value, list):
        low, typical, high = (int(v) for v in value)
        return low, typical, high
    return int(value), int(value), int(value)


def _plus(cycles: Range, extra: int) -> Range:
    return cycles[0] + extra, cycles[1] + extra, cycles[2] + extra


@dataclass(frozen=True)
class TimingClass:
    name: str
    cycles: Range
    per_register: bool = False


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
        kind = TimingClass(name, _as_range(spec["cycles"]), bool(spec.get("per_register", False)))
        for mnemonic in spec["mnemonics"]:
            by_mnemonic[str(mnemonic)] = kind
    return Table(
        core=core,
        source=str(raw["source"]),
        classes=by_mnemonic,
        refill=_as_range(raw.get("refill", base.get("refill", 0))),
        default=int(raw.get("default", base.get("default", 1))),
        load_pipelining=bool(rules.get("load_pipelining", False)),
        store_immediate_one_cycle=bool(rules.get("store_immediate_one_cycle", False)),
        address_dependency_stall=int(rules.get("address_dependency_stall", 0)),
        borrowed=raw.get("borrows"),
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
    priced = _Priced()
    previous: tuple[str, Instruction] | None = None
    for ins in instructions:
        name = base_mnemonic(ins.mnemonic, table.classes)
        kind = table.classes.get(name)
        if kind is None:
            cost = _as_range(table.default)
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
        cost = _as_range(1)
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


# Data processing instructions that take the table's default (one cycle): not worth a note.
_ALU = set(
    "add adc sub sbc rsb mov mvn movw movt cmp cmn tst teq and orr eor bic orn lsl lsr asr ror rrx neg clz rbit "
    "rev rev16 revsh sxtb sxth uxtb uxth sxtb16 uxtb16 sxtab sxtah uxtab uxtah sxtab16 uxtab16 bfi bfc ubfx sbfx "
    "ssat usat ssat16 usat16 qadd qsub qdadd qdsub qadd8 qadd16 qsub8 qsub16 qasx qsax sadd8 sadd16 ssub8 ssub16 "
    "sasx ssax uadd8 uadd16 usub8 usub16 uasx usax shadd8 shadd16 shsub8 shsub16 uhadd8 uhadd16 uhsub8 uhsub16 "
    "uqadd8 uqadd16 uqsub8 uqsub16 sel pkhbt pkhtb usad8 usada8 addw subw adr nop cpsid cpsie mrs msr svc bkpt "
    "sev wfi wfe yield udf vadd vsub vmul vnmul vneg vabs vcmp vcmpe vcvt vcvtr vmov vmrs vmsr".split()
)


@dataclass(frozen=True)
class Estimate:
    """Cycles of the measured region: (least, typical, most), and what they are made of."""

    cycles: Range
    instructions: int
    taken: int
    wait_cycles: int
    unlisted_instructions: int  # ran where the image has no code (priced at the default)
    unpriced: dict[str, int]  # mnemonic -> instructions run that the table has no class for
    table: Table
    # (function, typical cycles, instructions) where the region spent them, the most first
    by_function: tuple[tuple[str, int, int], ...] = ()
    accesses: tuple[tuple[str, int, int], ...] = ()  # (region, loads, stores) that saw any

    def describe(self, clock_hz: int, waits: str) -> str:
        low, typical, high = self.cycles
        where = f"{typical / clock_hz * 1e3:.3f} ms at {clock_hz / 1e6:g} MHz"
        notes = [
            f"{self.table.core} timings ({self.table.source})",
            f"refill P {self.table.refill[0]}-{self.table.refill[2]} on {self.taken:,} taken branches",
            waits,
            f"{self.instructions:,} instructions in the measured region (instr= and the counter reads)",
        ]
        if self.accesses:
            each = ", ".join(f"{region or 'elsewhere'} {loads:,}/{stores:,}" for region, loads, stores in self.accesses)
            notes.append(f"data loads/stores by region {each} (a wait state costs a cycle each)")
        if self.unpriced:
            top = ", ".join(
                f"{name} x{count:,}" for name, count in sorted(self.unpriced.items(), key=lambda x: -x[1])[:5]
            )
            notes.append(f"priced at {self.table.default} cycle without a class: {top}")
        if self.unlisted_instructions:
            notes.append(f"{self.unlisted_instructions:,} instructions ran outside the image's code")
        return f"cycles     {typical:,} estimated ({low:,}-{high:,}), {where}; " + "; ".join(notes)

    def where(self, count: int = 6) -> str:
        """The functions that take the most cycles: share and cycles per instruction."""
        total = max(self.cycles[1], 1)
        parts = [
            f"{name} {cycles / total:.0%} ({cycles / max(instructions, 1):.2f} cyc/instr)"
            for name, cycles, instructions in self.by_function[:count]
        ]
        return "where      " + ", ".join(parts)


Memo = dict[tuple[int, int], tuple[Range, Counter[str]]]  # (address, instructions) -> one run's price


def estimate(
    counts: Counts, listing: Listing, table: Table, wait_states: dict[str, int], memo: Memo | None = None
) -> Estimate:
    """The measured region's cycles: blocks x runs, taken branches x P, accesses x wait states.
    `memo`: block prices already found (the segments of one run share them)."""
    total = [0, 0, 0]
    unpriced: Counter[str] = Counter()
    unlisted = 0
    memo = {} if memo is None else memo
    functions: Counter[str] = Counter()
    function_instructions: Counter[str] = Counter()
    for block in counts.blocks:
        key = (block.vaddr, block.instructions)
        if key not in memo:
            instructions = listing.block(block.vaddr, block.instructions)
            memo[key] = (
                block_cycles(instructions, table)
                if instructions is not None
                else (_as_range(table.default * block.instructions), Counter({"": block.instructions}))
            )
        cost, missing = memo[key]
        for i in range(3):
            total[i] += cost[i] * block.runs + table.refill[i] * block.taken
        name = listing.function(block.vaddr)
        functions[name] += cost[1] * block.runs + table.refill[1] * block.taken
        function_instructions[name] += block.instructions * block.runs
        if "" in missing:
            unlisted += block.instructions * block.runs
        else:
            unpriced.update({name: n * block.runs for name, n in missing.items()})
    waits = sum((loads + stores) * wait_states.get(region, 0) for region, (loads, stores) in counts.accesses.items())
    low, typical, high = (t + waits for t in total)
    return Estimate(
        cycles=(low, typical, high),
        instructions=counts.instructions,
        taken=sum(b.taken for b in counts.blocks),
        wait_cycles=waits,
        unlisted_instructions=unlisted,
        unpriced=dict(unpriced),
        table=table,
        by_function=tuple((name, cycles, function_instructions[name]) for name, cycles in functions.most_common()),
        accesses=tuple(
            (region, loads, stores) for region, (loads, stores) in counts.accesses.items() if loads or stores
        ),
    )


def by_segment(
    counts: Counts, listing: Listing, table: Table, wait_states: dict[str, int], memo: Memo | None = None
) -> dict[int, Estimate]:
    """Each marked segment's estimate (the profile image's rows, by the key of their mark); `memo` as
    estimate's (the whole region's blocks, already priced)."""
    memo = {} if memo is None else memo
    return {key: estimate(part, listing, table, wait_states, memo) for key, part in counts.segments.items()}
