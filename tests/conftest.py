"""Shared fixtures: lowering is the slow step, so each small model is lowered once per session."""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import tempfile
import threading
import tty
from pathlib import Path

import pytest
import yaml

from cmx_gen.cli import main as cli
from cmx_gen.common.paths import BOARDS_DIR
from cmx_gen.fit.boards import load_board

# The tests get a lowering cache of their own: they neither read nor fill the user's.
os.environ.setdefault("CMX_GEN_CACHE", tempfile.mkdtemp(prefix="cmx-gen-test-cache-"))

ROOT = Path(__file__).resolve().parent.parent
SMALL = ROOT / "tests" / "toy_models" / "small.py"


def second_bmm_line() -> str:
    """`small.py:N`: the Attention model's line whose bmm upstream's pass fails on."""
    lines = SMALL.read_text().splitlines()
    return f"small.py:{next(i for i, text in enumerate(lines, 1) if 'ATTENTION_SECOND_BMM' in text)}"


def run_cli(*argv: str) -> int:
    return cli.main([str(a) for a in argv])


@pytest.fixture(scope="session")
def lowered_dir(tmp_path_factory):
    """Lower a test model once; returns a function name -> output folder."""
    cache: dict[tuple, Path] = {}

    def get(name: str, *extra: str, target: str = "cortex-m55") -> Path:
        key = (name, extra, target)
        if key not in cache:
            out = tmp_path_factory.mktemp(name.replace(":", "_"))
            code = run_cli("lower", f"{SMALL}:{name}", "--target", target, "-o", out, *extra)
            assert code == 0, f"lowering {name} failed with {code}"
            cache[key] = out
        return cache[key]

    return get


