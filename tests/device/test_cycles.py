"""The cycle estimate (`cmx-gen run --cycles`, device/cycles/), without the SDK: the timing rules on
the Cortex-M4 TRM's own examples, the tables that borrow, and cmx-gen's QEMU plugin on a hand-written
loop whose every block and branch is known, built with the Arm toolchain and run on QEMU mps2-an386."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from cmx_gen.common.errors import RunError
from cmx_gen.device.cycles import estimate, listing, plugin, timing
from cmx_gen.device.cycles.listing import Instruction
from cmx_gen.device.runners import QemuRunner
from cmx_gen.fit.board_memory import Accelerator
from cmx_gen.fit.boards import load_board

M4 = timing.load("cortex-m4")


def _block(*lines: str) -> list[Instruction]:
    found = []
    for at, line in enumerate(lines):
        mnemonic, _, operands = line.partition(" ")
        found.append(Instruction(2 * at, mnemonic, operands.strip()))
    return found


@pytest.mark.parametrize(
    "lines, cycles",
    [
        # the TRM's 3.3.2 examples ("normally three / four cycles total")
        (("ldr r0, [r1]", "ldr r1, [r2]"), 3),
        (("ldr r0, [r1, r2]", "str r0, [r3, #20]"), 3),
        (("ldr r0, [r1, r2]", "str r1, [r3, r2]"), 3),
        (("ldr r0, [r1, r5]", "ldr r1, [r2]", "ldr r2, [r3, #4]"), 4),
        # a load whose address the load before it wrote is not pipelined
        (("ldr r0, [r1]", "ldr r2, [r0]"), 4),
        # a load after the data operation that makes its address stalls one cycle
        (("adds r1, r1, #4", "ldr r0, [r1]"), 4),
        (("ldrd r2, r3, [r0]", "ldr r4, [r1]"), 5),  # LDRD pipelines with nothing
        (("push {r4, r5, r6, r7, lr}", "pop {r4-r7, pc}"), 12),  # 1 + N each
        (("smlad r4, r2, r3, r4", "mla r0, r1, r2, r0", "smull r0, r1, r2, r3"), 3),  # single-cycle on the M4
        (("bne.n 0x10",), 1),  # not taken; a taken branch adds P per the plugin's count
    ],
)
def test_the_m4_rules_price_the_trms_examples(lines, cycles):
    (low, typical, high), unpriced = timing.block_cycles(_block(*lines), M4)
    assert typical == cycles and not unpriced


def test_the_m3_takes_the_m4s_table_with_its_slower_multiplies():
    m3 = timing.load("cortex-m3")
    assert m3.borrowed == "cortex-m4" and "vldr" not in m3.classes
    assert timing.block_cycles(_block("mla r0, r1, r2, r0", "smlal r0, r1, r2, r3"), m3)[0] == (6, 7, 9)
    assert timing.load("cortex-m33").classes == M4.classes


def test_a_divide_and_an_unknown_mnemonic_give_a_range_and_a_note():
    (low, typical, high), unpriced = timing.block_cycles(_block("sdiv r0, r1, r2", "vfoo r1"), M4)
    assert (low, typical, high) == (3, 8, 13) and unpriced == {"vfoo": 1}


def test_a_core_without_a_table_is_one_line():
    with pytest.raises(RunError, match="no cycle timings for cortex-m85 yet"):
        timing.load("cortex-m85")


M55 = timing.load("cortex-m55")


def _helium(*lines: str) -> list[Instruction]:
    """32-bit encodings but for the 16-bit forms the M55 pairs (`.n`, MOVS, ADDS/SUBS of an immediate)."""
    found = []
    for at, line in enumerate(lines):
        mnemonic, _, operands = line.partition(" ")
        narrow = mnemonic.endswith(".n") or mnemonic in ("movs", "adds", "subs")
        found.append(Instruction(4 * at, mnemonic, operands.strip(), 2 if narrow else 4))
    return found


@pytest.mark.parametrize(
    "lines, cycles",
    [
        # LLVM's ARMScheduleM55.td examples, run as a loop: the beats of different pipes overlap ...
        (("vldrw.u32 q0, [r0]", "vadd.i32 q1, q0, q0", "vmul.i32 q2, q1, q1", "vstrw.32 q2, [r1]"), 5),
        # ... those of one pipe do not
        (("vldrw.u32 q0, [r0]", "vldrb.u32 q3, [r2]", "vadd.i32 q1, q0, q3", "vstrw.32 q1, [r1]"), 6),
        # a dot product bound by its two loads; the loop end folded by the loop cache
        (("vldrb.s16 q0, [r0], #8", "vldrb.s16 q1, [r1], #8", "vmladava.s16 r2, q0, q1", "le lr, 0x0"), 4),
        # predicated in a VPT block: the instruction it predicates
        (("vpst", "vldrbt.s16 q0, [r0], #8", "vldrb.s16 q1, [r1], #8", "vmladava.s16 r2, q0, q1"), 5),
        # a store reads its data a cycle late (VMUL's latency 2 costs one) ...
        (("vldrw.u32 q0, [r0]", "vmul.i32 q1, q0, q0", "vstrw.32 q1, [r1]"), 4),
        # ... but not from a narrowing move: its whole latency of 3
        (("vldrw.u32 q0, [r0]", "vqmovnb.s32 q1, q0", "vstrh.32 q1, [r1]"), 6),
        # scalar: loads issue each cycle with a latency of 2 (the SMLAD waits one); a 16-bit SUBS of an
        # immediate pairs with the branch after it
        (("ldr r2, [r0]", "ldr r3, [r1]", "smlad r4, r2, r3, r4", "subs r5, #1", "bne.n 0x0"), 5),
        (("ldr r2, [r0]", "ldr r3, [r1]", "smlad r4, r2, r3, r4", "cmp r5, r6", "bne.w 0x0"), 6),
    ],
)
def test_the_m55_overlaps_helium_beats_as_llvms_model_says(lines, cycles):
    (low, typical, high), unpriced = timing.block_cycles(_helium(*lines), M55)
    assert typical == cycles and not unpriced


def test_the_m55_loop_end_costs_no_refill_and_other_branches_do():
    assert timing.block_refill(_helium("vmladava.s16 r2, q0, q1", "le lr, 0x0"), M55) == (0, 0, 0)
    assert timing.block_refill(_helium("subs r5, #1", "bne.n 0x0"), M55) == (1, 2, 3)


@pytest.mark.parametrize(
    ("mnemonic", "operands", "branches"),
    [
        ("b.n", "1234 <loop>", True),
        ("bne.w", "1234 <loop>", True),
        ("ble.n", "1234 <loop>", True),  # b + le, not bl + e
        ("bls.n", "1234 <loop>", True),
        ("bl", "1234 <f>", True),
        ("bx", "lr", True),
        ("blx", "r3", True),
        ("cbz", "r0, 1234 <out>", True),
        ("tbb", "[pc, r3]", True),
        ("le", "lr, 1234 <loop>", True),
        ("pop", "{r4, r5, pc}", True),
        ("ldr.w", "pc, [sp], #4", True),
        ("mov", "pc, lr", True),
        ("pop", "{r4, r5, lr}", False),
        ("bic.w", "r0, r0, #1", False),
        ("bfi", "r0, r1, #8, #8", False),
        ("bkpt", "0x00ab", False),
        ("ldr.w", "r3, [pc, #12]", False),  # a literal: reads pc, does not write it
        ("str.w", "r1, [sp, #4]", False),
        ("smlad", "r0, r1, r2, r0", False),
    ],
)
def test_an_instruction_branches_where_it_may_send_the_core_elsewhere(mnemonic, operands, branches):
    """What ends a block for the core: a block QEMU cut after an instruction that does not branch (a
    page edge) is priced with what follows it."""
    assert Instruction(0, mnemonic, operands, 4).may_branch is branches


def test_objdump_reads_helium_only_when_told_the_architecture(tmp_path):
    gcc = shutil.which("arm-none-eabi-gcc")
    if gcc is None:
        pytest.skip("not run: needs arm-none-eabi-gcc (scripts/setup.sh)")
    source = tmp_path / "helium.S"
    source.write_text(".syntax unified\n.thumb\n.text\nvldrb.s16 q0, [r0], #8\nmovs r0, #1\n")
    obj = tmp_path / "helium.o"
    subprocess.run([gcc, "-mcpu=cortex-m55", "-mthumb", "-c", "-o", str(obj), str(source)], check=True)
    told = listing.read(obj, M55.disassemble_as)[0]
    assert [(i.mnemonic, i.size) for i in told] == [("vldrb.s16", 4), ("movs", 2)]
    assert listing.read(obj)[0][0].mnemonic != "vldrb.s16"


# a bare-metal image measured between the runner's two edges: the code between them, then its .bss
_START = """
    .syntax unified
    .cpu cortex-m4
    .thumb
    .text
    .word 0x20010000
    .word reset
    .thumb_func
