"""Zephyr knowledge the app template needs: where each placed region lives in the board's
devicetree, which Kconfig the SoC allows, how Twister runs the board.

The cmx-gen board database describes hardware; Zephyr has its own names for the same memory
(devicetree labels, linker memory regions, `chosen` nodes) and its own view of the core (an
AN521 cpu0 has no FPU as far as Zephyr's Kconfig is concerned). That mapping is data, in
`cmx_gen/data/zephyr/boards.yaml`; this module turns board + placement + program into the
`zephyr` entry of the template context, so the Jinja templates stay free of decisions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cmx_gen.app.kinds.base import AppKind
from cmx_gen.app.kinds.zephyr.context_types import (
    AddedNode,
    Kconfig,
    Partition,
    PartitionGroup,
    PartitionNode,
    Place,
    RegionProp,
    ZephyrContext,
    ZephyrTarget,
)
from cmx_gen.app.kinds.zephyr.layout import zephyr_boards, zephyr_fpu
from cmx_gen.app.slot_files import own_images
from cmx_gen.common.errors import RenderError
from cmx_gen.common.paths import DATA_DIR
from cmx_gen.common.targets import cores
from cmx_gen.device.runners.fvp import cpu_instance
from cmx_gen.fit.boards import Board, MemoryRegion, ModelSlot, WeightsArea
from cmx_gen.fit.memory import Placement
from cmx_gen.program.report import Report

ZEPHYR_DATA = DATA_DIR / "zephyr"

# Pinned releases: the Zephyr release the templates and the Kconfig stubs were checked against.
ZEPHYR_REVISION = "v4.4.0"

# The pools' section (the runner's CMX_ARENA_SECTION); the program's is the kind's `pte_section`.
ARENA_SECTION = ".cmx_arena"


def board_info(file_name: str) -> dict[str, Any]:
    """The boards.yaml entry of one Zephyr board target (by file name)."""
    data = zephyr_boards()
    if file_name not in data or not isinstance(data[file_name], dict):
        known = sorted(k for k, v in data.items() if isinstance(v, dict) and "target" in v)
        raise RenderError(
            f"no Zephyr layout data for board target '{file_name}' "
            f"(cmx_gen/data/zephyr/boards.yaml knows: {', '.join(known)})",
            "add an entry for it to cmx_gen/data/zephyr/boards.yaml (labels from the board's DTS)",
        )
    return data[file_name]


def _region(board: Board, name: str) -> MemoryRegion:
    for region in board.memory:
        if region.name == name:
            return region
    raise RenderError(
        f"placement uses region '{name}' which board {board.id} does not have",
        "re-run placement for this board",
    )


def _round_up(value: int, align: int) -> int:
    return (int(value) + align - 1) // align * align


def _ident(name: str) -> str:
    """A devicetree label / linker region name from a board region name."""
    return "".join(ch if ch.isalnum() else "_" for ch in name)


class _Layout:
    """Resolves board regions to devicetree nodes for one Zephyr target, collecting the overlay."""

    def __init__(self, board: Board, info: dict) -> None:
        self.board = board
        self.info = info
        self.added_nodes: list[AddedNode] = []  # new memory-region nodes for the overlay
        self.region_props: list[RegionProp] = []  # existing nodes that get zephyr,memory-region
        self.chosen: dict[str, str] = {}  # chosen overrides

    def mapping(self, region_name: str) -> dict:
        """The devicetree side of a board region: {label, linker_region, add_region, add_node, role}."""
        region = _region(self.board, region_name)
        label = region.dt_node
        if not label:
            return {"label": None, "add_node": True}
        nodes = self.info.get("nodes", {})
        if label not in nodes:
            raise RenderError(
                f"Zephyr target {self.info['target']}: no layout data for devicetree node "
                f"&{label} (region '{region_name}' of board {self.board.id})",
                "add it under nodes: in cmx_gen/data/zephyr/boards.yaml",
            )
        return {"label": label, **(nodes[label] or {})}

    def role(self, region_name: str) -> str:
        """'flash' or 'sram' when the region holds the board's chosen one, else 'other'."""
        entry = self.mapping(region_name)
        if entry.get("role"):
            return entry["role"]
        chosen = self.info["chosen"]
        if entry["label"] and entry["label"] == chosen["flash"]:
            return "flash"
        if entry["label"] and entry["label"] == chosen["sram"]:
            return "sram"
        return "other"

    def linker_region(self, region_name: str) -> str:
        """Name of a linker memory region covering `region_name`, adding overlay bits if needed."""
        entry = self.mapping(region_name)
        if entry.get("linker_region") and not entry.get("add_node"):
            return entry["linker_region"]
        if entry.get("add_region") and not entry.get("add_node"):
            name = entry["add_region"]
            if not any(p["label"] == entry["label"] for p in self.region_props):
                self.region_props.append({"label": entry["label"], "region": name})
            return name
        if entry["label"] and not entry.get("add_node"):
            raise RenderError(
                f"Zephyr target {self.info['target']}: node &{entry['label']} for region "
                f"'{region_name}' declares no linker region and cmx-gen has no rule to add one",
                "set add_region or add_node for it in cmx_gen/data/zephyr/boards.yaml",
            )
        region = _region(self.board, region_name)
        name = "CMX_" + _ident(region_name).upper()
        if not any(n["region"] == name for n in self.added_nodes):
            self.added_nodes.append(
                {
                    "label": f"cmx_{_ident(region_name).lower()}",
                    "base": region.base,
                    "size": region.size,
                    "region": name,
                    "node": f"memory@{region.base:x}",
                }
            )
        return name

    def choose(self, role: str, region_name: str) -> None:
        """Make `region_name` Zephyr's chosen flash/sram (placement moved code/data there)."""
        if self.role(region_name) == role:
            return
        entry = self.mapping(region_name)
        if not entry.get("label") or entry.get("add_node"):
            raise RenderError(
                f"placement puts {'code' if role == 'flash' else 'data'} in region "
                f"'{region_name}', which the Zephyr board {self.info['target']} has no node for",
                "use a region the board's devicetree defines, or add a board overlay by hand",
            )
        if entry["label"] != self.info["chosen"][role]:
            self.chosen[f"zephyr,{role}"] = entry["label"]


