"""cmx-gen's QEMU TCG plugin (kernels/qemu_plugin/cmx_cycles.c): built on first use with the host's C
compiler and cached by its source's hash, like the runtime; and what it writes, read back."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from cmx_gen.common import host_library
from cmx_gen.common.errors import RunError
from cmx_gen.common.paths import KERNELS_DIR
from cmx_gen.fit.board_memory import Accelerator

SOURCE = KERNELS_DIR / "qemu_plugin" / "cmx_cycles.c"


def build() -> Path:
    """The plugin's shared library, compiled once per source version."""
    return host_library.build("cmx_cycles", [SOURCE], ["-fvisibility=hidden"], "--cycles (a QEMU plugin)")


@dataclass(frozen=True)
class Block:
    """One translated block of what ran in the measured region: QEMU ends a block at a branch."""

    vaddr: int
    instructions: int
    nbytes: int
    runs: int
    taken: int  # runs after which the next block was not the one that follows it in memory


@dataclass(frozen=True)
class Misses:
    """The lines a region's flash accelerator missed: instruction lines right after the line before
    (a prefetch can hide them), instruction lines after a branch, and data lines."""

    sequential: int = 0
    branched: int = 0
    data: int = 0


@dataclass(frozen=True)
class Counts:
    blocks: tuple[Block, ...]
    accesses: dict[str, tuple[int, int]]  # region name ("" for none of them) -> (loads, stores)
    opened: int = 1  # how often the region opened: every count is the sum over them
    misses: dict[str, Misses] = field(default_factory=dict)  # each region behind an accelerator
    # with marks (the profile image): what ran between marks, by the key of the mark that closed it
    # (-1: after the last mark), each key's segments summed
    segments: dict[int, Counts] = field(default_factory=dict)

    @property
    def instructions(self) -> int:
        return sum(b.instructions * b.runs for b in self.blocks)


def argument(
    library: Path,
    begin: int,
    end: int,
    out: Path,
    regions: list[tuple[int, int]],
    marks: tuple[int, int] | None = None,
    caches: dict[int, Accelerator] | None = None,
) -> str:
    """QEMU's `-plugin` value: the measured region's edges (Thumb bit cleared), the output file,
    the memory regions whose loads and stores are counted apart, the profile image's marks array, and
    the accelerator in front of a region (by its index in `regions`) whose lines are followed."""
    parts = [str(library), f"begin={begin & ~1:#x}", f"end={end & ~1:#x}", f"out={out}"]
    parts += [f"region={lo:#x}:{hi:#x}" for lo, hi in regions]
    parts += [f"cache={i}:{a.line_bytes}:{a.lines}:{a.data_lines}" for i, a in sorted((caches or {}).items())]
    if marks is not None:
        parts.append(f"mark={marks[0]:#x}:{marks[1]:#x}")
    return ",".join(parts)


def read(out: Path, region_names: list[str]) -> Counts:
    """What the plugin wrote at QEMU's exit."""
    if not out.is_file():
        raise RunError(
            f"the cycle plugin wrote nothing ({out})", "the image must exit by itself: run the check image, not --app"
        )
    blocks: list[Block] = []
    accesses: dict[str, tuple[int, int]] = {}
    opened = 1
    region = lambda index: region_names[index] if index >= 0 else ""  # noqa: E731
    # key -> (vaddr, instructions) -> [nbytes, runs, taken]; key -> region -> [loads, stores]
    seg_blocks: dict[int, dict[tuple[int, int], list[int]]] = {}
    seg_accesses: dict[int, dict[str, list[int]]] = {}
    misses: dict[str, Misses] = {}
    seg_misses: dict[int, dict[str, Misses]] = {}
    key = -1
    for line in out.read_text().splitlines():
        kind, *values = line.split()
        if kind == "block":
            blocks.append(Block(int(values[0], 16), *(int(v) for v in values[1:])))
        elif kind == "opened":
            opened = int(values[0])
        elif kind == "memory":
            accesses[region(int(values[0]))] = (int(values[1]), int(values[2]))
        elif kind == "cache":
            misses[region(int(values[0]))] = Misses(*(int(v) for v in values[1:]))
        elif kind == "segment":
            key = int(values[0])
            seg_blocks.setdefault(key, {})
            seg_accesses.setdefault(key, {})
            seg_misses.setdefault(key, {})
        elif kind == "scache":
            before = seg_misses[key].get(region(int(values[0])), Misses())
            more = [int(v) for v in values[1:]]
            seg_misses[key][region(int(values[0]))] = Misses(
                before.sequential + more[0], before.branched + more[1], before.data + more[2]
            )
        elif kind == "sblock":
            nbytes, runs, taken = (int(v) for v in values[2:])
            summed = seg_blocks[key].setdefault((int(values[0], 16), int(values[1])), [nbytes, 0, 0])
            summed[1] += runs
            summed[2] += taken
        elif kind == "smemory":
            summed = seg_accesses[key].setdefault(region(int(values[0])), [0, 0])
            summed[0] += int(values[1])
            summed[1] += int(values[2])
    if not blocks:
        raise RunError(
            "the cycle plugin saw nothing run between cmx_measure_begin and cmx_measure_end",
            "rebuild the app with this cmx-gen (`cmx-gen regen APP && cmx-gen build APP`)",
        )
    segments = {
        k: Counts(
            tuple(Block(vaddr, n, *counts) for (vaddr, n), counts in seg_blocks[k].items()),
            {name: (loads, stores) for name, (loads, stores) in seg_accesses[k].items()},
            misses=seg_misses[k],
        )
        for k in seg_blocks
    }
    return Counts(tuple(blocks), accesses, opened, segments=segments, misses=misses)
