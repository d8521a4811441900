"""cmx-gen side by side with TFLite Micro + CMSIS-NN: the four MLPerf Tiny networks on QEMU.

Per model (KWS, VWW, IC, AD) and board (M55 `mps3-an547`, M4 `mps2-an386`), one image per stack:
- TFLM: the MLPerf Tiny reference .tflite through MicroInterpreter, TFLM's library built by its
  own Makefile with OPTIMIZED_KERNEL_DIR=cmsis_nn pointed at CMSIS_NN_PATH;
- cmx-gen: the sample of the same architecture through `cmx-gen create` / `cmx-gen build`, the
  application image (`<name>_app.elf`, what a user builds on).
Both images run on the same QEMU command line (-icount shift=0) with the same platform layer,
linker script and counter (the TFLM image borrows the cmx-gen app's), `calls` inferences each;
the first is a warm-up and is left out. Choices that keep it fair: peers.yaml and README.md.

Prints per row: cycles per inference (cmx-gen's estimate, docs/cycles.md: the last call run again
under its QEMU plugin; for cmx-gen the check image's one inference), instructions per inference; flash: code (.text less .rodata), .rodata, the model;
RAM: arena, static (.data + .bss + heap), stack high-water; the clean-build seconds.
`--markdown` prints the table for docs/performance.md.

Sources come the way a user brings them (README.md): TFLM_ROOT (tflite-micro with its downloads),
MLPERF_TINY_ROOT (mlcommons/tiny), EXECUTORCH_ROOT and CMSIS_NN_PATH. Without them it says what is
missing and exits 0: it is a benchmark, not a test.
Run: .venv/bin/python bench/peers/peers.py [--models kws ad] [--boards mps3-an547] [--markdown]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from cmx_gen.app.kinds.baremetal.build import elf_sections, find_elf  # noqa: E402
from cmx_gen.common.errors import RunError  # noqa: E402
from cmx_gen.device import app_run  # noqa: E402
from cmx_gen.device.runners import QemuRunner  # noqa: E402
from cmx_gen.fit.boards import load_board  # noqa: E402
from cmx_gen.pipeline.cycles import CycleRun  # noqa: E402

CONFIG = yaml.safe_load((HERE / "peers.yaml").read_text())
LTO = False  # --lto: both stacks link-time optimised (peers.yaml `lto`)
DOWNLOADS = "tensorflow/lite/micro/tools/make/downloads"
THIRD_PARTY = ["flatbuffers", "gemmlowp", "ruy", "kissfft", "cmsis", "cmsis/Cortex_DFP", "pigweed"]
# What TFLM's download scripts apply after unpacking (flatbuffers_download.sh, kissfft_download.sh).
PATCHES = {
    "flatbuffers": "tensorflow/lite/micro/tools/make/flatbuffers.patch",
    "kissfft": "third_party/kissfft/kissfft.patch",
}


# --- sources ------------------------------------------------------------------------------------


def missing_sources() -> list[str]:
    """What is not there, one line each with where it is looked for."""
    missing = []
    for var, probe in [
        ("TFLM_ROOT", "tensorflow/lite/micro/micro_interpreter.h"),
        ("MLPERF_TINY_ROOT", CONFIG["models"]["kws"]["tflite"]),
        ("EXECUTORCH_ROOT", "runtime/executor/method.h"),
        ("CMSIS_NN_PATH", "Include/arm_nnfunctions.h"),
    ]:
        value = os.environ.get(var)
        if not value:
            missing.append(f"{var} is not set")
        elif not (Path(value) / probe).is_file():
            missing.append(f"{var}={value} has no {probe}")
    tflm = os.environ.get("TFLM_ROOT")
    if tflm and (Path(tflm) / "tensorflow").is_dir():
        for name in THIRD_PARTY:
            if not (Path(tflm) / DOWNLOADS / name).is_dir():
                missing.append(f"TFLM's third-party source {DOWNLOADS}/{name} is not in TFLM_ROOT (README.md)")
        for name, patch in PATCHES.items():
            folder = Path(tflm) / DOWNLOADS / name
            check = ["git", "-C", str(folder), "apply", "--reverse", "--check", str(Path(tflm) / patch)]
            if folder.is_dir() and subprocess.run(check, capture_output=True).returncode != 0:
                missing.append(f"{DOWNLOADS}/{name} lacks TFLM's patch: git -C {folder} apply $TFLM_ROOT/{patch}")
    for tool in ("arm-none-eabi-gcc", "qemu-system-arm", "make", "cmake", "ninja"):
        if shutil.which(tool) is None:
            missing.append(f"{tool} is not on PATH")
    try:
        import PIL  # noqa: F401  (TFLM's Makefile runs a Python script that imports it)
    except ImportError:
        missing.append("Pillow is not installed (TFLM's Makefile needs it): .venv/bin/pip install -e '.[peers]'")
    return missing


def commit(path: str | Path) -> str:
    out = subprocess.run(["git", "-C", str(path), "log", "-1", "--format=%h %cs"], capture_output=True, text=True)
    return out.stdout.strip() or "not a git checkout"


def source_commits() -> dict[str, str]:
    tflm = Path(os.environ["TFLM_ROOT"])
    commits = {
        "cmx-gen": commit(ROOT),
        "TFLM": commit(tflm),
        "MLPerf Tiny": commit(os.environ["MLPERF_TINY_ROOT"]),
        "ExecuTorch": commit(os.environ["EXECUTORCH_ROOT"]),
        "CMSIS-NN": commit(os.environ["CMSIS_NN_PATH"]),
    }
    for name in THIRD_PARTY:
        if (tflm / DOWNLOADS / name / ".git").exists():
            commits[f"TFLM {name}"] = commit(tflm / DOWNLOADS / name)
    return commits


def tool_versions() -> dict[str, str]:
    gcc = subprocess.run(["arm-none-eabi-gcc", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    qemu = subprocess.run(["qemu-system-arm", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    return {"gcc": gcc, "qemu": qemu}


# --- the .tflite's operators ----------------------------------------------------------------------


def tflite_operators(model: bytes) -> list[int]:
    """The builtin operator codes the model's operators use (a flatbuffer read by hand: Model.
    operator_codes / subgraphs[].operators[].opcode_index; OperatorCode.builtin_code, or its
    deprecated byte for old files)."""
    u32 = lambda at: struct.unpack_from("<I", model, at)[0]  # noqa: E731

    def field(table: int, index: int) -> int | None:
        vtable = table - struct.unpack_from("<i", model, table)[0]
        if 4 + 2 * index >= struct.unpack_from("<H", model, vtable)[0]:
            return None
        offset = struct.unpack_from("<H", model, vtable + 4 + 2 * index)[0]
        return table + offset if offset else None

    def tables(table: int, index: int) -> list[int]:
        at = field(table, index)
        if at is None:
            return []
        vector = at + u32(at)
        return [vector + 4 + 4 * i + u32(vector + 4 + 4 * i) for i in range(u32(vector))]

    root = u32(0)
    codes = []
    for code in tables(root, 1):
        deprecated, builtin = field(code, 0), field(code, 3)
        codes.append(
            max(
                struct.unpack_from("<b", model, deprecated)[0] if deprecated else 0,
                struct.unpack_from("<i", model, builtin)[0] if builtin else 0,
            )
        )
    used = set()
    for subgraph in tables(root, 2):
        for op in tables(subgraph, 3):
            at = field(op, 0)
            used.add(codes[u32(at) if at else 0])
    return sorted(used)


# --- measuring an image ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Sizes:
    code: int  # .text output section (+ .ARM.exidx) less its .rodata input sections
    rodata: int
    model: int  # .cmx_model: the .pte or the .tflite
    static: int  # .data + .bss + .heap


def sizes(elf: Path) -> Sizes:
    sections = {s.name: s.size for s in elf_sections(elf)}
    memory_map = elf.with_suffix(".map").read_text()
    memory_map = memory_map[memory_map.find("Linker script and memory map") :]
    rodata = sum(
        int(m.group(2), 16) for m in re.finditer(r"^ (\.rodata\S*)\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s", memory_map, re.M)
    )
    code = sections.get(".text", 0) + sections.get(".ARM.exidx", 0) + sections.get(".vectors", 0) - rodata
    static = sum(sections.get(name, 0) for name in (".data", ".bss", ".heap"))
    return Sizes(code, rodata, sections.get(".cmx_model", 0), static)


@dataclass(frozen=True)
class Row:
    stack: str  # "TFLM" | "cmx-gen"
    model: str
    board: str
    instructions: int  # median of calls 2..N
    spread: int  # max - min of calls 2..N
    sizes: Sizes
    arena: int  # TFLM: arena_used_bytes(); cmx-gen: the pools as allocated (planned + method + temp)
    stack_used: int
    build_seconds: float
    cycles: int | None = None  # cmx-gen's estimate of one inference (device/cycles/); None: no timing table


def median_and_spread(counts: list[int]) -> tuple[int, int]:
    """Of calls 2..N (the first is the warm-up): the median and max - min."""
    later = sorted(counts[1:])
    return later[len(later) // 2], later[-1] - later[0]


def cmx_cli(work: Path, board_id: str) -> tuple[list[str], dict[str, str], list[str]]:
    """The cmx-gen command line, its environment (this run's cache) and the table's LTO defines."""
    env = {**os.environ, "CMX_GEN_CACHE": str(work / f"cmx-cache-{board_id}")}
    defines = CONFIG["lto"]["cmx_defines"] if LTO else CONFIG["cmx_defines"]
    return [sys.executable, "-m", "cmx_gen"], env, [arg for d in defines for arg in ("-D", d)]


def run_image(board_id: str, elf: Path, timeout: float = 600.0) -> str:
    cmd = QemuRunner(load_board(board_id), timeout).command(elf)
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, errors="replace")
    return done.stdout + done.stderr


def estimated_cycles(board_id: str, elf: Path, timeout: float = 1800.0) -> int | None:
    """One inference of `elf` (between its cmx_measure_begin and cmx_measure_end) under cmx-gen's cycle
    plugin, priced with the core's timing table: the same estimate as `cmx-gen run --cycles`. None
    where the core has no table."""
    try:
        measuring = CycleRun(load_board(board_id), elf, timeout)
    except RunError:
        return None
    subprocess.run(measuring.runner.command(elf), capture_output=True, timeout=timeout)
    return measuring.read().total.cycles[1]


def timed(cmd: list[str], log: Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> float:
    start = time.monotonic()
    with open(log, "a") as out:
        code = subprocess.run(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT).returncode
    if code != 0:
        sys.exit(f"peers: {cmd[0]} {' '.join(cmd[1:3])} ... failed (exit {code}); see {log}")
    return time.monotonic() - start


def say(message: str) -> None:
    print(f"# {message}", file=sys.stderr, flush=True)


# --- TFLM -----------------------------------------------------------------------------------------


def tflm_library(board_id: str, work: Path) -> tuple[Path, float]:
    """TFLM's microlite library for the board's core, built clean by TFLM's Makefile."""
    board = CONFIG["boards"][board_id]
    gendir = work / f"tflm-lib-{board_id}"
    shutil.rmtree(gendir, ignore_errors=True)
    settings = {
        **CONFIG["tflm_make"],
        **(CONFIG["lto"]["tflm_make"] if LTO else {}),
        "TARGET_ARCH": board["tflm_arch"],
        "TARGET_TOOLCHAIN_ROOT": str(Path(shutil.which("arm-none-eabi-gcc") or "").parent) + "/",
        "CMSIS_NN_PATH": os.environ["CMSIS_NN_PATH"],
        "GENDIR": f"{gendir}/",
    }
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}  # its scripts' python
    say(f"TFLM library for {board_id} ({board['tflm_arch']}): make microlite, {os.cpu_count()} jobs")
    seconds = timed(
        [
            "make",
            "-f",
            "tensorflow/lite/micro/tools/make/Makefile",
            f"-j{os.cpu_count()}",
            *(f"{k}={v}" for k, v in settings.items()),
            "microlite",
        ],
        work / f"tflm-lib-{board_id}.log",
        cwd=Path(os.environ["TFLM_ROOT"]),
        env=env,
    )
    libs = list(gendir.glob("**/libtensorflow-microlite.a"))
    if not libs:
        sys.exit(f"peers: TFLM's make left no libtensorflow-microlite.a in {gendir}")
    return libs[0], seconds