reset:
    bl cmx_measure_begin
"""
_END = """
    bl cmx_measure_end
    movs r0, #0x18
    ldr r1, =0x20026
    bkpt 0xab
    b .
    .thumb_func
    .global cmx_measure_begin
cmx_measure_begin:
    bx lr
    .thumb_func
    .global cmx_measure_end
cmx_measure_end:
    nop
    bx lr
    .pool
    .bss
"""

_LOOP_BODY = """
    movs r0, #100
    ldr r1, =buffer
loop:
    ldr r2, [r1]
    ldr r3, [r1, #4]
    smlad r4, r2, r3, r4
    ldrd r2, r3, [r1, #8]
    str r4, [r1, #16]
    subs r0, #1
    bne loop
"""
_BUFFER = """
buffer:
    .space 32
"""
LOOP = _START + _LOOP_BODY + _END + _BUFFER


def _assemble(folder: Path, name: str, source: str) -> Path:
    """`source` linked as a bare-metal M4 image: code from address 0, .bss in sram0."""
    gcc = shutil.which("arm-none-eabi-gcc")
    if gcc is None or shutil.which("qemu-system-arm") is None:
        pytest.skip("the plugin test was not run: needs arm-none-eabi-gcc and qemu-system-arm (scripts/setup.sh)")
    (folder / f"{name}.S").write_text(source)
    elf = folder / f"{name}.elf"
    flags = ["-mcpu=cortex-m4", "-mthumb", "-nostdlib", "-Wl,-Ttext=0x0", "-Wl,-Tbss=0x20000000"]
    subprocess.run([gcc, *flags, "-o", str(elf), str(folder / f"{name}.S")], check=True, capture_output=True)
    return elf


@pytest.fixture(scope="module")
def loop_elf(tmp_path_factory) -> Path:
    return _assemble(tmp_path_factory.mktemp("cycles"), "loop", LOOP)


def _symbol(elf: Path, name: str) -> int:
    out = subprocess.run(["arm-none-eabi-nm", str(elf)], capture_output=True, text=True).stdout
    return next(int(line.split()[0], 16) for line in out.splitlines() if line.endswith(f" {name}"))


def _measure(elf: Path, out: Path, marks: tuple[int, int] | None = None, caches: dict | None = None) -> plugin.Counts:
    """`elf` run on QEMU mps2-an386 under the plugin between its measure edges; what it counted."""
    board = load_board("mps2-an386")
    spec = plugin.argument(
        plugin.build(),
        _symbol(elf, "cmx_measure_begin"),
        _symbol(elf, "cmx_measure_end"),
        out,
        [(r.base, r.end) for r in board.memory],
        marks,
        caches,
    )
    assert subprocess.run(QemuRunner(board, plugin=spec).command(elf), capture_output=True, timeout=60).returncode == 0
    return plugin.read(out, [r.name for r in board.memory])


def test_the_plugin_counts_each_block_and_taken_branch_of_a_known_loop(loop_elf, tmp_path):
    out = tmp_path / "cycles.txt"
    counts = _measure(loop_elf, out)
    code = listing.Listing(loop_elf)
    loop = _symbol(loop_elf, "loop")
    body = next(b for b in counts.blocks if b.vaddr == loop)
    assert (body.instructions, body.runs, body.taken) == (7, 99, 98)  # the 100th pass enters from above
    entry = next(b for b in counts.blocks if b.vaddr == loop - 4)  # movs, ldr =buffer, then the loop's body
    assert (entry.instructions, entry.runs, entry.taken) == (9, 1, 1)
    # per pass: ldr 2, ldr 1 (pipelined), smlad 1, ldrd 3, str #imm 1, subs 1, bne 1; P = 2 when taken
    assert timing.block_cycles(code.block(body.vaddr, body.instructions), M4)[0][1] == 10
    # 3 loads a pass (ldrd reads two words) and 1 store into sram0; the literal pool read from flash0
    assert counts.accesses["sram0"] == (100 * 4, 100) and counts.accesses["flash0"] == (1, 0)
    found = estimate.estimate(counts, code, M4, {"sram0": estimate.Waits(1)})
    # begin's bx lr 1 + P 2; movs 1, ldr literal 2, the first pass 2 + 8 (its first ldr follows the load
    # of its own base) + P 2; 99 passes x 10 + 98 taken x P 2; the bl to the end 1; 500 sram0 accesses
    # x 1 wait state
    assert found.cycles == tuple(1 + p + 13 + p + 990 + 98 * p + 1 + 500 for p in (1, 2, 3)) == (1605, 1705, 1805)
    assert found.instructions == 1 + 9 + 99 * 7 + 1 and found.taken == 100 and counts.opened == 1
    # by function (the symbol each block lies in): the loop's 99 passes and the bl after them (under the
    # same label) first; wait states are not attributed
    assert found.by_function[0] == ("loop", 99 * 10 + 98 * 2 + 1, 99 * 7 + 1)
    assert found.where().startswith("where      loop ")
    assert ("sram0", 400, 100) in found.accesses and "sram0 400/100" in found.describe(25_000_000, "")
    again = plugin.read(out, [r.name for r in load_board("mps2-an386").memory])
    assert estimate.estimate(again, code, M4, {"sram0": estimate.Waits(1)}) == found


# the loop again, after a branch over padding that puts it at `org`: QEMU cuts a block at each 1 KiB
# page edge (an instruction that crosses one is a block of its own)
PLACED = _START + "\n    b start\n    .org {org}\nstart:" + _LOOP_BODY + _END + _BUFFER


def test_the_estimate_does_not_depend_on_where_a_loop_lies_against_a_page_edge(tmp_path):
    """At 0x3ee the loop lies inside QEMU's first 1 KiB page; at 0x3f6 its LDRD crosses into the
    second, and QEMU runs the loop as three blocks. The core sees one loop either way: the same taken
    branches (the BNE's 98, not one more for each cut) and the same cycles."""
    found = {}
    for org in (0x3EA, 0x3F2):
        elf = _assemble(tmp_path, f"placed{org:x}", PLACED.format(org=org))
        counts = _measure(elf, tmp_path / f"cycles{org:x}.txt")
        found[org] = (counts, estimate.estimate(counts, listing.Listing(elf), M4, {}))
    inside, cut = found[0x3EA], found[0x3F2]
    body = lambda org, counts: sorted(b.vaddr - org - 4 for b in counts.blocks if org + 4 <= b.vaddr < org + 20)  # noqa: E731
    assert body(0x3EA, inside[0]) == [0] and body(0x3F2, cut[0]) == [0, 8, 12]  # the LDRD a block of its own
    assert (
        inside[1].taken == cut[1].taken == 1 + 1 + 98 + 1
    )  # begin's BX, the B over the padding, the BNE, the BL to the end
    assert inside[1].cycles == cut[1].cycles
    assert inside[1].instructions == cut[1].instructions


MARKED = (
    _START
    + """
    movs r0, #10
    ldr r5, =cmx_profile_marks
first:
    subs r0, #1
    bne first
    ldrb r6, [r5, #1]
    movs r0, #20
second:
    subs r0, #1
    bne second
    ldrb r6, [r5, #0]
    movs r0, #5
third:
    subs r0, #1
    bne third
"""
    + _END
    + """
    .global cmx_profile_marks
cmx_profile_marks:
    .space 4
"""
)


def test_the_plugins_marks_cut_the_region_where_the_profile_image_marks_it(tmp_path):
    elf = _assemble(tmp_path, "marked", MARKED)
    marks = _symbol(elf, "cmx_profile_marks")
    counts = _measure(elf, tmp_path / "cycles.txt", (marks, marks + 4))
    # a mark's block runs before its load, so it is the closing segment's: key 1 is begin's bx (1), the
    # block after the bl and the first loop's first pass (4), its 9 more (18) and the block holding the
    # mark with the second loop's first pass (4); key 0 the second loop's 19 more passes (38) and the
    # block with its mark (4); after the last mark (-1) the third loop's 4 more passes (8) and the bl (1)
    assert {key: part.instructions for key, part in counts.segments.items()} == {1: 27, 0: 42, -1: 9}
    assert sum(part.instructions for part in counts.segments.values()) == counts.instructions
    assert counts.segments[1].accesses["sram0"] == (1, 0) and counts.segments[0].accesses["sram0"] == (1, 0)
    code = listing.Listing(elf)
    parts = estimate.by_segment(counts, code, M4, {})
    whole = estimate.estimate(counts, code, M4, {})
    assert sum(part.cycles[1] for part in parts.values()) == whole.cycles[1]
    assert all(part.cycles[1] > part.instructions for part in parts.values())  # each holds taken branches


# two passes over a 256-byte table in flash0 (a word a load), the loop's code in flash0 too
STREAMED = (
    _START
    + """
    movs r0, #2
again:
    ldr r1, =table
    movs r2, #64
read:
    ldr r3, [r1], #4
    subs r2, #1
    bne read
    subs r0, #1
    bne again
"""
    + _END
    + """
    .text
    .balign 256
table:
    .space 256
"""
)


@pytest.mark.parametrize("data_lines, data_missed", [(2, 34), (32, 17)])
def test_a_flash_accelerator_waits_only_on_the_lines_it_misses(tmp_path, data_lines, data_missed):
    """The table is 16 lines of 16 bytes, and each pass loads its address from a literal: a data cache
    of 2 lines misses all 17 lines in both passes, one of 32 only in the first. The loop's code spans a
    few lines: each fetched once (after a branch, or right after the line before), then held."""
    elf = _assemble(tmp_path, "streamed", STREAMED)
    accelerator = Accelerator(line_bytes=16, lines=8, data_lines=data_lines, prefetch=True)
    counts = _measure(elf, tmp_path / "cycles.txt", caches={0: accelerator})
    missed = counts.misses["flash0"]
    code_lines = {line for b in counts.blocks for line in range(b.vaddr // 16, (b.vaddr + b.nbytes - 1) // 16 + 1)}
    assert missed.data == data_missed
    assert missed.sequential + missed.branched == len(code_lines) and missed.branched >= 1
    assert "sram0" not in counts.misses
    code = listing.Listing(elf)
    plain = estimate.estimate(counts, code, M4, {})
    waited = estimate.estimate(counts, code, M4, {"flash0": estimate.Waits(5, accelerator)})
    certain = 5 * (missed.data + missed.branched)
    assert waited.wait_cycles == (certain, certain + 5 * missed.sequential // 2, certain + 5 * missed.sequential)
    assert tuple(w - p for w, p in zip(waited.cycles, plain.cycles, strict=True)) == waited.wait_cycles
    assert f"flash0's accelerator missed {missed.data:,} data lines" in waited.describe(120_000_000, "")
    # without an accelerator each of the 128 loads and the two literals' waits
    assert estimate.estimate(counts, code, M4, {"flash0": estimate.Waits(5)}).wait_cycles == (5 * 130,) * 3


def test_cycles_of_a_zephyr_app_are_refused_in_one_line(tmp_path, capsys):
    """west runs a Zephyr app from its build folder: the estimate needs the one ELF it runs itself."""
    from conftest import SMALL, run_cli

    app = tmp_path / "zephyr app"
    args = (f"{SMALL}:ConvNet", "--input-shape", "1,3,8,8", "--random-calibration", "--board", "mps2-an386")
    assert run_cli("create", *args, "--rtos", "zephyr", "-o", app) == 0
    capsys.readouterr()
    assert run_cli("run", app, "--cycles") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "a zephyr app runs from its build folder" in err[0]
