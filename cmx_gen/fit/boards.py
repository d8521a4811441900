"""Board database: one YAML file per board in `boards/`, validated by the pydantic models below.

Boards are data so that adding one is a file, not code (see docs/boards.md). A bad file fails at
load time with the file, the field path and the problem, instead of later as a wrong link map.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Literal

import yaml
from pydantic import Field, ValidationError, field_validator, model_validator

from cmx_gen.common.errors import BoardError
from cmx_gen.common.paths import BOARDS_DIR
from cmx_gen.common.targets import TARGETS, Isa, cores, isa_target, optional
from cmx_gen.fit.board_memory import MemoryRegion, Strict

# Extra board folders searched before the built-in one (os.pathsep separated), so a user can keep
# private boards outside the checkout.
BOARD_PATH_ENV = "CMX_GEN_BOARD_PATH"


class Core(Strict):
    name: str
    # gcc -mfpu value ("fpv4-sp-d16", "fpv5-d16", "fpv5-sp-d16", "auto" for M55/M85) or None.
    fpu: str | None
    dsp: bool
    mve: Literal["int", "float"] | None = None
    clock_hz: int = Field(gt=0)

    @field_validator("name")
    @classmethod
    def _known_core(cls, value: str) -> str:
        if value not in cores():
            raise ValueError(f"unknown core {value!r}; expected one of {', '.join(cores())}")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Core:
        if self.mve and cores()[self.name]["isa"] != "MVE":
            raise ValueError(f"{self.name} has no MVE (Helium); remove `mve`")
        if self.mve and not self.dsp:
            raise ValueError("an MVE core also has the DSP extension; set `dsp: true`")
        return self

    @property
    def isa(self) -> Isa:
        """The CMSIS-NN code path this core runs; a .pte is lowered for exactly one."""
        if self.mve:
            return "MVE"
        if self.dsp:
            return "DSP"
        return "SCALAR"

    @property
    def arch(self) -> str:
        """The Arm architecture the core implements (armv7e-m, armv8.1-m.main)."""
        return str(cores()[self.name]["arch"])

    @property
    def lower_target(self) -> str:
        """The `cmx-gen lower --target` whose program runs on this core: the core itself when it has
        the options its name implies and cmx-gen can lower for it, else a core of the same ISA."""
        if cores()[self.name]["isa"] == self.isa and self.name in TARGETS:
            return self.name
        return isa_target(self.isa)

    @property
    def gcc_flags(self) -> list[str]:
        """-mcpu/-mfpu/-mfloat-abi for arm-none-eabi-gcc, matching this core's options."""
        cpu = self.name
        if optional(self.name, "mve"):
            if not self.mve:
                cpu += "+nomve"
            elif self.mve == "int":
                cpu += "+nomve.fp"
        elif optional(self.name, "dsp") and not self.dsp:
            cpu += "+nodsp"
        if self.fpu is None and optional(self.name, "fpu"):
            cpu += "+nofp"
        flags = [f"-mcpu={cpu}"]
        if self.fpu is None:
            flags.append("-mfloat-abi=soft")
        else:
            if self.fpu != "auto":
                flags.append(f"-mfpu={self.fpu}")
            flags.append("-mfloat-abi=hard")
        return flags


class Qemu(Strict):
    machine: str
    cpu: str


class Fvp(Strict):
    model: str
    flags: list[str] = []


class Flash(Strict):
    """How an image gets onto the board (`cmx-gen flash`): pyOCD where it knows the part, else the
    vendor's tool (`runner`, the name `west flash` uses; commands in data/flash_runners.yaml)."""

    runner: str  # `west flash` runner name
    pyocd_target: str | None = None
    device: str | None = None  # the vendor tool's name for the part, where its command needs one
    # Why the boot ROM will not start the bare-metal image (an image header it needs), or None.
    baremetal_boot: str | None = None


class Uart(Strict):
    """The console UART the bare-metal app can print on without a debugger (`-D CMX_CONSOLE=uart`).

    Only UARTs that need no clock or pin set-up are described: Arm's CMSDK APB UART of the MPS2/MPS3
    FPGA images and their FVPs/QEMU machines. `base` is the address the app's security state sees
    (the secure alias on TrustZone cores, where the bare-metal app runs secure)."""

    kind: Literal["cmsdk-apb"]
    base: int = Field(ge=0, lt=2**32)
    clock_hz: int = Field(gt=0)  # the UART's APB clock: BAUDDIV = clock_hz / baud
    baud: int = Field(default=115200, gt=0)

    @model_validator(mode="after")
    def _divisor(self) -> Uart:
        if self.clock_hz // self.baud < 16:
            raise ValueError(f"clock_hz / baud must be >= 16 for a CMSDK UART (is {self.clock_hz // self.baud})")
        return self