def _partition_group(
    board: Board, info: dict, ranges: Sequence[tuple[str, ModelSlot | WeightsArea]], what: str
) -> PartitionGroup:
    """One `partitions` node of the overlay: in the flash node that holds `ranges` (so Zephyr's flash
    map can write them), else in a memory node of their own (memory-mapped RAM or DDR). `board` is
    the firmware's view: each region ends where its slots begin (Board.with_slots_reserved), so the
    region of a range is the nearest one below it."""
    first = min((item for _, item in ranges), key=lambda item: item.base)
    region = max((r for r in board.memory if r.base <= first.base), key=lambda r: r.base)
    entry = (info.get("nodes") or {}).get(region.dt_node or "", {}) or {}
    in_flash = region.kind == "flash" and region.dt_node is not None and not entry.get("add_node")
    start = region.base if in_flash else first.base
    size = max(item.end for _, item in ranges) - first.base
    node = PartitionNode(label=f"cmx_model_{what}", node=f"memory@{first.base:x}", base=first.base, size=size)
    return {
        "parent": region.dt_node if in_flash else None,
        "node": None if in_flash else node,
        "region": f"CMX_MODEL_{what.upper()}",
        "partitions": [
            Partition(name=name, label=f"cmx_{what.rstrip('s')}_{name}", offset=item.base - start, size=item.size)
            for name, item in ranges
        ],
    }


def _slot_partitions(board: Board, info: dict, slots: tuple[ModelSlot, ...]) -> list[PartitionGroup]:
    """The overlay's partitions for the model slots (placement = "slot"), and for their weights areas
    where the board gives them: `cmx_slot_<name>`, `cmx_weight_<name>`."""
    if not slots:
        return []
    groups = [_partition_group(board, info, [(s.name, s) for s in slots], "slots")]
    areas = [(s.name, s.weights) for s in slots if s.weights is not None]
    return groups + ([_partition_group(board, info, areas, "weights")] if areas else [])