def tflm_image(
    key: str, board_id: str, work: Path, library: Path, cmx_app: Path, profile: bool = False
) -> tuple[Path, float]:
    """The TFLM image of one model for one board, configured and built clean; its ELF and seconds."""
    tflite = Path(os.environ["MLPERF_TINY_ROOT"]) / CONFIG["models"][key]["tflite"]
    ops = [CONFIG["resolver"][code] for code in tflite_operators(tflite.read_bytes())]
    name = f"tflm-{key}-{board_id}" + ("-profile" if profile else "")
    build = work / name
    shutil.rmtree(build, ignore_errors=True)
    log = work / f"{name}.log"
    seconds = timed(
        [
            "cmake",
            "-S",
            str(HERE / "tflm"),
            "-B",
            str(build),
            "-G",
            "Ninja",
            f"-DTFLM_ROOT={os.environ['TFLM_ROOT']}",
            f"-DTFLM_LIB={library}",
            f"-DTFLM_CPU_FLAGS={CONFIG['boards'][board_id]['tflm_cpu_flags']}",
            f"-DTFLM_DEFINES={CONFIG['tflm_defines']}",
            f"-DCMX_APP={cmx_app}",
            f"-DTFLM_MODEL={tflite}",
            f"-DTFLM_OPS={';'.join(ops)}",
            f"-DTFLM_CALLS={CONFIG['calls']}",
            f"-DTFLM_ARENA_BYTES={CONFIG['tflm_arena_bytes']}",
            f"-DTFLM_PROFILE={'ON' if profile else 'OFF'}",
            f"-DTFLM_LTO={'ON' if LTO else 'OFF'}",
        ],
        log,
    )
    seconds += timed(["cmake", "--build", str(build)], log)
    return build / "tflm_peer.elf", seconds