class Zephyr(Strict):
    target: str = Field(pattern=r"^[a-z0-9_]+(/[a-z0-9_]+){0,3}$")  # hardware model v2 board target
    file_name: str = ""  # the same with "/" -> "_" (board overlay / conf file names)

    @model_validator(mode="after")
    def _file_name(self) -> Zephyr:
        expected = self.target.replace("/", "_")
        if not self.file_name:
            object.__setattr__(self, "file_name", expected)
        elif self.file_name != expected:
            raise ValueError(f"file_name must be {expected!r} for target {self.target!r}")
        return self


class WeightsArea(Strict):
    """Memory-mapped storage (external flash, DDR) that holds a slot's weights when they are not in
    the slot: the program's segments, read in place (docs/api.md "Weights outside the slot")."""

    base: int = Field(ge=0, lt=2**32)
    size: int = Field(gt=0, le=2**32)

    @property
    def end(self) -> int:
        return self.base + self.size


class ModelSlot(Strict):
    """A flash range that holds a model apart from the firmware (placement = "slot", docs/api.md):
    written by `cmx-gen flash --model-only`, checked by the firmware before it runs what is there."""

    name: Literal["a", "b"]
    base: int = Field(ge=0, lt=2**32)
    size: int = Field(gt=0, le=2**32)
    weights: WeightsArea | None = None  # with one, the slot keeps the program's head, the area its segments

    @property
    def end(self) -> int:
        return self.base + self.size

    def ranges(self) -> list[tuple[str, ModelSlot | WeightsArea]]:
        """The slot and its weights area, each with the name a refusal gives it."""
        found: list[tuple[str, ModelSlot | WeightsArea]] = [(f"model slot {self.name}", self)]
        return found + ([(f"the weights area of model slot {self.name}", self.weights)] if self.weights else [])


class Board(Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    name: str
    vendor: str
    core: Core
    memory: list[MemoryRegion] = Field(min_length=1)
    # Region holding code and the vector table (Zephyr's `zephyr,flash` chosen node).
    boot_region: str
    # Region holding .data/.bss, stack and heap (Zephyr's `zephyr,sram` chosen node).
    ram_region: str
    # None when Zephyr has no board for it (bare-metal app only).
    zephyr: Zephyr | None = None
    qemu: Qemu | None = None
    fvp: Fvp | None = None
    flash: Flash | None = None
    # Where the board's own console is (Zephyr's `zephyr,console`): a UART on every board here.
    console: Literal["semihosting", "uart"] = "uart"
    # The UART the bare-metal app drives itself, when it is one it knows (see Uart); None: semihosting only.
    uart: Uart | None = None
    # Flash ranges a model may live in apart from the firmware (placement = "slot"): at the top of one
    # region each, which the firmware's link then leaves to them.
    model_slots: list[ModelSlot] = []
    notes: str = ""

    @model_validator(mode="after")
    def _slots(self) -> Board:
        names = [s.name for s in self.model_slots]
        if len(set(names)) != len(names):
            raise ValueError("model_slots: each slot name (a, b) once")
        if len({s.weights is None for s in self.model_slots}) > 1:
            raise ValueError("model_slots: give every slot a weights area, or none (one image serves every slot)")
        ranges = [named for slot in self.model_slots for named in slot.ranges()]
        for what, item in ranges:
            region = next((r for r in self.memory if r.base <= item.base and item.end <= r.end), None)
            if region is None or not region.loadable:
                raise ValueError(f"{what} is not inside one loadable memory region")
            if item.base % 16:
                raise ValueError(f"{what}: base must be 16-byte aligned")
        for region in self.memory:
            inside = sorted((item for _, item in ranges if region.base <= item.base < region.end), key=lambda i: i.base)
            if inside and inside[0].base == region.base:
                raise ValueError(f"model slots take all of {region.name}: leave the firmware room below them")
            if inside and (inside[-1].end != region.end or any(a.end != b.base for a, b in zip(inside, inside[1:]))):
                raise ValueError(
                    f"model slots and weights areas in {region.name} must be contiguous and end where the region ends"
                )
        return self

    def slot_ranges(self) -> list[ModelSlot | WeightsArea]:
        """Every range the model slots take: the slots and their weights areas."""
        return [item for slot in self.model_slots for _, item in slot.ranges()]

    def with_slots_reserved(self) -> Board:
        """This board as a firmware with model slots sees it: each region that holds slots ends
        where its first slot begins, so nothing of the image is linked there."""
        memory = []
        for region in self.memory:
            starts = [s.base for s in self.slot_ranges() if region.base <= s.base < region.end]
            memory.append(region.model_copy(update={"size": min(starts) - region.base}) if starts else region)
        return self.model_copy(update={"memory": memory})

    @model_validator(mode="after")
    def _regions(self) -> Board:
        names = [r.name for r in self.memory]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"duplicate memory region name(s): {', '.join(dupes)}")
        ordered = sorted(self.memory, key=lambda r: r.base)
        for a, b in zip(ordered, ordered[1:]):
            if b.base < a.end:
                raise ValueError(f"memory regions {a.name!r} and {b.name!r} overlap")
        for field in ("boot_region", "ram_region"):
            value = getattr(self, field)
            if value not in names:
                raise ValueError(f"{field} {value!r} is not one of the memory regions ({', '.join(names)})")
        boot = self.region(self.boot_region)
        if not (boot.executable and boot.loadable):
            raise ValueError(f"boot_region {boot.name!r} must be executable and loadable")
        if self.region(self.ram_region).kind in ("flash", "itcm"):
            raise ValueError(f"ram_region {self.ram_region!r} must be a RAM (dtcm, sram or ddr)")
        return self

    def region(self, name: str) -> MemoryRegion:
        for region in self.memory:
            if region.name == name:
                return region
        raise BoardError(
            f"board {self.id} has no memory region {name!r}", f"use one of: {', '.join(r.name for r in self.memory)}"
        )

    @property
    def runs_in_qemu(self) -> bool:
        return self.qemu is not None

    @property
    def flash_waits(self) -> bool:
        """Whether the region the firmware boots from, where a linked program's weights are read in
        place, has wait states (common/goals.stages_weights)."""
        return self.region(self.boot_region).wait_states > 0


