"""A board's memories as its board file gives them (boards.py reads the file): each address range the
linker can place things in, what its reads wait, and the flash accelerator in front of it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

RegionKind = Literal["flash", "itcm", "dtcm", "sram", "ddr"]


class Strict(BaseModel):
    # Unknown keys are typos more often than not: refuse them.
    model_config = ConfigDict(extra="forbid", frozen=True)


class Accelerator(Strict):
    """A flash accelerator in front of a region (ST's ART): small instruction and data caches of whole
    lines, so a read waits the region's wait states only when its line is not there. The cycle estimate
    follows each fetched and loaded line through caches of this shape (fully associative, least
    recently used out: an assumption where the manual gives no replacement rule)."""

    line_bytes: int = Field(ge=4, le=256)
    lines: int = Field(gt=0, le=4096)  # instruction cache lines
    data_lines: int = Field(gt=0, le=4096)
    # the next instruction line read ahead while one runs: a sequential line's wait is hidden in part
    prefetch: bool = False

    @field_validator("line_bytes")
    @classmethod
    def _power_of_two(cls, value: int) -> int:
        if value & (value - 1):
            raise ValueError(f"line_bytes must be a power of two (is {value})")
        return value


class MemoryRegion(Strict):
    """One address range the linker can place things in."""

    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    base: int = Field(ge=0, lt=2**32)
    size: int = Field(gt=0, le=2**32)
    kind: RegionKind
    executable: bool
    # Can hold data written at flash/load time (flash, or RAM that QEMU/FVP/a debugger loads).
    loadable: bool
    # Reachable by the SoC's general DMA (informational for now).
    dma: bool = False
    # Node label in Zephyr's devicetree for this board (e.g. "dtcm", "ddr4"); None when Zephyr does
    # not describe the region, so a Zephyr app needs an overlay before placing anything there.
    dt_node: str | None = None
    # Cycles a data load or store here waits at the board's clock (flash wait states, external RAM):
    # the cycle estimate adds them per access (device/cycles/estimate.py). 0: single-cycle.
    wait_states: int = Field(default=0, ge=0)
    # With one, only the lines it misses wait (instruction fetch too); without, every data access.
    accelerator: Accelerator | None = None

    @property
    def end(self) -> int:
        return self.base + self.size
