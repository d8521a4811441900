"""Putting a built app on a board: one flasher class per way of doing it, over one typed config
(as Zephyr's runners do).

- `PyOcdFlasher`: a bare-metal ELF through pyOCD, where the board file names a pyOCD target;
- `VendorFlasher`: a bare-metal ELF through the vendor's tool (data/flash_runners.yaml) where pyOCD
  has no target for the part;
- `WestFlasher`: a Zephyr app through `west flash` with the board's runner.

`plan()` picks one or refuses in one line (no flash runner, a boot ROM that needs an image header
the bare-metal app does not have); `commands()` is what `--dry-run` prints; `flash()` runs them and
turns the tools' failures (no probe, unknown target, USB permissions) into one-line errors.
"""

from __future__ import annotations

import functools
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from cmx_gen.common import progress
from cmx_gen.common.errors import FlashError
from cmx_gen.common.paths import DATA_DIR, executable
from cmx_gen.fit.boards import Board

RUNNERS_FILE = DATA_DIR / "flash_runners.yaml"


@dataclass
class FlashConfig:
    board: Board
    app: Path
    image: Path  # the ELF, or the build folder for kinds whose tool flashes one (Zephyr's west)
    probe: str | None = None  # probe serial number / unique ID
    base_address: int | None = None  # a raw binary written at this address (a model slot's image)


@functools.lru_cache(maxsize=1)
def vendor_runners() -> dict[str, Any]:
    return yaml.safe_load(RUNNERS_FILE.read_text())["runners"]


class Flasher:
    """One way to flash. Subclasses give `name`, `commands()` and, optionally, `check()`."""

    name = "base"

    def __init__(self, config: FlashConfig) -> None:
        self.config = config

    def commands(self) -> list[list[str]]:
        raise NotImplementedError

    def check(self) -> None:
        """Before running anything: the tools and what they need are there (FlashError otherwise)."""

    def flash(self) -> None:
        self.check()
        for command in self.commands():
            progress.say(f"{self.name}: {shlex.join(command)}")
            try:
                done = subprocess.run(command, capture_output=True, text=True, errors="replace")
            except FileNotFoundError as exc:
                raise FlashError(f"{command[0]} not found", self.install_hint()) from exc
            if done.returncode != 0:
                raise self.failure(command, done.stdout + done.stderr, done.returncode)

    def failure(self, command: list[str], output: str, code: int) -> FlashError:
        """A tool's failure as one line: the known causes named, else its last line."""
        for pattern, problem, fix in _KNOWN_FAILURES:
            if re.search(pattern, output, re.I):
                return FlashError(problem, fix)
        last = next((line.strip() for line in reversed(output.splitlines()) if line.strip()), "no output")
        return FlashError(f"{command[0]} failed (exit {code}): {last}", f"run `{shlex.join(command)}` to see all of it")

    def install_hint(self) -> str:
        return "install it and put it on PATH"


_KNOWN_FAILURES = [
    (
        r"No (available|connected) debug probes|No probe|no debug probe|Unable to find a matching probe|"
        r"No ST-LINK detected|No J-Link|no devices? (were )?found",
        "no debug probe found",
        "connect the board's debug USB port (`pyocd list` shows probes), or pass --probe UID",
    ),
    (
        r"Access denied|insufficient permissions|LIBUSB_ERROR_ACCESS|Permission denied",
        "the debug probe cannot be opened: USB permission denied",
        "install the probe's udev rules (pyOCD: udev/*.rules from its repository) or run as a user with access",
    ),
    (
        r"Target type .* not recognized|not a (recognized|known) target|unknown target",
        "pyOCD does not know this target",
        "install its CMSIS pack: `pyocd pack install TARGET`",
    ),
]


class PyOcdFlasher(Flasher):
    name = "pyocd"

    @property
    def target(self) -> str:
        assert self.config.board.flash and self.config.board.flash.pyocd_target
        return self.config.board.flash.pyocd_target

    def commands(self) -> list[list[str]]:
        probe = ["--uid", self.config.probe] if self.config.probe else []
        load = [
            executable("pyocd"),
            "load",
            "--no-wait",
            "--target",
            self.target,
            *probe,
            *self._format(),
            str(self.config.image),
        ]
        # --no-wait: no probe is an error, not a wait for ever; pyocd load resets the core after
        # programming, so the image starts at once.
        return ([[executable("pyocd"), "pack", "install", self.target]] if not target_known(self.target) else []) + [
            load
        ]

    def _format(self) -> list[str]:
        """An ELF places itself; a model slot's image is raw bytes at the slot's address."""
        if self.config.base_address is None:
            return ["--format", "elf"]
        return ["--format", "bin", "--base-address", f"0x{self.config.base_address:08x}"]

    def check(self) -> None:
        if shutil.which(executable("pyocd")) is None:
            raise FlashError("pyocd not found", self.install_hint())
        if not target_known(self.target):
            raise FlashError(
                f"pyOCD has no target {self.target!r} installed (it comes in a CMSIS pack)",
                f"run `pyocd pack install {self.target}` once (downloads the pack), then flash again",
            )

    def install_hint(self) -> str:
        return "pip install pyocd (cmx-gen's set-up installs it in .venv)"


