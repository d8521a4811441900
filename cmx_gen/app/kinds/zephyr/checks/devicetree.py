"""Each boards/<board>.overlay preprocessed and parsed with dtlib on top of a memory stub of
the board's DTS, so &labels resolve; memory-region nodes are checked and every region the
linker snippets name must exist."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from devicetree import dtlib

from cmx_gen.app.kinds.zephyr.checks.result import CheckResult, board_files, rel
from cmx_gen.app.kinds.zephyr.context import ZEPHYR_DATA
from cmx_gen.app.kinds.zephyr.layout import zephyr_boards
from cmx_gen.fit.boards import ModelSlot, WeightsArea

_LINK_IN = re.compile(r"GROUP_(?:DATA_|NOLOAD_)?LINK_IN\(\s*(\w+)(?:\s*,\s*(\w+))?\s*\)")


def _preprocess(sources: list[Path], include: list[Path], out: Path) -> str | None:
    """cpp over the DTS + overlay, like Zephyr's dts.cmake; returns an error text or None."""
    cpp = shutil.which("arm-none-eabi-cpp") or shutil.which("cpp")
    if not cpp:
        return "no C preprocessor (arm-none-eabi-cpp or cpp) to run over the devicetree"
    combined = out.with_suffix(".dts.in")
    combined.write_text("".join(f'#include "{s}"\n' for s in sources))
    cmd = [
        cpp,
        "-x",
        "assembler-with-cpp",
        "-nostdinc",
        "-undef",
        "-D__DTS__",
        "-E",
        *[f"-I{p}" for p in include],
        str(combined),
        "-o",
        str(out),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    return proc.stderr.strip() if proc.returncode else None


def check_devicetree(app: Path) -> CheckResult:
    result = CheckResult("devicetree")
    boards = zephyr_boards()
    overlays = board_files(app, ".overlay")
    region_names: set[str] = set()
    for overlay in overlays:
        name = rel(app, overlay)
        result.checked.append(name)
        info = boards.get(overlay.stem)
        if not isinstance(info, dict):
            result.fail(name, f"no devicetree stub for board '{overlay.stem}' (cmx_gen/data/zephyr/boards.yaml)")
            continue
        stub = ZEPHYR_DATA / "dts" / info["dts"]
        with tempfile.TemporaryDirectory(prefix="cmx-dts-") as tmp:
            pre = Path(tmp) / "zephyr.dts.pre"
            err = _preprocess([stub, overlay.resolve()], [ZEPHYR_DATA / "dts" / "include", overlay.parent], pre)
            if err:
                result.fail(name, f"preprocessing failed: {' '.join(err.split())}")
                continue
            try:
                dt = dtlib.DT(str(pre))
            except dtlib.DTError as exc:
                msg = " ".join(str(exc).split()).replace(str(overlay.resolve()), name)
                result.fail(name, f"devicetree error on top of the {info['target']} board DTS: {msg}")
                continue
        _check_memory_nodes(dt, name, result, region_names)
        _check_slot_partitions(dt, name, result, _model_slots(app))
    # regions named by the linker snippets must exist (board DTS stubs + overlays)
    for info in (boards.get(c.stem) for c in board_files(app, ".conf")):
        if not isinstance(info, dict):
            continue
        if not any(o.stem == info["target"].replace("/", "_") for o in overlays):
            with tempfile.TemporaryDirectory(prefix="cmx-dts-") as tmp:
                pre = Path(tmp) / "zephyr.dts.pre"
                if _preprocess([ZEPHYR_DATA / "dts" / info["dts"]], [ZEPHYR_DATA / "dts" / "include"], pre):
                    continue
                try:
                    dt = dtlib.DT(str(pre))
                except dtlib.DTError:
                    continue
            _check_memory_nodes(dt, info["dts"], CheckResult("scratch"), region_names)
    for snippet in sorted((app / "linker").glob("*.ld")) if (app / "linker").is_dir() else []:
        name = rel(app, snippet)
        result.checked.append(name)
        for m in _LINK_IN.finditer(snippet.read_text()):
            for region in filter(None, m.groups()):
                if region in ("RAMABLE_REGION", "ROMABLE_REGION"):
                    continue
                if region not in region_names:
                    result.fail(
                        name,
                        f"memory region {region} is not defined by the board devicetree "
                        "or the app overlay (no zephyr,memory-region node of that name)",
                    )
    return result


def _check_memory_nodes(dt, name: str, result: CheckResult, region_names: set[str]) -> None:
    regions: list[tuple[str, int, int, str]] = []
    for node in dt.node_iter():
        compat = node.props.get("compatible")
        compats = compat.to_strings() if compat else []
        if "zephyr,memory-region" not in compats:
            continue
        prop = node.props.get("zephyr,memory-region")
        if prop is None:
            result.fail(name, f"{node.path}: compatible zephyr,memory-region without a zephyr,memory-region name")
            continue
        region = prop.to_string()
        if "reg" not in node.props:
            result.fail(name, f"{node.path}: memory region {region} has no reg")
            continue
        cells = node.props["reg"].to_nums()
        if len(cells) < 2 or len(cells) % 2:
            result.fail(
                name,
                f"{node.path}: reg of memory region {region} must be <address size> pairs "
                f"(#address-cells = #size-cells = 1), got {len(cells)} cell(s)",
            )
            continue
        base, size = cells[0], cells[1]
        region_names.add(region)
        regions.append((region, base, size, node.path))
    seen: dict[str, str] = {}
    for region, _base, _size, path in regions:
        if region in seen:
            result.fail(name, f"{path}: memory region name {region} is also used by {seen[region]}")
        seen[region] = path
    for i, (r1, b1, s1, p1) in enumerate(regions):
        for r2, b2, s2, p2 in regions[i + 1 :]:
            if b1 < b2 + s2 and b2 < b1 + s1:
                result.fail(name, f"{p1} ({r1} {b1:#x}+{s1:#x}) overlaps {p2} ({r2} {b2:#x}+{s2:#x})")
    chosen = dt.get_node("/chosen") if dt.has_node("/chosen") else None
    if chosen is not None:
        for key in ("zephyr,flash", "zephyr,sram"):
            if key in chosen.props:
                try:
                    chosen.props[key].to_path()
                except dtlib.DTError as exc:
                    result.fail(name, f"chosen {key}: {exc}")


def _model_slots(app: Path) -> list[ModelSlot]:
    """The board file's model slots of an app made with placement = "slot" (else none)."""
    from cmx_gen.app.folder import AppFolder
    from cmx_gen.app.model_slots import is_slot_app
    from cmx_gen.common.errors import CmxError

    folder = AppFolder(app)
    if not is_slot_app(folder):
        return []
    try:
        return list(folder.board().model_slots)
    except (CmxError, OSError, ValueError):
        return []


def _check_slot_partitions(dt: dtlib.DT, name: str, result: CheckResult, slots: list[ModelSlot]) -> None:
    """Each model slot is a partition cmx_slot_<name> at the board file's address and size (where
    model-image and flash --model-only write), its weights area cmx_weight_<name>, and neither shares
    its storage with another partition."""
    ranges: list[tuple[str, str, ModelSlot | WeightsArea]] = [
        (f"cmx_slot_{s.name}", f"slot {s.name}", s) for s in slots
    ]
    ranges += [(f"cmx_weight_{s.name}", f"slot {s.name}'s weights area", s.weights) for s in slots if s.weights]
    for label, what, slot in ranges:
        node = dt.label2node.get(label)
        if node is None or node.parent is None or node.parent.parent is None:
            result.fail(name, f'no partition &{label} for model {what} (placement = "slot")')
            continue
        base = node.parent.parent.props["reg"].to_nums()[0] if "reg" in node.parent.parent.props else 0
        offset, size = node.props["reg"].to_nums()[:2]
        if (base + offset, size) != (slot.base, slot.size):
            result.fail(
                name,
                f"partition &{label} is {base + offset:#x}+{size:#x}, the board file's {what} "
                f"{slot.base:#x}+{slot.size:#x}: model-image would write where the firmware does not look",
            )
        for other in node.parent.nodes.values():
            if other is node or "reg" not in other.props:
                continue
            o_offset, o_size = other.props["reg"].to_nums()[:2]
            if o_offset < offset + size and offset < o_offset + o_size:
                result.fail(name, f"partition &{label} overlaps {other.path} ({o_offset:#x}+{o_size:#x})")