def _target_files(
    board: Board, placement: Placement, file_name: str, slots: tuple[ModelSlot, ...] = ()
) -> ZephyrTarget:
    """Board .conf / .overlay / linker placement for one Zephyr target."""
    info = board_info(file_name)
    layout = _Layout(board, info)
    slot_partitions = _slot_partitions(board, info, slots)

    layout.choose("flash", placement.code_region)
    layout.choose("sram", placement.data_region)
    pte = _pte_place(board, placement, layout)
    arena = _arena_place(placement, layout)

    selects = set(info.get("soc_selects", []))
    fpu = zephyr_fpu(board, info)
    overlay_needed = bool(layout.added_nodes or layout.region_props or layout.chosen or slot_partitions)
    return {
        "target": info["target"],
        "file_name": file_name,
        "simulation": info.get("simulation", "none"),
        "soc_selects": sorted(selects),
        "fpu": fpu,
        "fpu_note": _fpu_note(board, fpu),
        "isa_note": _isa_note(board, selects),
        "overlay": overlay_needed,
        "added_nodes": layout.added_nodes,
        "region_props": layout.region_props,
        "chosen": layout.chosen,
        "pte": pte,
        "arena": arena,
        "slots": slot_partitions,
    }


def _pte_place(board: Board, placement: Placement, layout: _Layout) -> Place:
    """The program in the chosen flash's rodata or the chosen sram's data, where the placement put it
    there; else in a region of its own, which must be loadable (the image writes it)."""
    pte_region = placement.pte_region
    role = layout.role(pte_region)
    if pte_region == placement.code_region or role == "flash":
        return {"where": "rodata", "region": None}
    if pte_region == placement.data_region or role == "sram":
        return {"where": "data", "region": None}
    if not _region(board, pte_region).loadable:
        raise RenderError(
            f"placement puts the program in region '{pte_region}', which cannot be loaded at flash/load time",
            "place the program in flash or a loadable region",
        )
    return {"where": "region", "region": layout.linker_region(pte_region)}


def _arena_place(placement: Placement, layout: _Layout) -> Place:
    """The pools in .bss where they go in the chosen sram, else in their region's linker region."""
    arena_region = placement.arena_region
    if arena_region == placement.data_region or layout.role(arena_region) == "sram":
        return {"where": "bss", "region": None}
    return {"where": "region", "region": layout.linker_region(arena_region)}


def _fpu_note(board: Board, fpu: bool) -> str:
    if fpu:
        return "the core has an FPU and Zephyr's SoC Kconfig selects CPU_HAS_FPU"
    if board.core.fpu:
        return "no FPU Kconfig: Zephyr's SoC Kconfig for this target does not select CPU_HAS_FPU"
    return "no FPU Kconfig: the core has no FPU"


def _isa_note(board: Board, selects: set[str]) -> str:
    """Zephyr's -mcpu follows the SoC Kconfig: an ARMv8-M core without ARMV8_M_DSP is built +nodsp
    (CMSIS-NN then takes its C path although the silicon may have DSP), likewise without MVE."""
    core = board.core
    dsp_symbol = cores()[core.name].get("zephyr_dsp")
    if core.dsp and dsp_symbol and dsp_symbol not in selects:
        return (
            f"Zephyr's SoC Kconfig selects no {dsp_symbol} here: Zephyr compiles for "
            f"{core.name}+nodsp, so CMSIS-NN runs its C path, not the DSP one"
        )
    if core.mve and "ARMV8_1_M_MVEI" not in selects:
        return (
            "Zephyr's SoC Kconfig selects no ARMV8_1_M_MVEI here: Zephyr compiles without "
            "MVE, so CMSIS-NN does not use Helium"
        )
    return ""


