"""Cycles of a block on an in-order core whose pipes overlap (the Cortex-M55): each instruction issues
when the one before it has, its pipe is free and its operands are ready. A Helium instruction holds its
pipe for its beats (two cycles on a dual-beat core) while the next instruction, in another pipe, starts;
a 16-bit instruction may issue beside the 16-bit one before it.

A block is priced in the steady state of running it twice back to back (the cycles the second copy
adds): a loop body pays for the pipe it still holds when the branch goes back, and a straight block
for its own tail, the best guess of what the block after it waits for."""

from __future__ import annotations

import re
from dataclasses import dataclass

from cmx_gen.device.cycles.listing import Instruction

_REGISTER = re.compile(r"\b(r\d{1,2}|sp|lr|pc|ip|fp|sl|sb|q[0-7]|d\d{1,2}|s\d{1,2})\b")
_ALIASES = {"ip": "r12", "fp": "r11", "sl": "r10", "sb": "r9"}


@dataclass(frozen=True)
class Slot:
    """What the issue model needs to know of one instruction."""

    pipe: str | None  # the pipe it holds; None: it holds none (a dual-issue partner, a folded loop end)
    busy: int  # cycles it holds its pipe
    latency: int  # cycles from its issue until a later instruction can read its result
    dual: bool = False  # may issue in the cycle of the 16-bit instruction next to it
    stored_late: int = 0  # a store reads its data this many cycles after it issues
    no_store_forwarding: bool = False  # a store waits the whole latency for this one's result
    issues: bool = True  # False: folded away (a loop end the loop cache holds)


def _register(name: str) -> str:
    """One name per register the pipeline tracks: S and D registers are parts of a Q register."""
    name = _ALIASES.get(name, name)
    if name[0] == "s" and name != "sp":
        return f"q{int(name[1:]) // 4}"
    if name[0] == "d":
        return f"q{int(name[1:]) // 2}"
    return name


# Writes two registers: long multiplies, LDRD, Helium's long accumulations, VMOV of two GPRs.
_TWO_DESTINATIONS = re.compile(
    r"^(smull|umull|smlal|umlal|umaal|smlald|smlsld|ldrd|ldrexd|vmlaldav|vmlsldav|"
    r"vrmlaldavh|vrmlsldavh|vaddlv|asrl|lsll|lsrl|sqrshrl|uqrshll)"
)
# Reads what it writes: accumulations, partial writes.
_ACCUMULATES = re.compile(
    r"^(mla|mls|sml[ad]|smmla|smmls|umlal|umaal|vmla|vmls|vfma|vfms|vqdmlah|vqrdmlah|"
    r"vqdmlash|vqrdmlash|vaddva|vaddlva|vabav|bfi|movt|vsli|vsri)|^v\w+a$"
)
_NO_DESTINATION = re.compile(
    r"^(cmp|cmn|tst|teq|b|bl|bx|blx|cbz|cbnz|it\w*|nop|vpst|vpt\w*|vcmp|vcmpe|vctp|"
    r"le|letp|dls|dlstp|wls|wlstp|dmb|dsb|isb)$"
)


def operands(ins: Instruction, name: str, store: bool) -> tuple[list[str], list[str]]:
    """(the registers it writes, the registers it reads), `name` its mnemonic without suffixes."""
    text = ins.operands
    base = text.partition("[")[2].partition("]")[0]
    written_back = text.endswith("!") or bool(re.search(r"\],\s*(#|r|ip|lr)", text))
    address = [_register(r) for r in _REGISTER.findall(base)]
    listed = [_register(r) for r in _REGISTER.findall(text.partition("{")[2].partition("}")[0])]
    named = [_register(r) for r in _REGISTER.findall(re.sub(r"\[[^\]]*\]", "", text))]
    writes: list[str] = []
    if name in ("push", "stm", "stmia", "stmdb", "stmea", "stmfd", "vpush", "vstm", "vstmia", "vstmdb"):
        reads = [*listed, *named]
    elif name in ("pop", "ldm", "ldmia", "ldmdb", "ldmfd", "ldmea", "vpop", "vldm", "vldmia", "vldmdb"):
        writes, reads = listed, [r for r in named if r not in listed]
    elif store or _NO_DESTINATION.match(name):
        reads = named + address
    else:
        count = 2 if _TWO_DESTINATIONS.match(name) or (name == "vmov" and _gprs(named[:2])) else 1
        writes = named[:count]
        reads = named[count:] + address + (writes if _ACCUMULATES.match(name) else [])
    if written_back and address:
        writes = [*writes, address[0]]
    return writes, reads


def _gprs(names: list[str]) -> bool:
    return len(names) == 2 and all(n[0] in "rslp" for n in names)


class _Pipeline:
    def __init__(self) -> None:
        self.ready: dict[str, int] = {}  # register -> first cycle a reader can issue
        self.unstored: set[str] = set()  # registers whose producer does not forward into a store
        self.free: dict[str, int] = {}  # pipe -> first cycle it is free
        self.last = -1  # the cycle the last instruction issued in
        self.last_pairs = False  # the last instruction may take a 16-bit partner in its cycle
        self.last_dual = False  # ... and is itself a dual-issue partner (a MOV, an ADD of an immediate)
        self.last_writes: list[str] = []

    def issue(self, ins: Instruction, slot: Slot, store: bool, writes: list[str], reads: list[str]) -> None:
        if not slot.issues:
            return
        data = set(reads[:1]) if store else set()  # a store's first register is its data
        need = 0
        for reg in reads:
            ready = self.ready.get(reg, 0)
            if reg in data and reg not in self.unstored:
                ready -= slot.stored_late
            need = max(need, ready)
        pairs = (
            self.last_pairs
            and ins.size == 2
            and (slot.dual or self.last_dual)
            and slot.pipe in (None, "alu")
            and not set(reads) & set(self.last_writes)
            and max(need, self.free.get(slot.pipe, 0) if slot.pipe else 0) <= self.last
        )
        if pairs:
            at = self.last
        else:
            at = max(self.last + 1, need, self.free.get(slot.pipe, 0) if slot.pipe else 0)
        if slot.pipe:
            self.free[slot.pipe] = at + slot.busy
        for reg in writes:
            self.ready[reg] = at + slot.latency
            if slot.no_store_forwarding:
                self.unstored.add(reg)
            else:
                self.unstored.discard(reg)
        self.last_pairs = not pairs and ins.size == 2 and slot.pipe in (None, "alu")
        self.last_dual = slot.dual
        self.last = max(self.last, at)
        self.last_writes = writes


def steady_cycles(instructions: list[Instruction], slots: list[tuple[Slot, str, bool]]) -> int:
    """Cycles one run of the block adds after a run of itself: slots[i] = (its slot, its mnemonic
    without suffixes, whether it stores)."""
    steps = [
        (ins, slot, store, *operands(ins, name, store))
        for ins, (slot, name, store) in zip(instructions, slots, strict=True)
    ]
    once = _Pipeline()
    for step in steps:
        once.issue(*step)
    first = once.last + 1
    for step in steps:
        once.issue(*step)
    return once.last + 1 - first
