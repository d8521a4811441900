"""Zephyr's view of each board target cmx-gen knows (cmx_gen/data/zephyr/boards.yaml: devicetree
labels, SoC Kconfig selects; see the file's header), and how a board file must agree with it."""

from __future__ import annotations

import functools

import yaml

from cmx_gen.common.paths import DATA_DIR
from cmx_gen.fit.boards import Board

LAYOUT_FILE = DATA_DIR / "zephyr" / "boards.yaml"


@functools.lru_cache(maxsize=1)
def zephyr_boards() -> dict:
    """cmx_gen/data/zephyr/boards.yaml, parsed once."""
    return yaml.safe_load(LAYOUT_FILE.read_text())


def zephyr_fpu(board: Board, info: dict | None) -> bool:
    """Whether Zephyr builds for the board's FPU: the core has one and the SoC's Kconfig (`info`, the
    boards.yaml entry of its target) selects CPU_HAS_FPU; without Zephyr data, whether the core has one."""
    has = board.core.fpu is not None
    return has if info is None else has and "CPU_HAS_FPU" in info.get("soc_selects", [])


def zephyr_layout(board: Board) -> dict | None:
    """The layout data entry of the board's Zephyr target, None without a target or data for it."""
    info = zephyr_boards().get(board.zephyr.file_name) if board.zephyr else None
    return info if isinstance(info, dict) and "target" in info else None


def zephyr_layout_problems(board: Board) -> list[str]:
    """How a board file disagrees with the Zephyr layout data of its `zephyr.target` (devicetree
    labels of its memory regions, the SoC's core): ZephyrApp.check_board refuses such a board before
    anything slow, and tests/app/kinds/zephyr holds every bundled board to it."""
    info = zephyr_layout(board)
    if board.zephyr is None or info is None:
        return []
    target, file_name = board.zephyr.target, board.zephyr.file_name
    problems = []
    if info["target"] != target:
        problems.append(f"field zephyr.target: the layout data for {file_name} is for {info['target']!r}")
    nodes = info.get("nodes") or {}
    for i, region in enumerate(board.memory):
        if region.dt_node and region.dt_node not in nodes:
            problems.append(
                f"field memory[{i}].dt_node: {target} has no devicetree node &{region.dt_node} "
                f"(it has: {', '.join(nodes) or 'none'})"
            )
    cpu = "CPU_" + board.core.name.upper().replace("-", "_")
    selects = info.get("soc_selects") or []
    if selects and cpu not in selects:
        zephyr_cpu = next((s for s in selects if s.startswith("CPU_CORTEX_")), "another core")
        problems.append(f"field core.name: {board.core.name} is not the core of Zephyr's {target} ({zephyr_cpu})")
    return problems
