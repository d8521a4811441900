"""A measured region's cycles from what ran: each block the plugin counted priced with the core's
table (timing.py), its taken branches' refills, and the board's wait states: on each load and store,
or behind a flash accelerator on each line it missed; the whole region, and each segment the profile
image's marks cut (its rows)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from cmx_gen.device.cycles.listing import Instruction, Listing
from cmx_gen.device.cycles.plugin import Counts, Misses
from cmx_gen.device.cycles.timing import Range, Table, as_range, block_cycles, block_refill
from cmx_gen.fit.board_memory import Accelerator


@dataclass(frozen=True)
class Waits:
    """What a memory's reads cost beyond the core's table, from its board file: `states` cycles on
    each data access, or, behind an accelerator, on each line it missed (instruction fetch too)."""

    states: int = 0
    accelerator: Accelerator | None = None


def wait_cycles(counts: Counts, waits: dict[str, Waits]) -> Range:
    """The cycles the board's memories add. A missed data line or a line fetched after a branch waits
    the whole wait states; a missed line right after the one before waits them at most, none at best
    where the accelerator reads the next line ahead (the typical figure: half)."""
    low = typical = high = 0
    for region, (loads, stores) in counts.accesses.items():
        w = waits.get(region, Waits())
        if w.accelerator is None:
            low, typical, high = (x + (loads + stores) * w.states for x in (low, typical, high))
    for region, missed in counts.misses.items():
        w = waits.get(region, Waits())
        if w.accelerator is None:
            continue
        certain = (missed.branched + missed.data) * w.states
        ahead = missed.sequential * w.states  # with a prefetch: none of it to all of it
        least, usual = (0, ahead // 2) if w.accelerator.prefetch else (ahead, ahead)
        low, typical, high = low + certain + least, typical + certain + usual, high + certain + ahead
    return low, typical, high


def cut_block_cycles(instructions: list[Instruction], listing: Listing, table: Table) -> tuple[Range, Counter[str]]:
    """block_cycles of a block, priced as the core runs it: where QEMU cut the block although the code
    runs on (its last instruction does not branch: a 1 KiB page edge), with the instructions that follow
    it, less their own price. The core sees no edge there: a load after the cut still pipelines behind
    the one before, and the figure no longer depends on where the linker put a loop."""
    cost, missing = block_cycles(instructions, table)
    if instructions[-1].may_branch:
        return cost, missing
    follow = listing.run_on(instructions[-1].address + instructions[-1].size)
    if not follow:
        return cost, missing
    joined = block_cycles(instructions + follow, table)[0]
    alone = block_cycles(follow, table)[0]
    return (max(joined[0] - alone[0], 0), max(joined[1] - alone[1], 0), max(joined[2] - alone[2], 0)), missing


@dataclass(frozen=True)
class Estimate:
    """Cycles of the measured region: (least, typical, most), and what they are made of."""

    cycles: Range
    instructions: int
    taken: int
    wait_cycles: Range
    unlisted_instructions: int  # ran where the image has no code (priced at the default)
    unpriced: dict[str, int]  # mnemonic -> instructions run that the table has no class for
    table: Table
    # (function, typical cycles, instructions) where the region spent them, the most first
    by_function: tuple[tuple[str, int, int], ...] = ()
    accesses: tuple[tuple[str, int, int], ...] = ()  # (region, loads, stores) that saw any
    misses: tuple[tuple[str, Misses], ...] = ()  # each region behind an accelerator

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
            notes.append(f"data loads/stores by region {each}")
        for region, missed in self.misses:
            notes.append(
                f"{region}'s accelerator missed {missed.data:,} data lines, {missed.branched:,} instruction lines "
                f"after a branch and {missed.sequential:,} in sequence"
            )
        if self.wait_cycles[2]:
            least, waited, most = self.wait_cycles
            notes.append(f"the memories' waits {waited:,}" + (f" ({least:,}-{most:,})" if least != most else ""))
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


# (address, instructions) -> one run's price, the mnemonics it could not price, a taken branch's refill
Memo = dict[tuple[int, int], tuple[Range, Counter[str], Range]]


def estimate(
    counts: Counts, listing: Listing, table: Table, waits: dict[str, Waits], memo: Memo | None = None
) -> Estimate:
    """The measured region's cycles: blocks x runs, taken branches x P, the memories' waits.
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
            cost, missing = (
                cut_block_cycles(instructions, listing, table)
                if instructions is not None
                else (as_range(table.default * block.instructions), Counter({"": block.instructions}))
            )
            memo[key] = (cost, missing, block_refill(instructions, table))
        cost, missing, refill = memo[key]
        for i in range(3):
            total[i] += cost[i] * block.runs + refill[i] * block.taken
        name = listing.function(block.vaddr)
        functions[name] += cost[1] * block.runs + refill[1] * block.taken
        function_instructions[name] += block.instructions * block.runs
        if "" in missing:
            unlisted += block.instructions * block.runs
        else:
            unpriced.update({name: n * block.runs for name, n in missing.items()})
    waited = wait_cycles(counts, waits)
    return Estimate(
        cycles=(total[0] + waited[0], total[1] + waited[1], total[2] + waited[2]),
        instructions=counts.instructions,
        taken=sum(b.taken for b in counts.blocks),
        wait_cycles=waited,
        unlisted_instructions=unlisted,
        unpriced=dict(unpriced),
        table=table,
        by_function=tuple((name, cycles, function_instructions[name]) for name, cycles in functions.most_common()),
        accesses=tuple(
            (region, loads, stores) for region, (loads, stores) in counts.accesses.items() if loads or stores
        ),
        misses=tuple(sorted(counts.misses.items())),
    )


def by_segment(
    counts: Counts, listing: Listing, table: Table, waits: dict[str, Waits], memo: Memo | None = None
) -> dict[int, Estimate]:
    """Each marked segment's estimate (the profile image's rows, by the key of their mark); `memo` as
    estimate's (the whole region's blocks, already priced)."""
    memo = {} if memo is None else memo
    return {key: estimate(part, listing, table, waits, memo) for key, part in counts.segments.items()}
