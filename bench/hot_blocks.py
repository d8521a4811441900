"""The hottest translation blocks of an app's last cycle estimate (issue 51): where a kernel spends its
cycles, block by block, priced as `run --cycles` prices them (device/cycles/: the core's timing table, each
block's taken branches at P = 2, no memory waits). What kernel tuning reads before changing a loop: a
function's share (`run --cycles`' `where` line) does not say whether its inner loop or its epilogue costs.

Run `cmx-gen run APP --cycles` (counts in APP/build/cycles.txt) or `cmx-gen run APP --profile` (APP/build-profile,
each profile row a segment), then:
    .venv/bin/python bench/hot_blocks.py APP [--profile] [--segment KEY] [--top N] [--listing]
KEY: a profile row's mark (a backend layer's is the program's instruction count plus its slot: on a
one-delegate program, 1 is its first layer). --listing prints each block's instructions.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cmx_gen.app.folder import AppFolder  # noqa: E402
from cmx_gen.app.kinds import kind_of  # noqa: E402
from cmx_gen.device.cycles import estimate, listing, plugin, timing  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("app", type=Path)
    ap.add_argument("--profile", action="store_true", help="the profile image's counts (build-profile)")
    ap.add_argument("--segment", type=int, help="one profile row's blocks (its mark's key)")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--listing", action="store_true", help="each block's instructions")
    args = ap.parse_args()
    app = AppFolder(args.app)
    build = args.app / ("build-profile" if args.profile else "build")
    image = kind_of(app).image(app, build.name)
    if image is None or not (build / "cycles.txt").is_file():
        print(f"no image or cycles.txt in {build}: run `cmx-gen run {args.app} --cycles` (or --profile) first")
        return 2
    board = app.board()
    counts = plugin.read(build / "cycles.txt", [r.name for r in board.memory])
    if args.segment is not None:
        if args.segment not in counts.segments:
            print(f"no segment {args.segment}; the run has {sorted(counts.segments)}")
            return 2
        counts = counts.segments[args.segment]
    code, table = listing.Listing(image), timing.load(board.core.name)
    rows = []
    for block in counts.blocks:
        instructions = code.block(block.vaddr, block.instructions)
        if instructions is None:
            continue
        cost, _ = estimate.cut_block_cycles(instructions, code, table)
        refill = estimate.block_refill(instructions, table)
        rows.append((cost[1] * block.runs + refill[1] * block.taken, block, cost[1], instructions))
    rows.sort(key=lambda r: -r[0])
    total = max(sum(r[0] for r in rows), 1)
    print(f"{total:,} cycles in {len(rows)} blocks ({image.name}, {board.core.name}, no memory waits)")
    for cycles, block, each, instructions in rows[: args.top]:
        name = code.function(block.vaddr)
        print(
            f"{cycles:>11,} {cycles / total:6.1%}  {name:30s} {block.vaddr:#08x}  "
            f"{block.instructions:3d} instr  x{block.runs:,}  {each} cyc a run"
        )
        for ins in instructions if args.listing else ():
            print(f"{'':22s}{ins.address:#08x}  {ins.mnemonic:8s} {ins.operands}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