def target_known(name: str) -> bool:
    """pyOCD has the target built in or from an installed CMSIS pack; True when pyOCD is absent
    (then nothing can be checked, and `check` says pyocd is missing)."""
    try:
        from pyocd.target import TARGET
        from pyocd.target.pack.pack_target import ManagedPacks
    except ImportError:
        return True
    if name.lower() in TARGET:
        return True
    try:
        return any(t.part_number.lower() == name.lower() for t in ManagedPacks.get_installed_targets())
    except Exception:  # no pack index yet
        return False


class VendorFlasher(Flasher):
    """The vendor tool of data/flash_runners.yaml named by the board's `flash.runner`."""

    def __init__(self, config: FlashConfig) -> None:
        super().__init__(config)
        assert config.board.flash is not None
        self.name = config.board.flash.runner
        self.spec = vendor_runners()[self.name]

    def commands(self) -> list[list[str]]:
        elf = self.config.image
        hexfile = elf.with_suffix(".hex")
        values = {
            "elf": str(elf),
            "hex": str(hexfile),
            "device": self.config.board.flash.device or "",  # type: ignore[union-attr]
            "probe": self.config.probe or "",
        }
        probe_args = [a.format(**values) for a in self.spec.get("probe", [])] if self.config.probe else []
        commands = (
            [["arm-none-eabi-objcopy", "-O", "ihex", str(elf), str(hexfile)]] if self.spec.get("image") == "hex" else []
        )
        for template in self.spec["commands"]:
            command: list[str] = []
            for arg in template:
                command += probe_args if arg == "{probe_args}" else [str(arg).format(**values)]
            commands.append(command)
        return commands

    def check(self) -> None:
        if shutil.which(self.spec["tool"]) is None:
            raise FlashError(
                f"{self.spec['tool']} not found (pyOCD has no target for {self.config.board.name}, "
                f"so it flashes with {self.name})",
                self.install_hint(),
            )

    def install_hint(self) -> str:
        return f"install {self.spec['install']}"


def require_runner(board: Board) -> None:
    """A board without a flash runner runs only in a simulator: said in one line, for every app kind."""
    if board.flash is None:
        where = "an Arm FVP" if board.fvp and not board.qemu else "QEMU or an Arm FVP"
        raise FlashError(
            f"board {board.id} has no flash runner: in cmx-gen it runs under {where}",
            "use `cmx-gen run APP` (MPS2/MPS3 FPGA boards load images from their USB drive: "
            "copy build/*.elf's binary and list it in images.txt)",
        )


def plan(config: FlashConfig) -> Flasher:
    """The flasher for an ELF image on this board, or a one-line refusal saying what to do instead
    (an app kind with its own flash tool plans its own: AppKind.flasher)."""
    board = config.board
    require_runner(board)
    assert board.flash is not None
    if board.flash.baremetal_boot:
        raise FlashError(
            f"the bare-metal image does not boot on {board.id}: {board.flash.baremetal_boot}",
            "create the Zephyr app for it (--rtos zephyr) and flash that",
        )
    if board.flash.pyocd_target:
        return PyOcdFlasher(config)
    if config.base_address is not None:
        raise FlashError(
            f"--model-only writes a slot with pyOCD, which has no target for {board.id}",
            "flash the slot image (APP/build/model_slot_<slot>.bin) at its address with your board's tool",
        )
    if board.flash.runner in vendor_runners():
        return VendorFlasher(config)
    raise FlashError(
        f"pyOCD has no target for {board.id} and cmx-gen has no command for its runner {board.flash.runner!r}",
        "create the Zephyr app (--rtos zephyr) and `cmx-gen flash` it (west flash), or add the runner "
        "to cmx_gen/data/flash_runners.yaml",
    )
