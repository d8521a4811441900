"""The cycle estimate against silicon (issue 51): pqm4's implementations built for its `mps2-an386`
platform, run on QEMU with cmx-gen's plugin, priced with the Cortex-M4 table, and set beside the
cycles pqm4 publishes in its own benchmarks.csv (measured on real Cortex-M4 boards with no flash wait
states: its README, "All cycle counts were obtained at 24MHz to avoid wait cycles").

Each operation (key generation, encapsulation, ...) is measured from its function's entry to the
return into pqm4's speed harness (mupq/crypto_*/speed.c). Operations whose time depends on random
choices (signing with rejection sampling) are left out: one run is not their mean.

Sources come the way a user brings them: PQM4_ROOT, a pqm4 clone with its submodules (mupq and
mupq's pqclean). Without it this says so and exits 0: a benchmark, not a test.
Run: PQM4_ROOT=... .venv/bin/python bench/cycles_pqm4.py [--markdown]
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cmx_gen.device.cycles import estimate, listing, plugin, timing  # noqa: E402
from cmx_gen.device.runners import QemuRunner  # noqa: E402
from cmx_gen.fit.boards import load_board  # noqa: E402

# (the implementation's folder in pqm4, its code: "asm" when the hot loops are hand-written M4
# assembly, "C" when compiled, the operations measured)
IMPLEMENTATIONS = [
    ("crypto_kem/ml-kem-512/m4fspeed", "asm", ("keypair", "enc", "dec")),
    ("crypto_kem/ml-kem-768/m4fspeed", "asm", ("keypair", "enc", "dec")),
    ("crypto_kem/ml-kem-1024/m4fspeed", "asm", ("keypair", "enc", "dec")),
    ("crypto_kem/ml-kem-512/m4fstack", "asm", ("keypair", "enc", "dec")),
    ("crypto_sign/ml-dsa-44/m4f", "asm", ("keypair", "open")),
    ("crypto_sign/aimer128f/m4speed", "asm", ("keypair", "sign", "open")),
    ("mupq/crypto_sign/aimer128f/ref", "C", ("keypair", "sign", "open")),
    ("mupq/crypto_sign/cross-sha3-r-sdpg-1-fast/ref", "C", ("keypair", "sign", "open")),
    ("mupq/crypto_kem/bikel1/opt", "C", ("enc",)),
    ("crypto_kem/bikel1/m4f", "asm", ("enc",)),
]
FUNCTIONS = {
    "crypto_kem": {"keypair": "crypto_kem_keypair", "enc": "crypto_kem_enc", "dec": "crypto_kem_dec"},
    "crypto_sign": {"keypair": "crypto_sign_keypair", "sign": "crypto_sign", "open": "crypto_sign_open"},
}
COLUMN = {  # benchmarks.csv's mean column of each operation
    "keypair": "Key Generation [cycles] (mean)",
    "enc": "Encapsulation [cycles] (mean)",
    "dec": "Decapsulation [cycles] (mean)",
    "sign": "Sign [cycles] (mean)",
    "open": "Verify [cycles] (mean)",
}


def published(pqm4: Path) -> dict[tuple[str, str], dict[str, str]]:
    """(scheme, implementation) -> the speed row of pqm4's benchmarks.csv."""
    rows: dict[tuple[str, str], dict[str, str]] = {}
    header: list[str] = []
    with open(pqm4 / "benchmarks.csv", newline="") as f:
        for row in csv.reader(f):
            if row and row[0] == "Scheme":
                header = row
            elif header and len(row) == len(header) and row[2].isdigit() and "executions" in row[0]:
                rows.setdefault((row[0].split(" (")[0], row[1]), dict(zip(header, row)))
    return rows


def call_return(code: listing.Listing, function: str) -> tuple[int, int]:
    """(the entry of `function` (or its `_ctx` form), the address its call in the harness's main
    returns to), from the image's listing."""
    called = re.compile(rf"<((?:\w*_)?{function}(?:_ctx)?)>$")
    start = code.starts[code.names.index("main")]
    end = min((at for at in code.starts if at > start), default=1 << 32)
    for ins, after in zip(code.instructions, code.instructions[1:]):
        found = called.search(ins.operands) if start <= ins.address < end and ins.mnemonic == "bl" else None
        if found and found.group(1) in code.names:
            return code.starts[code.names.index(found.group(1))], after.address
    raise SystemExit(f"no call of {function} in main")


def measure(elf: Path, code: listing.Listing, function: str, work: Path) -> tuple[int, tuple[int, int, int]]:
    """(instructions, (least, typical, most) cycles) of one call of `function`."""
    board = load_board("mps2-an386")
    begin, end = call_return(code, function)
    out = work / f"{elf.stem}.{function}.txt"
    regions = [(r.base, r.end) for r in board.memory]
    QemuRunner(board, timeout=600, plugin=plugin.argument(plugin.build(), begin, end, out, regions)).run_app(elf)
    counts = plugin.read(out, [r.name for r in board.memory])
    found = estimate.estimate(counts, code, timing.load("cortex-m4"), {})
    low, typical, high = (c // counts.opened for c in found.cycles)
    return counts.instructions // counts.opened, (low, typical, high)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--markdown", action="store_true", help="print the table for docs/cycles.md")
    args = parser.parse_args()
    root = os.environ.get("PQM4_ROOT")
    if not root or not (Path(root) / "benchmarks.csv").is_file():
        print("PQM4_ROOT is not set to a pqm4 clone (with its mupq submodule): nothing measured")
        return 0
    pqm4 = Path(root)
    figures = published(pqm4)
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for folder, code, operations in IMPLEMENTATIONS:
            *_, kind, scheme, impl = folder.split("/")
            target = f"elf/{folder.replace('/', '_')}_speed.elf"
            print(f"building {target} ...", file=sys.stderr, flush=True)
            subprocess.run(
                ["make", "-C", str(pqm4), "-j2", "PLATFORM=mps2-an386", target], check=True, capture_output=True
            )
            image = listing.Listing(pqm4 / target)  # disassembled once for all its operations
            for op in operations:
                instructions, (low, typical, high) = measure(pqm4 / target, image, FUNCTIONS[kind][op], Path(work))
                silicon = int(figures[(scheme, impl)][COLUMN[op]])
                rows.append((f"{scheme} {impl}", code, op, instructions, typical, low, high, silicon))
                print(f"  {scheme} {impl} {op}: {typical:,} estimated, {silicon:,} published", file=sys.stderr)
    errors = [abs(r[4] - r[7]) / r[7] for r in rows]
    if args.markdown:
        print(
            "| implementation | code | operation | instructions | estimate (P = 2) | range (P = 1-3) | pqm4 (silicon) | error |"
        )
        print("|---|---|---|---:|---:|---:|---:|---:|")
    for (name, code, op, instructions, typical, low, high, silicon), error in zip(rows, errors):
        sign = "+" if typical >= silicon else "-"
        if args.markdown:
            print(
                f"| {name} | {code} | {op} | {instructions:,} | {typical:,} | {low:,}-{high:,} | {silicon:,} | {sign}{error:.1%} |"
            )
        else:
            print(
                f"{name:<34} {code:<4} {op:<8} instr {instructions:>12,} est {typical:>12,} pqm4 {silicon:>12,} {sign}{error:.1%}"
            )
    print(f"mean absolute error {sum(errors) / len(errors):.1%}, largest {max(errors):.1%} over {len(rows)} operations")
    return 0


if __name__ == "__main__":
    sys.exit(main())