def tflm_row(key: str, board_id: str, work: Path, library: Path, library_seconds: float, cmx_app: Path) -> Row:
    elf, seconds = tflm_image(key, board_id, work, library, cmx_app)
    output = run_image(board_id, elf)
    counts = [int(m.group(1)) for m in re.finditer(r"^tflm: call \d+ \w+=(\d+)", output, re.M)]
    done = re.search(r"^tflm: done calls=\d+ arena=(\d+)/\d+ stack=(\d+)/\d+", output, re.M)
    if not done or len(counts) != CONFIG["calls"]:
        sys.exit(f"peers: the TFLM image for {key} on {board_id} did not finish: {output.strip()[-300:]!r}")
    return Row(
        "TFLM",
        key,
        board_id,
        *median_and_spread(counts),
        sizes(elf),
        int(done.group(1)),
        int(done.group(2)),
        library_seconds + seconds,
        estimated_cycles(board_id, elf),
    )


def tflm_profile(
    key: str, board_id: str, work: Path, library: Path, cmx_app: Path
) -> tuple[list[tuple[str, int]], dict[str, int]]:
    """(operator, count) of the last call, from TFLM's profiler hook around each operator; and the
    arena's persistent allocations by kind (RecordingMicroAllocator)."""
    elf, _ = tflm_image(key, board_id, work, library, cmx_app, profile=True)
    output = run_image(board_id, elf)
    memory = {m.group(1): int(m.group(2)) for m in re.finditer(r"^tflm: mem (\S+) (\d+)", output, re.M)}
    return [(m.group(1), int(m.group(2))) for m in re.finditer(r"^tflm: prof \d+ (\S+) (\d+)", output, re.M)], memory


