"""The model slots of an app made with placement = "slot", on the host side: which image goes to which
slot (`cmx-gen model-image`), and what a simulator loads beside the firmware (`cmx-gen run`).

An app keeps its model's image in model/model_slot.bin (written by create and regen). `model-image`
copies it, with a sequence number, to build/model_slot_<a|b>.bin: the file `flash --model-only`
writes and `run` loads at the slot's address. With none there, `run` loads model/model_slot.bin into
slot a, so a fresh app runs as it is. On a board whose slots have weights areas the program's
segments are model/model_weights.bin, copied beside the image (build/model_weights_<a|b>.bin) and
written or loaded at the slot's weights area.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cmx_gen.app import slot_image
from cmx_gen.app.folder import AppFolder
from cmx_gen.app.slot_files import SLOT_FILE, WEIGHTS_FILE, own_images
from cmx_gen.common.errors import RunError
from cmx_gen.fit.boards import ModelSlot


@dataclass(frozen=True)
class SlotImage:
    """One image in one slot."""

    slot: ModelSlot
    path: Path
    header: slot_image.SlotHeader
    weights: Path | None = None  # the program's segments, for the slot's weights area

    def line(self) -> str:
        h = self.header
        line = (
            f"slot {self.slot.name}     0x{self.slot.base:08x}: {self.path} ({h.total_bytes:,} of {self.slot.size:,} bytes), "
            f"model {h.name}, sequence {h.sequence}, sha256 {h.sha256[:16]}"
        )
        if self.weights is not None and self.slot.weights is not None:
            area = self.slot.weights
            line += (
                f"; weights 0x{area.base:08x}: {self.weights} ({self.weights.stat().st_size:,} of {area.size:,} bytes)"
            )
        return line

    def loads(self) -> list[tuple[Path, int]]:
        """Each file of this image and the address it goes to."""
        found = [(self.path, self.slot.base)]
        if self.weights is not None and self.slot.weights is not None:
            found.append((self.weights, self.slot.weights.base))
        return found


def is_slot_app(app: AppFolder) -> bool:
    return (app.path / "model" / SLOT_FILE).is_file()


def _slots(app: AppFolder) -> dict[str, ModelSlot]:
    board = app.board()
    if not board.model_slots:
        raise RunError(f"board {board.id} declares no model slots", "recreate the app on a board with model_slots")
    return {s.name: s for s in board.model_slots}


def built_path(app: AppFolder, slot: str) -> Path:
    return app.path / "build" / f"model_slot_{slot}.bin"


def built_weights_path(app: AppFolder, slot: str) -> Path:
    return app.path / "build" / f"model_weights_{slot}.bin"


def _weights_of(app: AppFolder, path: Path) -> Path | None:
    """The weights file beside a slot image, if the app keeps its weights apart."""
    return path if (app.path / "model" / WEIGHTS_FILE).is_file() else None


def _built(app: AppFolder, slots: dict[str, ModelSlot]) -> list[SlotImage]:
    """The images model-image wrote into build/, one per slot that has one."""
    paths = {name: built_path(app, name) for name in slots}
    return [
        SlotImage(
            slots[name],
            path,
            slot_image.read_header(path.read_bytes()),
            _weights_of(app, built_weights_path(app, name)),
        )
        for name, path in paths.items()
        if path.is_file()
    ]


def write_image(app: AppFolder, slot: str, sequence: int | None = None) -> SlotImage:
    """build/model_slot_<slot>.bin: the app's model image with `sequence` (default: one above every
    image already in build/, so the firmware takes it as the newest)."""
    if not app.path.is_dir():
        raise RunError(f"no app at {app.path}", "give the folder `cmx-gen create -o` made")
    if not is_slot_app(app):
        raise RunError(
            f"{app.path} keeps its model linked into the firmware",
            'recreate it with --placement slot (cmx.toml: [model] placement = "slot")',
        )
    slots = _slots(app)
    if slot not in slots:
        raise RunError(f"board {app.board().id} has no model slot {slot!r}", f"use one of: {', '.join(slots)}")
    image = (app.path / "model" / SLOT_FILE).read_bytes()
    if sequence is None:
        sequence = max((built.header.sequence for built in _built(app, slots)), default=0) + 1
    image = slot_image.with_sequence(image, sequence)
    if len(image) > slots[slot].size:
        raise RunError(
            f"the model image is {len(image):,} bytes and slot {slot} holds {slots[slot].size:,}",
            "shrink the model, or give the board larger model_slots",
        )
    path = built_path(app, slot)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(image)
    weights = _weights_of(app, built_weights_path(app, slot))
    if weights is not None:
        weights.write_bytes((app.path / "model" / WEIGHTS_FILE).read_bytes())
    return SlotImage(slots[slot], path, slot_image.read_header(image), weights)


def simulator_loads(app: AppFolder) -> list[tuple[Path, int]]:
    """Every file a simulator loads beside the firmware (images_to_load), with its address: what
    `run`, `run --cycles` and `run --profile` give QEMU or the FVP."""
    return [(path.resolve(), at) for image in images_to_load(app) for path, at in image.loads()]


def built_image(app: AppFolder, slot: str) -> SlotImage:
    """The image `model-image` wrote for `slot`, with every file of it there: what `flash --model-only`
    writes (a slot whose weights are missing would fail its hash on the board)."""
    again = f"run `cmx-gen model-image {app.path} --slot {slot}`"
    image = next((built for built in _built(app, _slots(app)) if built.slot.name == slot), None)
    if image is None:
        raise RunError(f"no image for slot {slot}", f"{again} first")
    for needed, _ in image.loads():
        if not needed.is_file():
            raise RunError(f"{needed} is missing: slot {slot}'s image keeps its weights there", again)
    return image


def images_to_load(app: AppFolder) -> list[SlotImage]:
    """What a simulator loads beside the firmware: the images in build/, else the app's own in slot a."""
    if not is_slot_app(app):
        return []
    slots = _slots(app)
    found = _built(app, slots)
    if found:
        return found
    own = [app.path / path for path, _ in own_images(list(slots.values()))]
    image, weights = own[0], own[1] if len(own) > 1 else None
    return [SlotImage(next(iter(slots.values())), image, slot_image.read_header(image.read_bytes()), weights)]
