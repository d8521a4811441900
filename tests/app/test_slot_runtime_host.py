"""cmx_init() over 10,000 mutated slots, with the firmware's whole chain built for the build machine
under AddressSanitizer and UndefinedBehaviorSanitizer (tests/app/slot_runtime_host): the slot check,
ExecuTorch's Program::load with its flatbuffer verifier, cmx-gen's plan check, the method's load and
the self-check against the slot's own reference, over CMSIS-NN's C path (a Cortex-M3 app).

Slot a holds the model, slot b a mutation of its newer image: each round the firmware must run a
model; b runs only when it passed every step, its self-check within the model's own tolerance (0
for integer outputs; SlotCnn's float outputs: float rounding, 0.01 of their step), and is otherwise
refused with a status.
Half the mutations have their hashes computed again (a crafted image), so they reach the verifier,
the plan check and the self-check. Needs the firmware SDK (EXECUTORCH_ROOT, CMSIS_NN_PATH), cmake,
ninja and a host C/C++ compiler; skipped, saying why, without them."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT, run_cli

from cmx_gen.app import slot_image
from cmx_gen.device import sdk

HOST = ROOT / "tests" / "app" / "slot_runtime_host"
MODEL = ROOT / "tests" / "toy_models" / "slot_models.py"

# A Cortex-M3 board (CMSIS-NN's C path, which builds for the host) with two slots, each with a
# weights area: the split program and its two-range loader are in the chain.
BOARD = """\
id: host-slots-m3
name: Slot fuzz board (Cortex-M3)
vendor: cmx-gen tests
core: {name: cortex-m3, fpu: null, dsp: false, clock_hz: 25000000}
memory:
  - {name: flash0, base: 0x00000000, size: 0x400000, kind: flash, executable: true, loadable: true}
  - {name: sram0, base: 0x20000000, size: 0x400000, kind: sram, executable: true, loadable: false}
  - {name: psram, base: 0x21000000, size: 0x1000000, kind: ddr, executable: true, loadable: true}
boot_region: flash0
ram_region: sram0
model_slots:
  - {name: a, base: 0x00300000, size: 0x80000, weights: {base: 0x21C00000, size: 0x200000}}
  - {name: b, base: 0x00380000, size: 0x80000, weights: {base: 0x21E00000, size: 0x200000}}
"""

ROUNDS = 10_000
SEED = 2026


@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> tuple[Path, Path]:
    if not os.environ.get("EXECUTORCH_ROOT") or not os.environ.get("CMSIS_NN_PATH"):
        pytest.skip("the firmware chain was not built for the host: EXECUTORCH_ROOT / CMSIS_NN_PATH are not set")
    if not all(shutil.which(t) for t in ("cmake", "ninja", "gcc", "g++")):
        pytest.skip("the firmware chain was not built for the host: needs cmake, ninja, gcc and g++")
    found = sdk.find()
    assert found.ok, found.problems
    work = tmp_path_factory.mktemp("slot_runtime_host")
    board = work / "host-slots-m3.yaml"
    board.write_text(BOARD)
    app = work / "app"
    assert run_cli("create", f"{MODEL}:SlotCnn", "--board", board, "--placement", "slot", "-o", app) == 0
    build = work / "build"
    configure = ["cmake", "-G", "Ninja", "-S", HOST, "-B", build, f"-DCMX_APP={app}", *found.cmake_defines()]
    for cmd in (configure, ["nice", "cmake", "--build", build, "-j", "2"]):
        done = subprocess.run(list(map(str, cmd)), capture_output=True, text=True)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return build / "slot_runtime_host", app


def _images(app: Path, into: Path) -> tuple[Path, Path]:
    """The app's image with sequence 1 (slot a) and 2 (slot b), each with its weights beside it."""
    image = (app / "model" / "model_slot.bin").read_bytes()
    weights = (app / "model" / "model_weights.bin").read_bytes()
    paths = []
    for sequence in (1, 2):
        path = into / f"seq{sequence}.bin"
        path.write_bytes(slot_image.with_sequence(image, sequence))
        path.with_name(path.name + ".weights").write_bytes(weights)
        paths.append(path)
    return paths[0], paths[1]


def _run(binary: Path, *args: object) -> dict[str, int]:
    done = subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True, timeout=3000)
    assert "Sanitizer" not in done.stderr and "runtime error" not in done.stderr, done.stderr[-3000:]
    assert done.returncode == 0, done.stdout[-1000:] + done.stderr[-3000:]
    return {k: int(v) for k, v in (item.split("=") for item in done.stdout.split())}


def test_the_newer_image_whole_runs_from_slot_b_every_round(harness, tmp_path):
    binary, app = harness
    a, b = _images(app, tmp_path)
    assert _run(binary, a, b, 0, 3) == {
        "rounds": 3,
        "failed": 0,
        "ran_b": 3,
        "ran_b_exact": 3,
        "over_tolerance": 0,
        "ran_a": 0,
        "older": 0,
    }


def test_ten_thousand_mutated_slots_run_bit_exact_or_are_refused(harness, tmp_path):
    binary, app = harness
    a, b = _images(app, tmp_path)
    counts = _run(binary, a, b, SEED, ROUNDS)
    print(f"\nseed {SEED}: {counts}")
    assert counts["rounds"] == ROUNDS and counts["failed"] == 0 and counts["over_tolerance"] == 0, counts
    assert counts["ran_a"] + counts["ran_b"] == ROUNDS
    refused = {
        k: v
        for k, v in counts.items()
        if k not in ("rounds", "failed", "over_tolerance", "ran_a", "ran_b", "ran_b_exact", "older")
    }
    # every stage refuses some: the slot check, and behind it ExecuTorch's verifier or the plan check
    # (program_load, method_load) and the self-check (mismatch)
    assert refused.get("slot_corrupt", 0) > ROUNDS // 4, counts
    assert sum(v for k, v in refused.items() if k not in ("slot_corrupt", "slot_empty")) > 100, counts