def arena_parts(app: Path, ours: Row, peer: Row, peer_memory: dict[str, int]) -> str:
    """Both arenas by what they hold: activations and kernel scratch; the runtime's own structures."""
    import json

    from cmx_gen.program import pte as program

    memory = json.loads((app / "model" / "report.json").read_text())["memory"]
    needs = program.allocator_needs((app / "model" / "model.pte").read_bytes())
    persistent = sum(peer_memory.values())
    method_parts = ", ".join(f"{name} {cell(size)}" for name, size in needs.parts)
    return (
        f"  arena, TFLM {cell(peer.arena)}: activations and scratch {cell(peer.arena - persistent)} "
        f"(arena_used_bytes - persistent); persistent {cell(persistent)} = "
        + ", ".join(f"{name} {cell(size)}" for name, size in peer_memory.items() if size)
        + f"\n  arena, cmx-gen {cell(ours.arena)} as allocated: planned {cell(memory['planned_bytes'])} "
        f"(of it kernel scratch {cell(memory['scratch_bytes'])}); method pool {cell(needs.method_bytes)} = {method_parts}"
        f"; its margin and the temp pool {cell(ours.arena - memory['planned_bytes'] - needs.method_bytes)}"
    )


# --- cmx-gen --------------------------------------------------------------------------------------