def board_dirs() -> list[Path]:
    """Folders searched for `<id>.yaml`: $CMX_GEN_BOARD_PATH entries first, then `boards/`."""
    extra = [Path(p) for p in os.environ.get(BOARD_PATH_ENV, "").split(os.pathsep) if p]
    return [*extra, BOARDS_DIR]


def _loc(loc: tuple) -> str:
    """pydantic loc ('memory', 2, 'size') -> 'memory[2].size'."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def load_board_file(path: str | Path) -> Board:
    """Load and validate one board file; any problem is a BoardError naming file and field."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise BoardError(f"cannot read board file {path}: {exc.strerror}", "check the path") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise BoardError(
            f"board file {path}{where} is not valid YAML: {getattr(exc, 'problem', exc)}", "fix the YAML syntax"
        ) from exc
    if not isinstance(data, dict):
        raise BoardError(f"board file {path} must be a YAML mapping", "see docs/boards.md for the format")
    try:
        board = Board.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            msg = err["msg"].removeprefix("Value error, ")
            problems.append(f"field {_loc(err['loc'])}: {msg}")
        raise BoardError(
            f"board file {path}: " + "; ".join(problems), "fix the field(s) named; the schema is in docs/boards.md"
        ) from exc
    if board.id != path.stem:
        raise BoardError(
            f"board file {path}: field id: {board.id!r} does not match the file name {path.stem!r}",
            f"rename the file to {board.id}.yaml or set id: {path.stem}",
        )
    return board


def _board_files() -> dict[str, Path]:
    files: dict[str, Path] = {}
    for folder in reversed(board_dirs()):  # earlier folders override later ones
        if folder.is_dir():
            for path in folder.glob("*.yaml"):
                files[path.stem] = path
    return files


def board_ids() -> list[str]:
    return sorted(_board_files())


def is_board_file(board: str) -> bool:
    """Whether `--board` / `[target] board` names a board file (a path) rather than a board id."""
    return board.endswith((".yaml", ".yml")) or os.sep in board


def load_board(board_id: str) -> Board:
    """A board by id (or by the path of a board file)."""
    if is_board_file(board_id):
        return load_board_file(board_id)
    files = _board_files()
    if board_id not in files:
        close = difflib.get_close_matches(board_id, files, n=3, cutoff=0.5)
        hint = f"did you mean {', '.join(close)}?" if close else "run `cmx-gen boards` to list boards"
        raise BoardError(f"unknown board {board_id!r}", hint)
    return load_board_file(files[board_id])


def load_boards() -> list[Board]:
    files = _board_files()
    return [load_board_file(files[i]) for i in sorted(files)]
