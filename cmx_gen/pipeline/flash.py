"""`cmx-gen flash APP`: put a built app on its board (pyOCD, the vendor's tool, or `west flash`); with a
serial port, the board's console is opened first and the result line the image prints after the reset
is read: the same PASS/FAIL and figures as `cmx-gen run` gives under QEMU."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from cmx_gen.app.folder import AppFolder
from cmx_gen.app.kinds import kind_of
from cmx_gen.common.errors import FlashError
from cmx_gen.pipeline.run_outcome import Outcome

if TYPE_CHECKING:
    from cmx_gen.fit.boards import Board


@dataclass(frozen=True)
class FlashOptions:
    probe: str | None = None  # the debug probe's serial number, when several are connected
    elf: Path | None = None  # bare metal: another ELF than APP/build/*.elf
    user_app: bool = False  # the user's application instead of the check
    dry_run: bool = False
    serial: str | None = None  # then read the result line from this console
    baud: int = 115200
    timeout: float = 60.0
    model_only: str | None = None  # write only this model slot's image (placement = "slot")


def flash_app(app: AppFolder, options: FlashOptions) -> Outcome:
    """Flash the app's check (or application) image; with `serial`, its verdict (0 PASS, 1 FAIL)."""
    from cmx_gen.device import flash

    kind, board = kind_of(app), app.board()
    kind.require_image("cmx-gen flash")
    if options.model_only:
        return _flash_slot(app, board, options)
    if options.user_app and options.serial:
        raise FlashError(
            "--serial reads the check's result line; your application prints a line per call",
            "flash with --app, then watch its console with any terminal (115200 8N1)",
        )
    if options.elf and kind.image_is_file:
        built: Path | None = options.elf
    else:
        built = kind.app_image(app) if options.user_app else kind.image(app)
    default = app.path.resolve() / "build" / ("<app>_app.elf" if options.user_app else "<app>.elf")
    image = built.resolve() if built else default
    flasher = kind.flasher(flash.FlashConfig(board=board, app=app.path, image=image, probe=options.probe))
    # A bare-metal image prints through semihosting unless the board has a UART it drives itself.
    semihosting_only = kind.console(board) == "semihosting"
    if options.serial and semihosting_only:
        raise FlashError(
            f"the bare-metal image prints through semihosting on {board.id}, not on a serial port",
            "create the Zephyr app (--rtos zephyr), which prints on the board's console UART",
        )
    if options.dry_run:
        return Outcome(tuple(shlex.join(command) for command in flasher.commands()), 0)
    if kind.image_is_file and not image.is_file():
        raise FlashError(f"no firmware to flash: {image} does not exist", f"run `cmx-gen build {app.path}` first")
    if not options.serial:
        flasher.flash()
        lines = [f"flashed    {image} with {flasher.name}"]
        if semihosting_only:
            lines.append(
                "note       its console is semihosting: attach a debugger with semihosting on "
                "(e.g. pyocd gdbserver --semihosting) or it stops at its first print"
            )
        return Outcome(tuple(lines), 0)
    from cmx_gen.device.runners.serial import SerialConsole

    console = SerialConsole(options.serial, options.baud, options.timeout)
    with console.open():  # open before the reset, so the line is not missed
        flasher.flash()
        result = console.read_result()
    lines = [f"flashed    {image} with {flasher.name}; reading {options.serial}", *app.verdict(result.line)]
    return Outcome(tuple(lines), 0 if result.passed else 1)


def _flash_slot(app: AppFolder, board: Board, options: FlashOptions) -> Outcome:
    """Write one model slot's image (cmx-gen model-image) at its address; the firmware stays as it is."""
    from cmx_gen.app.model_slots import built_image, is_slot_app
    from cmx_gen.device import flash

    slot = next((s for s in board.model_slots if s.name == options.model_only), None)
    if not is_slot_app(app) or slot is None:
        raise FlashError(
            f"{app.path} has no model slot {options.model_only!r}",
            "--model-only is for apps made with --placement slot; slots: "
            + (", ".join(s.name for s in board.model_slots) or "none on this board"),
        )
    image = built_image(app, slot.name)
    # The weights area first, the slot last: until the slot is whole its hash fails, and the firmware
    # runs the other slot meanwhile.
    writes = [
        (path, at, "slot" if at == slot.base else "the weights area of slot") for path, at in reversed(image.loads())
    ]
    flashers = [
        (
            flash.plan(flash.FlashConfig(board=board, app=app.path, image=path, probe=options.probe, base_address=at)),
            path,
            at,
            what,
        )
        for path, at, what in writes
    ]
    if options.dry_run:
        return Outcome(tuple(shlex.join(command) for flasher, *_ in flashers for command in flasher.commands()), 0)
    lines = []
    for flasher, path, at, what in flashers:
        flasher.flash()
        lines.append(f"flashed    {path} into {what} {slot.name} at 0x{at:08x} with {flasher.name}")
    return Outcome(tuple(lines), 0)