def cmx_row(key: str, board_id: str, work: Path) -> tuple[Row, Path]:
    """The sample through the CLI as a user runs it; the kernel library built clean (empty cache)."""
    model = CONFIG["models"][key]
    app = work / f"cmx-{key}-{board_id}"
    cli, env, lto = cmx_cli(work, board_id)
    # lowering is cached across runs; the runtime build is not
    shutil.rmtree(Path(env["CMX_GEN_CACHE"]) / "runtime", ignore_errors=True)
    log = work / f"cmx-{key}-{board_id}.log"
    timed(
        [
            *cli,
            "create",
            "--config",
            str(ROOT / "samples" / model["sample"] / "cmx.toml"),
            "--board",
            board_id,
            "--rtos",
            "baremetal",
            "--io",
            "int8",
            "-o",
            str(app),
            "--force",
        ],
        log,
        env=env,
    )
    seconds = timed(
        [*cli, "build", str(app), "--clean", *lto, "-D", f"CMX_APP_ITERATIONS={CONFIG['calls']}"], log, env=env
    )
    elf = find_elf(app / "build", user_app=True)
    run = app_run.parse(run_image(board_id, elf))
    if run.error or len(run.calls) != CONFIG["calls"] or run.stack is None:
        sys.exit(f"peers: the cmx-gen app {app} did not finish: {run.output.strip()[-300:]!r}")
    arena = sum(allocated for _, allocated in run.calls[-1].pools.values())
    cycles = estimated_cycles(board_id, find_elf(app / "build"))  # the check image: its edges
    row = Row(
        "cmx-gen", key, board_id, *median_and_spread(run.counts()), sizes(elf), arena, run.stack[0], seconds, cycles
    )
    return row, app


def cmx_profile(app: Path, work: Path, board_id: str) -> list[tuple[str, int]]:
    """(operator, count) from `cmx-gen run APP --profile` (ExecuTorch's EventTracer hooks)."""
    cli, env, lto = cmx_cli(work, board_id)
    # Configure the profile image with the table's LTO setting first; `run --profile` keeps it.
    timed(
        [*cli, "build", str(app), "--build-dir", str(app / "build-profile"), "--clean", "-D", "CMX_PROFILE=ON", *lto],
        work / f"{app.name}-profile.log",
        env=env,
    )
    done = subprocess.run([*cli, "run", str(app), "--profile"], env=env, capture_output=True, text=True)
    rows = re.finditer(
        r"^\s*\d+\s+(?:cortex_m|aten|quantized_decomposed)::(\S+?)(?:\.out)?\s+.*?\s([\d,]+)\s+[\d.]+%",
        done.stdout,
        re.M,
    )
    return [(m.group(1), int(m.group(2).replace(",", ""))) for m in rows]


def profiles_side_by_side(
    key: str, board: str, ours: list[tuple[str, int]], peer: list[tuple[str, int]], row_ours: Row, row_peer: Row
) -> str:
    """Both stacks' operators in order, their counts, and what the inference spends outside them."""
    lines = [
        f"{key} on {board}: per operator (the profiled image's own counts; the inference totals are the table's)",
        f"  {'#':>3}  {'TFLM':<22} {'instr':>10}    {'cmx-gen':<28} {'instr':>10}",
    ]
    for i in range(max(len(ours), len(peer))):
        left = peer[i] if i < len(peer) else ("", 0)
        right = ours[i] if i < len(ours) else ("", 0)
        lines.append(
            f"  {i:>3}  {left[0]:<22} {cell(left[1]) if left[0] else '':>10}    "
            f"{right[0]:<28} {cell(right[1]) if right[0] else '':>10}"
        )
    peer_sum, our_sum = sum(c for _, c in peer), sum(c for _, c in ours)
    lines.append(f"  sum  {'':<22} {cell(peer_sum):>10}    {'':<28} {cell(our_sum):>10}")
    lines.append(
        f"  outside the operators (inference - sum): TFLM {cell(row_peer.instructions - peer_sum)}, "
        f"cmx-gen {cell(row_ours.instructions - our_sum)}"
    )
    return "\n".join(lines)


# --- the table ------------------------------------------------------------------------------------

COLUMNS = [
    ("cycles (est.)", lambda r: r.cycles if r.cycles is not None else "-"),
    ("instr/inference", lambda r: r.instructions),
    ("code B", lambda r: r.sizes.code),
    (".rodata B", lambda r: r.sizes.rodata),
    ("model B", lambda r: r.sizes.model),
    ("arena B", lambda r: r.arena),
    ("static B", lambda r: r.sizes.static),
    ("stack B", lambda r: r.stack_used),
    ("build s", lambda r: r.build_seconds),
]


def cell(value: float | str) -> str:
    return value if isinstance(value, str) else f"{value:,.1f}" if isinstance(value, float) else f"{value:,}"


