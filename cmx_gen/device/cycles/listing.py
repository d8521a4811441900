"""The image's instructions, as the Arm toolchain's objdump disassembles them: address -> mnemonic and
operands, in address order, so a block the plugin names (its address and instruction count) can be
read back instruction by instruction."""

from __future__ import annotations

import bisect
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from cmx_gen.common.errors import RunError

_FUNCTION = re.compile(r"^([0-9a-f]+) <(.+)>:$")
# address, encoding (one or two halfwords, or a literal's word), mnemonic, operands
_LINE = re.compile(r"^\s*([0-9a-f]+):\t([0-9a-f ]+?)\s*\t([a-z][\w.]*)\s*(.*?)\s*(?:[;@].*)?$")
_REGISTER = re.compile(r"\b(r\d{1,2}|sp|lr|pc|ip|fp|sl|sb)\b")
_CONDITION = "(eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le|al)?"
_BRANCH = re.compile(rf"^(b|bl|blx|bx|bxj){_CONDITION}$|^(cbz|cbnz|tbb|tbh|le|letp|wls|wlstp)$")


@dataclass(frozen=True)
class Instruction:
    address: int
    mnemonic: str  # as objdump spells it: "ldr.w", "smlad", "bne.n", "vldrw.u32"
    operands: str
    size: int = 2  # bytes: 2 for a 16-bit Thumb encoding, 4 for a 32-bit one

    @property
    def registers(self) -> list[str]:
        """The general registers it names, in order ("r3", "sp", ...)."""
        return _REGISTER.findall(self.operands)

    @property
    def may_branch(self) -> bool:
        """Whether it can send the core elsewhere than the next instruction: B, BL, BX, CBZ, TBB, the
        loop ends (LE, WLS), or a write to the pc (POP {pc}, LDR pc, MOV pc)."""
        name = self.mnemonic.partition(".")[0]
        if _BRANCH.match(name):
            return True
        written = self.registers[:1] if not name.startswith(("pop", "ldm")) else self.registers
        return "pc" in written and not name.startswith(("str", "push", "stm", "cmp", "tst"))

    @property
    def address_registers(self) -> list[str]:
        """The registers inside its brackets (a load's or store's address)."""
        inside = self.operands.partition("[")[2].partition("]")[0]
        return _REGISTER.findall(inside)

    @property
    def register_list(self) -> int:
        """How many registers its {...} list names (LDM, PUSH, VPUSH; a range "r4-r7" counts 4)."""
        inside = self.operands.partition("{")[2].partition("}")[0]
        count = 0
        for part in filter(None, (p.strip() for p in inside.split(","))):
            first, _, last = part.partition("-")
            if last:
                lo, hi = (int(re.sub(r"\D", "", r) or 0) for r in (first, last))
                count += hi - lo + 1
            else:
                count += 1
        return count


def read(elf: Path, arch: str | None = None) -> tuple[list[Instruction], list[tuple[int, str]]]:
    """The executable sections' instructions, in address order (literal pools left out), and the
    functions (symbols) they start, in address order. `arch`: objdump's -m (binutils 2.40 reads
    Helium only when told armv8.1-m.main: without it a VLDRB is a coprocessor load)."""
    objdump = shutil.which("arm-none-eabi-objdump")
    if objdump is None:
        raise RunError("arm-none-eabi-objdump not found", "install the Arm GNU toolchain (arm-none-eabi-gcc)")
    command = [objdump, "-d", "-C", *(["-m", arch] if arch else []), str(elf)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RunError(f"objdump could not read {elf}: {done.stderr.strip()[-200:]}", "rebuild the app")
    instructions = []
    functions = []
    for line in done.stdout.splitlines():
        head = _FUNCTION.match(line)
        if head:
            functions.append((int(head.group(1), 16), short_name(head.group(2))))
            continue
        m = _LINE.match(line)
        if m and not m.group(3).startswith("."):  # .word, .short: literal pools
            size = 2 * len(m.group(2).split())
            instructions.append(Instruction(int(m.group(1), 16), m.group(3), m.group(4), size))
    return instructions, functions


def short_name(name: str) -> str:
    """A demangled C++ name without its parameter lists and clone suffixes, at most 60 characters:
    `executorch::runtime::coordinateToIndexWithTrailingDimsMemo`, not its whole signature."""
    previous = None
    while previous != name:
        previous, name = name, re.sub(r"\([^()]*\)", "", name)
    name = re.sub(r"(::)+", "::", name.replace(" const", "")).split(" [clone")[0]
    name = re.sub(r"\.(isra|lto_priv|constprop|part)\.\d+", "", name)
    return name if len(name) <= 60 else "..." + name[-57:]


class Listing:
    """The image's instructions with a lookup by address, and the function each address is in."""

    def __init__(self, elf: Path, arch: str | None = None) -> None:
        self.instructions, functions = read(elf, arch)
        self.index = {ins.address: i for i, ins in enumerate(self.instructions)}
        self.starts = [address for address, _ in functions]
        self.names = [name for _, name in functions]

    def function(self, address: int) -> str:
        """The name of the function `address` is in ("?" before the first)."""
        at = bisect.bisect_right(self.starts, address) - 1
        return self.names[at] if at >= 0 else "?"

    def block(self, vaddr: int, count: int) -> list[Instruction] | None:
        """The `count` instructions from `vaddr`, or None where the image has no code there."""
        start = self.index.get(vaddr)
        if start is None:
            return None
        found = self.instructions[start : start + count]
        return found if len(found) == count else None

    def run_on(self, vaddr: int, most: int = 16) -> list[Instruction]:
        """The instructions from `vaddr` up to and including the first that may branch (at most
        `most`): what the core runs straight after a block QEMU cut where the code falls through."""
        start = self.index.get(vaddr)
        if start is None:
            return []
        found = []
        for ins in self.instructions[start : start + most]:
            found.append(ins)
            if ins.may_branch:
                break
        return found
