"""The slot check the firmware runs before it parses a model slot (cmx/api/cmx_slot.c), on the host:
built with AddressSanitizer and UndefinedBehaviorSanitizer, reading what cmx_gen/app/slot_image.py
writes. One layout (cmx_slot.h's), one SHA-256, and 10,000 mutated slots, each refused, or (with the
hash computed again, as a crafted image would be) accepted only with every range inside the slot."""

from __future__ import annotations

import dataclasses
import hashlib
import random
import shutil
import subprocess

import pytest
from conftest import ROOT

from cmx_gen.app import slot_image

API = ROOT / "templates" / "common" / "api"


@pytest.fixture(scope="module")
def slot_host(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("the slot check was not compiled for the host: needs a host C compiler")
    out = tmp_path_factory.mktemp("slot_host") / "slot_host"
    sanitize = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]
    sources = [str(ROOT / "tests" / "app" / "slot_host.c"), str(API / "cmx_slot.c")]
    subprocess.run(
        [
            cc,
            "-O1",
            "-g",
            "-std=c11",
            "-Wall",
            "-Werror",
            *sanitize,
            f"-I{API}",
            f"-I{ROOT / 'tests'}",
            *sources,
            "-o",
            str(out),
        ],
        check=True,
    )
    return out


def _model(sequence: int = 7) -> slot_image.SlotModel:
    rng = random.Random(54)
    tensor = slot_image.SlotTensor
    return slot_image.SlotModel(
        name="digits",
        core="cortex-m55",
        isa="MVE",
        pte=bytes(rng.randrange(256) for _ in range(3001)),
        backend_kinds=("conv", "linear", "max_pool"),
        method_pool_bytes=656,
        temp_pool_bytes=224,
        planned_sizes=(1536, 40),
        inputs=(tensor(bytes(range(49)), 49, 1, 0.0, 0, 0.05, -3, 20.0), tensor(b"\1\2\3", 3, 1)),
        outputs=(tensor(bytes(40), 10, 6, 0.0125, 4),),
        tolerance=0.0,
        has_reference=True,
        sequence=sequence,
    )


def _run(binary, *args) -> str:
    done = subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True)
    assert done.returncode == 0 and "Sanitizer" not in done.stderr, done.stderr[-2000:]
    return done.stdout.strip()


def test_the_c_sha256_is_fips_180_4(slot_host, tmp_path):
    rng = random.Random(1)
    for n in (0, 1, 55, 56, 63, 64, 65, 119, 120, 127, 128, 1000, 4099):
        data = bytes(rng.randrange(256) for _ in range(n))
        (tmp_path / "d").write_bytes(data)
        assert _run(slot_host, "sha", tmp_path / "d") == hashlib.sha256(data).hexdigest(), n


def test_the_firmware_reads_what_cmx_gen_writes(slot_host, tmp_path):
    model = _model()
    image = slot_image.build(model)
    (tmp_path / "slot.bin").write_bytes(image)
    fields = dict(item.split("=", 1) for item in _run(slot_host, "verify", tmp_path / "slot.bin").split())
    assert fields["status"] == "0", fields
    pte_offset = int(fields["pte"].split("+")[0])
    assert image[pte_offset : pte_offset + len(model.pte)] == model.pte and pte_offset % 16 == 0
    assert fields["sequence"] == "7" and int(fields["total"]) == len(image)
    assert int(fields["kinds"], 16) == slot_image.kinds_mask(model.backend_kinds)
    assert (fields["planned"], fields["method"], fields["temp"], fields["io"]) == ("2", "656", "224", "2/1")
    for key, tensor in (("in0", model.inputs[0]), ("in1", model.inputs[1]), ("out0", model.outputs[0])):
        offset, nbytes = map(int, fields[key].split("+"))
        assert image[offset : offset + nbytes] == tensor.data and offset % 4 == 0
    header = slot_image.read_header(image)
    assert (header.sequence, header.total_bytes, header.name) == (7, len(image), "digits")

    again = slot_image.with_sequence(image, 9)
    (tmp_path / "slot.bin").write_bytes(again)
    assert "sequence=9" in _run(slot_host, "verify", tmp_path / "slot.bin")


def test_ten_thousand_mutated_slots_are_refused_or_stay_inside_the_slot(slot_host, tmp_path):
    (tmp_path / "slot.bin").write_bytes(slot_image.build(_model()))
    line = _run(slot_host, "fuzz", tmp_path / "slot.bin", 54, 10000)
    counts = {k: int(v) for k, v in (item.split("=") for item in line.split())}
    print(f"\n{line}")
    assert counts["accepted_changed"] == 0 and counts["broken"] == 0, line
    assert counts["refused"] + counts["unchanged"] + counts["rehashed_accepted"] == counts["mutations"] == 10000
    assert counts["refused"] > 5000, line  # most mutations reach the check, not a no-op


def test_weights_outside_the_slot_are_checked_with_it(slot_host, tmp_path):
    """A slot whose program's segments are in its weights area: read where they are, hashed with the
    slot; an area that is missing, too small or holds other bytes refuses the slot."""
    rng = random.Random(7)
    weights = bytes(rng.randrange(256) for _ in range(70_001))
    model = dataclasses.replace(_model(), weights=weights)
    (tmp_path / "slot.bin").write_bytes(slot_image.build(model))
    (tmp_path / "w.bin").write_bytes(weights)
    fields = dict(
        item.split("=", 1) for item in _run(slot_host, "verify", tmp_path / "slot.bin", tmp_path / "w.bin").split()
    )
    assert (fields["status"], fields["weights"]) == ("0", str(len(weights))), fields
    # the firmware has no weights area for it: made for another firmware
    assert _run(slot_host, "verify", tmp_path / "slot.bin").startswith("status=21")
    # the area holds other weights (one flipped bit), or fewer bytes than the header says
    (tmp_path / "w.bin").write_bytes(weights[:100] + bytes([weights[100] ^ 4]) + weights[101:])
    assert _run(slot_host, "verify", tmp_path / "slot.bin", tmp_path / "w.bin").startswith("status=20")
    (tmp_path / "w.bin").write_bytes(weights[:-1])
    short = _run(slot_host, "verify", tmp_path / "slot.bin", tmp_path / "w.bin")
    assert short.startswith("status=20"), short  # the area is erased (0xFF) after what was written


def test_ten_thousand_mutated_slots_with_weights_apart(slot_host, tmp_path):
    weights = bytes(random.Random(8).randrange(256) for _ in range(20_000))
    (tmp_path / "slot.bin").write_bytes(slot_image.build(dataclasses.replace(_model(), weights=weights)))
    (tmp_path / "w.bin").write_bytes(weights)
    line = _run(slot_host, "fuzz", tmp_path / "slot.bin", 541, 10000, tmp_path / "w.bin")
    counts = {k: int(v) for k, v in (item.split("=") for item in line.split())}
    print(f"\n{line}")
    assert counts["accepted_changed"] == 0 and counts["broken"] == 0, line
    assert counts["refused"] + counts["unchanged"] + counts["rehashed_accepted"] == counts["mutations"] == 10000
    assert counts["refused"] > 5000, line