def digits_split(folder: Path, count: int | None = None) -> Path:
    """The digits sample's test split as a `run --data` file in `folder` (its first `count` samples)."""
    import sys

    import numpy as np

    full = folder / "test.npz"
    subprocess.run(
        [sys.executable, str(ROOT / "samples" / "digits" / "test_split.py"), "--out", str(full)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    if count is None:
        return full
    with np.load(full) as split:
        np.savez(folder / "some.npz", input=split["input"][:count], labels=split["labels"][:count])
    return folder / "some.npz"


def an547_with_dtcm(folder: Path, board_id: str, dtcm_bytes: int, isram_as_flash: bool = False) -> Path:
    """mps3-an547 with its ITCM for code and a DTCM of `dtcm_bytes` as its only RAM (and its 4 MB ISRAM
    declared as flash, for a model too large for the ITCM), written to `folder` as `board_id`.yaml."""
    board = yaml.safe_load((BOARDS_DIR / "mps3-an547.yaml").read_text())
    regions = {r["name"]: r for r in board["memory"]}
    flash = [{**regions["isram"], "name": "flash", "kind": "flash", "dma": False}] if isram_as_flash else []
    board["id"] = board_id
    board["memory"] = [regions["itcm"], *flash, {**regions["dtcm"], "size": dtcm_bytes}]
    board.pop("model_slots", None)  # they live in the DDR window, which this board has not
    path = folder / f"{board_id}.yaml"
    path.write_text(yaml.safe_dump(board))
    return path


def read_report(folder: Path) -> dict:
    return json.loads((folder / "report.json").read_text())


def plan_matches_the_reference(out: Path) -> None:
    """The .pte's plan run on the host at its planned offsets (plan_reference) gives the lowering's
    reference (`cmx-gen lower -o out`) bit for bit."""
    import numpy as np

    from cmx_gen.program import plan_reference

    reference = np.load(out / "reference.npz")
    inputs = [reference[k] for k in sorted(reference.files) if k.startswith("input_")]
    isa = read_report(out)["target"]["isa"].upper()
    got = plan_reference.reference((out / "model.pte").read_bytes(), inputs, isa)
    expected = [reference[k] for k in sorted(reference.files) if k.startswith("output_")]
    for g, e in zip(got, expected, strict=True):
        assert np.array_equal(g, e), f"{np.abs(g.astype(np.float64) - e).max()} apart"


def kernels(report: dict) -> list[str]:
    """The cortex_m kernels a program runs, in order, whether ExecuTorch calls them (an instruction)
    or cmx-gen's backend does (a delegated layer): `cortex_m::quantized_conv2d`, no overload."""
    layers = iter(report["delegated_layers"])
    delegates: dict[int, list[str]] = {}
    for layer in layers:
        delegates.setdefault(layer["delegate"], []).append(layer["op"])
    out: list[str] = []
    calls = 0
    for instruction in report["instructions"]:
        if instruction["op"] == "<DelegateCall>":
            out += delegates.get(calls, [])
            calls += 1
        else:
            out.append(instruction["op"].removesuffix(".out"))
    return out


# ----------------------------------------------------------- firmware pieces without the SDK


def cpu_flags(board_id: str) -> list[str]:
    return load_board(board_id).core.gcc_flags + ["-mthumb"]


def placement(app: Path) -> dict:
    return json.loads((app / "model" / "placement.json").read_text())


def link_with_stub(app: Path, board: str, stub: Path, elf: Path, *defines: str) -> Path:
    """Link the app's startup, platform layer, the check's main() and embedded program with a stub
    cmx_run(), using the generated linker script (the runner and ExecuTorch need the SDK; these
    parts do not)."""
    cmd = [
        "arm-none-eabi-gcc",
        *cpu_flags(board),
        "-Os",
        "-ffunction-sections",
        "-fdata-sections",
        "--specs=nano.specs",
        "--specs=nosys.specs",
        "-nostartfiles",
        "-Wl,--gc-sections",
        *defines,
        f"-I{app / 'cmx/runner'}",
        f"-I{app / 'model'}",
        f"-T{app / 'linker.ld'}",
        str(stub),
        str(app / "platform/startup.c"),
        str(app / "platform/platform.c"),
        str(app / "cmx/runner/cmx_check_main.c"),
        str(app / "model/model_pte.S"),
        "-o",
        str(elf),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=app / "model")
    assert done.returncode == 0, done.stderr[-3000:]
    return elf


# A stand-in for the runner: prints one passing result line through the platform layer.
RESULT_STUB = (
    '#include "cmx_platform.h"\n'
    "int cmx_run(void) {\n"
    "  cmx_platform_init();\n"
    '  cmx_platform_puts("cmx-gen: PASS max_abs_err=0 instr=1 method=0/0 planned=0/0 temp=0/0");\n'
    '  cmx_platform_puts("\\n");\n'
    "  return 0;\n"
    "}\n"
)


# Tests that build and run firmware: they need the SDK and QEMU, and say so when skipped.
FIRMWARE = [
    pytest.mark.firmware,
    pytest.mark.skipif(
        not os.environ.get("EXECUTORCH_ROOT"),
        reason="firmware tests need EXECUTORCH_ROOT and CMSIS_NN_PATH (ExecuTorch + CMSIS-NN sources): not run",
    ),
    pytest.mark.skipif(shutil.which("qemu-system-arm") is None, reason="qemu-system-arm is not installed: not run"),
]


def run_serial_fed_by_qemu(app: Path, elf: Path, board_id: str, timeout: float = 90) -> int:
    """`cmx-gen run APP --serial PORT` on a pseudo-terminal whose other end is QEMU's UART running
    `elf`: the port is open before the "board" starts, as with a board on a desk. Its exit code."""
    from cmx_gen.device.runners import QemuRunner

    master, slave = pty.openpty()
    tty.setraw(slave)
    codes: list[int] = []
    reader = threading.Thread(
        target=lambda: codes.append(run_cli("run", app, "--serial", os.ttyname(slave), "--timeout", str(timeout)))
    )
    reader.start()
    qemu = subprocess.Popen(
        QemuRunner(load_board(board_id)).command(elf),
        stdin=subprocess.DEVNULL,
        stdout=master,
        stderr=subprocess.DEVNULL,
    )
    try:
        reader.join(timeout=timeout + 30)
    finally:
        qemu.kill()
        qemu.wait()
        os.close(master)
        os.close(slave)
    assert codes, "the serial reader did not finish"
    return codes[0]


def host_binary(tmp_path_factory, name: str, sources: list[str], needs: str, flags: tuple[str, ...] = ()) -> Path:
    """cmx-gen kernels and their harness under kernels/tests/ compiled for the build machine (paths
    relative to the repo, or to CMSIS-NN's Source/ when they start with "nn:"), with `flags`; skipped,
    saying `needs`, without CMSIS_NN_PATH or a C compiler."""
    nn = os.environ.get("CMSIS_NN_PATH")
    cc = shutil.which("cc") or shutil.which("gcc")
    if not nn or not cc:
        pytest.skip(f"{needs} was not compiled: needs CMSIS_NN_PATH and a host C compiler")
    out = tmp_path_factory.mktemp(name) / name
    files = [str(Path(nn) / "Source" / s[3:]) if s.startswith("nn:") else str(ROOT / s) for s in sources]
    includes = [f"-I{ROOT / 'kernels' / 'nn'}", f"-I{Path(nn) / 'Include'}"]
    subprocess.run([cc, "-O1", *flags, *includes, *files, "-o", str(out)], check=True, capture_output=True)
    return out