def template_context(
    board: Board, placement: Placement, report: Report, slots: tuple[ModelSlot, ...] = ()
) -> ZephyrContext:
    """The `zephyr` entry of the cookiecutter context for templates/zephyr_app.

    The Kconfig pool defaults are the
    placement's, the sizes model/cmx_model.h holds too (src/cmx_model.h replaces the header's values
    with the Kconfig ones).
    """
    assert board.zephyr is not None, "ZephyrApp.check_board refuses boards without a Zephyr target"
    main = _target_files(board, placement, board.zephyr.file_name, slots)
    qemu_target = _qemu_target(board, placement, main, slots)
    targets = [main] if qemu_target is None or qemu_target is main else [main, qemu_target]
    et_version = report.executorch_version.split("+")[0]
    return {
        "target": main["target"],
        "file_name": main["file_name"],
        "targets": targets,
        "qemu_target": qemu_target["target"] if qemu_target else None,
        "fvp": main["simulation"] == "armfvp",
        "zephyr_revision": ZEPHYR_REVISION,
        "executorch_revision": f"v{et_version}" if et_version else "main",
        "executorch_commit": _executorch_commit(et_version),
        "modules": _modules(main["file_name"]),
        "pte_section": AppKind.pte_section,
        "arena_section": ARENA_SECTION,
        # placement = "slot": what `west build -t run` loads beside the image by default (CMakeLists.txt
        # CMX_SLOT_IMAGES: this app's own model in the first slot), and the FVP's CPU for `--data`.
        "default_slot_images": [{"file": f, "address": a} for f, a in own_images(slots)] if slots else [],
        "fvp_cpu": cpu_instance(board.fvp.model) if board.fvp else "cpu0",
        "kconfig": _kconfig(placement, report),
    }


def _qemu_target(
    board: Board, placement: Placement, main: ZephyrTarget, slots: tuple[ModelSlot, ...]
) -> ZephyrTarget | None:
    """The target `west build -t run` runs under QEMU: the main one when it is QEMU's, else the board's
    QEMU machine's, when the placement maps onto its memory the same way: one CMakeLists/linker
    snippet serves both targets."""
    if main["simulation"] == "qemu":
        return main
    if not board.qemu:
        return None
    file_name = zephyr_boards().get("qemu_machines", {}).get(board.qemu.machine)
    if not file_name or file_name == main["file_name"]:
        return None
    try:
        extra = _target_files(board, placement, file_name, slots)
    except RenderError:
        return None  # the placement does not map onto the QEMU target's memory
    same = (extra["pte"], extra["arena"], extra["slots"]) == (main["pte"], main["arena"], main["slots"])
    return extra if same and not extra["added_nodes"] else None


def _modules(file_name: str) -> list[str]:
    """The Zephyr modules every app needs, then the board target's own."""
    modules = list(zephyr_boards().get("common_modules", []))
    for module in board_info(file_name).get("modules", []):
        if module not in modules:
            modules.append(module)
    return modules


def _executorch_commit(et_version: str) -> str | None:
    """The commit the lowering wheel was built from, when it is the report's version: the exact
    runtime to pair it with."""
    try:
        from executorch.version import __version__ as wheel_version
        from executorch.version import git_version
    except ImportError:
        return None
    return str(git_version) if str(wheel_version).split("+")[0] == et_version else None


def _kconfig(placement: Placement, report: Report) -> Kconfig:
    return {
        # The runner runs in Zephyr's main thread: its stack is the placement's stack.
        "main_stack_size": _round_up(max(placement.stack_bytes, 2048), 8),
        # The ExecuTorch Zephyr PAL allocates with k_malloc: the heap must exist (> 0).
        "heap_mem_pool_size": _round_up(max(placement.heap_bytes, 1024), 8),
        "method_pool_size": placement.method_pool_bytes,
        "temp_pool_size": placement.temp_pool_bytes,
        "method_estimate": report.memory.method_allocator_bytes,
        "temp_estimate": report.memory.temp_allocator_bytes,
    }