def table(rows: list[Row], markdown: bool) -> str:
    head = ["model", "board", "stack", *(name for name, _ in COLUMNS)]
    lines = []
    if markdown:
        lines += ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] * 3 + ["---:"] * len(COLUMNS)) + "|"]
    else:
        lines.append(f"{head[0]:<5} {head[1]:<11} {head[2]:<8}" + "".join(f" {h:>15}" for h in head[3:]))
    for r in rows:
        values = [cell(get(r)) for _, get in COLUMNS]
        if markdown:
            lines.append(
                f"| {CONFIG['models'][r.model]['title']} | {r.board} | {r.stack} | " + " | ".join(values) + " |"
            )
        else:
            lines.append(f"{r.model:<5} {r.board:<11} {r.stack:<8}" + "".join(f" {v:>15}" for v in values))
    return "\n".join(lines)


def ratios(rows: list[Row]) -> str:
    """cmx-gen against TFLM per model and board: cycles (estimated), instructions, code + model flash, RAM."""
    out = []
    by_key = {(r.stack, r.model, r.board): r for r in rows}
    for (stack, key, board), ours in by_key.items():
        peer = by_key.get(("TFLM", key, board))
        if stack != "cmx-gen" or peer is None:
            continue
        flash = lambda r: r.sizes.code + r.sizes.rodata + r.sizes.model  # noqa: E731
        ram = lambda r: r.arena + r.sizes.static + r.stack_used  # noqa: E731
        cycles = (
            f"cycles {ours.cycles / peer.cycles:6.1%} ({peer.cycles / ours.cycles:.2f}x fewer)   "
            if ours.cycles and peer.cycles
            else ""
        )
        out.append(
            f"{key:<5} {board:<11} {cycles}instructions {ours.instructions / peer.instructions:6.1%}   "
            f"flash {flash(ours):,} / {flash(peer):,} = {flash(ours) / flash(peer):6.1%}   "
            f"RAM {ram(ours):,} / {ram(peer):,} = {ram(ours) / ram(peer):6.1%}"
        )
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=list(CONFIG["models"]), choices=list(CONFIG["models"]))
    parser.add_argument("--boards", nargs="+", default=list(CONFIG["boards"]), choices=list(CONFIG["boards"]))
    parser.add_argument("--work", help="folder for builds and logs (default: a new temporary folder)")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown (docs/performance.md)")
    parser.add_argument(
        "--lto", action="store_true", help="link-time optimisation on both sides (default: off on both)"
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also build both stacks' profiling images and print instructions per operator",
    )
    args = parser.parse_args()
    global LTO
    LTO = args.lto
    missing = missing_sources()
    if missing:
        print("bench/peers: not run, sources or tools are missing (bench/peers/README.md says how to get them):")
        print("\n".join(f"  - {line}" for line in missing))
        return
    commits = {**source_commits(), **tool_versions()}  # what the run starts from
    work = Path(args.work or tempfile.mkdtemp(prefix="cmx-peers-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    say(f"builds and logs in {work}")
    rows: list[Row] = []
    profiles: list[str] = []
    for board in args.boards:
        library, library_seconds = tflm_library(board, work)
        for key in args.models:
            say(f"{key} on {board}: cmx-gen create/build/run")
            ours, app = cmx_row(key, board, work)
            say(f"{key} on {board}: TFLM build/run")
            peer = tflm_row(key, board, work, library, library_seconds, app)
            rows += [peer, ours]
            if args.profile:
                say(f"{key} on {board}: profiles")
                peer_ops, peer_memory = tflm_profile(key, board, work, library, app)
                profiles.append(
                    profiles_side_by_side(key, board, cmx_profile(app, work, board), peer_ops, ours, peer)
                    + "\n"
                    + arena_parts(app, ours, peer, peer_memory)
                )
    print(
        f"bench/peers {date.today()}: LTO {'on' if LTO else 'off'} on both sides; {CONFIG['calls']} calls per "
        f"image, the first a warm-up; instructions = median of the rest (QEMU -icount shift=0); cycles: cmx-gen's "
        f"estimate of the last call (`run --cycles`, docs/cycles.md; zero wait states)"
    )
    for name, value in commits.items():
        print(f"  {name}: {value}")
    print(table(rows, args.markdown))
    print(ratios(rows))
    spreads = [f"{r.stack} {r.model} {r.board}: {r.spread}" for r in rows if r.spread]
    print("spread of calls 2..N: " + ("; ".join(spreads) if spreads else "0 on every image"))
    for text in profiles:
        print(text)


if __name__ == "__main__":
    main()
