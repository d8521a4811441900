"""Placement of a program's budget (budget.py) on a board's memory, or a refusal naming the shortfall.

Answers "does it fit, and where does it go?" before anything is built: the flash need (runtime +
kernels + .pte), the RAM need (planned buffers + method/temp pools + static data, stack, heap) and
one region for each, chosen by the rules in docs/boards.md:

- code and the vector table go in the board's boot region;
- the .pte is read in place from the boot region when it fits (no copy), else from another region
  that can be loaded at flash/load time (other flash, then DDR, then SRAM);
- the arenas (planned buffers, method pool, temp pool) go in the fastest RAM that still has room:
  DTCM, then SRAM, then DDR (board file order within one kind);
- .data/.bss, stack and heap go in the board's RAM region.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from cmx_gen.common.errors import FitError, Shortfall, TargetError
from cmx_gen.common.format import size, table
from cmx_gen.fit.boards import Board, MemoryRegion, load_boards
from cmx_gen.fit.budget import ArenaLayout, Budget, ModelPools, arena_pools, budget, image_budget, kernel_sizes
from cmx_gen.fit.placement_json import LayoutJson, PlacementJson, RegionUseJson, pools_json
from cmx_gen.program.report import Report

_ARENA_KINDS = {"dtcm": 0, "sram": 1, "ddr": 2}
# Where a .pte that does not fit the boot region goes: keep fast RAM for the arenas.
_PTE_KINDS = {"flash": 0, "ddr": 1, "sram": 2, "dtcm": 3, "itcm": 4}


@dataclass(frozen=True)
class RegionUse:
    region: str
    kind: str
    used: int
    size: int
    items: dict[str, int] = field(default_factory=dict)
    base: int = 0

    @property
    def free(self) -> int:
        return self.size - self.used

    @property
    def percent(self) -> float:
        return 100.0 * self.used / self.size

    def to_dict(self) -> RegionUseJson:
        return {
            "region": self.region,
            "kind": self.kind,
            "used": self.used,
            "size": self.size,
            "items": dict(self.items),
            "base": self.base,
            "free": self.free,
            "percent": round(self.percent, 2),
        }


@dataclass(frozen=True)
class Placement:
    board_id: str
    pte_region: str
    pte_in_place: bool
    code_region: str
    data_region: str  # .data/.bss, stack, heap
    arena_region: str  # planned buffers + method pool + temp pool
    stack_bytes: int
    heap_bytes: int
    method_pool_bytes: int
    planned_buffer_sizes: list[int]
    temp_pool_bytes: int
    uses: list[RegionUse]
    isa: str = ""
    pte_bytes: int = 0
    code_bytes: int = 0
    code_estimated: bool = True
    code_items: dict[str, int] = field(default_factory=dict)
    static_ram_bytes: int = 0
    # Several models (empty for one): each model's pools, the layout chosen, the other layout's arena.
    models: list[ModelPools] = field(default_factory=list)
    arena_layout: ArenaLayout | None = None
    other_layout_arena_bytes: int = 0

    @property
    def arena_bytes(self) -> int:
        return sum(self.planned_buffer_sizes) + self.method_pool_bytes + self.temp_pool_bytes

    def use(self, region: str) -> RegionUse:
        return next(u for u in self.uses if u.region == region)

    def decisions(self) -> list[str]:
        """One sentence per placement decision, for people."""
        pte = (
            'model.pte -> a model slot, apart from the image (placement = "slot")'
            if self.pte_bytes == 0
            else f"model.pte ({size(self.pte_bytes)}) -> {self.pte_region}: read in place, no copy"
            if self.pte_in_place
            else f"model.pte ({size(self.pte_bytes)}) -> {self.pte_region}: loaded there at load time "
            f"(does not fit {self.code_region})"
        )
        kernels = len(self.code_items) - 1
        return [
            f"code ({size(self.code_bytes)}: runtime + {kernels} kernel(s)"
            f"{', estimated' if self.code_estimated else ''}) -> {self.code_region}",
            pte,
            f"arenas ({size(self.arena_bytes)}: planned {self.planned_buffer_sizes} + method pool "
            f"{self.method_pool_bytes:,} + temp pool {self.temp_pool_bytes:,}) -> {self.arena_region}",
            f".data/.bss ({size(self.static_ram_bytes)}), stack {size(self.stack_bytes)}, "
            f"heap {size(self.heap_bytes)} -> {self.data_region}",
        ] + self._layout_decisions()

    def _layout_decisions(self) -> list[str]:
        if not self.models:
            return []
        other = "separate" if self.arena_layout == "shared" else "shared"
        rows = [
            f"  {p.name}: method pool {p.method_pool_bytes:,} + planned {p.planned_bytes:,} + temp "
            f"{p.temp_pool_bytes:,}, program {size(p.pte_bytes)}"
            for p in self.models
        ]
        why = (
            "models run one after another: planned buffers and temp pool are the largest model's"
            if self.arena_layout == "shared"
            else "models may run at the same time: each keeps its own planned buffers and temp pool"
        )
        delta = self.other_layout_arena_bytes - self.arena_bytes
        return [
            f"arena layout: {self.arena_layout} ({why}); {other} would be "
            f"{size(self.other_layout_arena_bytes)} ({'+' if delta >= 0 else '-'}{abs(delta):,} B)",
            *rows,
        ]

    def to_dict(self) -> PlacementJson:
        layouts: LayoutJson = {}
        if self.models:  # a one-model app's placement.json stays as it was
            layouts = {
                "models": [pools_json(p) for p in self.models],
                "arena_layout": self.arena_layout,
                "other_layout_arena_bytes": self.other_layout_arena_bytes,
            }
        return {
            "board_id": self.board_id,
            "pte_region": self.pte_region,
            "pte_in_place": self.pte_in_place,
            "code_region": self.code_region,
            "data_region": self.data_region,
            "arena_region": self.arena_region,
            "stack_bytes": self.stack_bytes,
            "heap_bytes": self.heap_bytes,
            "method_pool_bytes": self.method_pool_bytes,
            "planned_buffer_sizes": list(self.planned_buffer_sizes),
            "temp_pool_bytes": self.temp_pool_bytes,
            "uses": [u.to_dict() for u in self.uses],
            "isa": self.isa,
            "pte_bytes": self.pte_bytes,
            "code_bytes": self.code_bytes,
            "code_estimated": self.code_estimated,
            "code_items": dict(self.code_items),
            "static_ram_bytes": self.static_ram_bytes,
            **layouts,
            "arena_bytes": self.arena_bytes,
            "decisions": self.decisions(),
        }

    @classmethod
    def from_dict(cls, data: PlacementJson) -> Placement:
        """A placement as to_dict() wrote it (an app's model/placement.json); derived keys are dropped,
        and a key an older cmx-gen did not write takes its default."""
        return cls(
            board_id=data["board_id"],
            pte_region=data["pte_region"],
            pte_in_place=data["pte_in_place"],
            code_region=data["code_region"],
            data_region=data["data_region"],
            arena_region=data["arena_region"],
            stack_bytes=data["stack_bytes"],
            heap_bytes=data["heap_bytes"],
            method_pool_bytes=data["method_pool_bytes"],
            planned_buffer_sizes=data["planned_buffer_sizes"],
            temp_pool_bytes=data["temp_pool_bytes"],
            uses=[
                RegionUse(u["region"], u["kind"], u["used"], u["size"], u.get("items", {}), u.get("base", 0))
                for u in data["uses"]
            ],
            isa=data.get("isa", ""),
            pte_bytes=data.get("pte_bytes", 0),
            code_bytes=data.get("code_bytes", 0),
            code_estimated=data.get("code_estimated", True),
            code_items=data.get("code_items", {}),
            static_ram_bytes=data.get("static_ram_bytes", 0),
            models=[ModelPools(**m) for m in data.get("models", [])],
            arena_layout=data.get("arena_layout"),
            other_layout_arena_bytes=data.get("other_layout_arena_bytes", 0),
        )

    def to_text(self) -> str:
        return usage_table(self.uses) + "\n\nplacement\n" + "\n".join(f"  {d}" for d in self.decisions())


def usage_table(uses: list[RegionUse]) -> str:
    rows = [("region", "kind", "base", "used", "size", "use %", "contents")]
    for u in uses:
        contents = ", ".join(f"{k} {size(v)}" for k, v in u.items.items()) or "-"
        flag = "  ** OVER **" if u.free < 0 else ""
        rows.append(
            (u.region, u.kind, f"0x{u.base:08x}", size(u.used), size(u.size), f"{u.percent:.1f}", contents + flag)
        )
    return table(rows, right={3, 4, 5})


# The vector table stays in the boot region when the code goes elsewhere (startup.c's .vectors:
# 16 system + up to 480 external handlers, 4 bytes each, rounded up).
VECTOR_TABLE_BYTES = 2048


def _uses(board: Board, b: Budget, code: MemoryRegion, pte: MemoryRegion, arena: MemoryRegion) -> list[RegionUse]:
    items: dict[str, dict[str, int]] = {r.name: {} for r in board.memory}
    items[code.name]["code"] = b.code_bytes
    if code.name != board.boot_region:
        items[board.boot_region]["vector table"] = VECTOR_TABLE_BYTES
    if b.pte_bytes:  # 0: in a model slot
        items[pte.name]["model.pte"] = b.pte_bytes
    if b.reference_bytes:
        items[pte.name]["reference data"] = b.reference_bytes
    items[arena.name]["planned buffers"] = sum(b.planned_buffer_sizes)
    items[arena.name]["method pool"] = b.method_pool_bytes
    items[arena.name]["temp pool"] = b.temp_pool_bytes
    items[board.ram_region][".data/.bss"] = b.static_ram_bytes
    items[board.ram_region]["stack"] = b.stack_bytes
    items[board.ram_region]["heap"] = b.heap_bytes
    return [RegionUse(r.name, r.kind, sum(items[r.name].values()), r.size, items[r.name], r.base) for r in board.memory]


# Where code runs best once it has left the boot region: tightly coupled or on-chip RAM, then
# flash, then external DDR.
_CODE_KINDS = {"itcm": 0, "sram": 1, "flash": 2, "ddr": 3}


def _candidates(board: Board) -> tuple[list[MemoryRegion], list[MemoryRegion], list[MemoryRegion]]:
    boot = board.region(board.boot_region)
    others = [r for r in board.memory if r.loadable and r.name != boot.name]
    pte = [boot] + sorted(others, key=lambda r: _PTE_KINDS[r.kind])  # sorted() is stable: file order
    arena = sorted((r for r in board.memory if r.kind in _ARENA_KINDS), key=lambda r: _ARENA_KINDS[r.kind])
    # Code runs from the boot region when it fits; else from any other region the loader writes
    # and the core executes from (a large fp32 fallback on Corstone-300: SRAM, then DDR).
    code = [boot] + sorted((r for r in others if r.executable), key=lambda r: _CODE_KINDS.get(r.kind, 9))
    return code, pte, arena


def _search(board: Board, b: Budget) -> tuple[Placement | None, list[RegionUse]]:
    """The first fitting (code, pte, arena region) in preference order, else the closest miss."""
    code_cands, pte_cands, arena_cands = _candidates(board)
    best_miss: tuple[int, list[RegionUse]] | None = None
    for code, pte, arena in ((c, p, a) for c in code_cands for p in pte_cands for a in arena_cands):
        uses = _uses(board, b, code, pte, arena)
        short = sum(max(0, -u.free) for u in uses)
        if short == 0:
            return Placement(
                board_id=board.id,
                pte_region=pte.name,
                pte_in_place=pte.name == board.boot_region or pte.kind == "flash",
                code_region=code.name,
                data_region=board.ram_region,
                arena_region=arena.name,
                stack_bytes=b.stack_bytes,
                heap_bytes=b.heap_bytes,
                method_pool_bytes=b.method_pool_bytes,
                planned_buffer_sizes=b.planned_buffer_sizes,
                temp_pool_bytes=b.temp_pool_bytes,
                uses=uses,
                isa=b.isa,
                pte_bytes=b.pte_bytes,
                code_bytes=b.code_bytes,
                code_estimated=b.code_estimated,
                code_items={c.name: c.bytes for c in b.code},
                static_ram_bytes=b.static_ram_bytes,
            ), uses
        if best_miss is None or short < best_miss[0]:
            best_miss = (short, uses)
    assert best_miss is not None  # the boot region is always a pte candidate; arena candidates exist
    return None, best_miss[1]


def _shortfall(use: RegionUse) -> Shortfall:
    return Shortfall(
        region=use.region, kind=use.kind, size=use.size, need=use.used, short_bytes=-use.free, items=dict(use.items)
    )


def check_diagnostic_fit(placement: Placement, kind: str, instructions: int) -> None:
    """Refuse a profile/trace image whose extra code or counters do not fit beside the app
    (kernel_sizes.yaml `diagnostics`), naming the bytes; the trace itself streams, it needs no buffer."""
    extra = kernel_sizes()["diagnostics"][kind]
    free = {use.region: use.free for use in placement.uses}
    needs = [
        (placement.code_region, int(extra["code"]), "code"),
        (
            placement.data_region,
            int(extra["ram_per_instruction"]) * instructions,
            f"counters ({instructions} instructions x {extra['ram_per_instruction']} B)",
        ),
    ]
    for region, need, what in needs:
        if need > free.get(region, 0):
            raise FitError(
                f"the {kind} image needs {size(need)} more {what} in {region}, which has {size(free.get(region, 0))} free",
                "run it on a board with more memory (same core), or use the other diagnostic (--trace streams, "
                "it needs no buffer)",
            )


def check_isa(report: Report, board: Board) -> None:
    """A .pte runs only on the ISA it was lowered for: a DSP-lowered program corrupts memory on an
    M55 and an MVE-lowered one fails on a DSP core, so require an exact match (SCALAR included)."""
    isa = report.target.isa
    if isa != board.core.isa:
        core = report.target.core or "?"
        raise TargetError(
            f"the program was lowered for {core} ({isa}) but {board.id} has a {board.core.name} ({board.core.isa})",
            f"lower again with --target {board.core.lower_target}, or pick a board with ISA {isa} "
            f"(`cmx-gen boards --isa {isa}`)",
        )


def fits_on(report: Report, exclude: str = "") -> list[str]:
    """Ids of boards in the database with the program's ISA where it fits."""
    return _boards_fitting(budget(report), exclude)


def _boards_fitting(b: Budget, exclude: str) -> list[str]:
    return [
        board.id
        for board in load_boards()
        if board.id != exclude and board.core.isa == b.isa and _search(board, b)[0] is not None
    ]


def plan(report: Report, board: Board, in_slot: bool = False) -> Placement:
    """Place one program on the board (place() with one model), or raise FitError."""
    return place({report.model.source: report}, board, in_slot=in_slot)


def place(
    reports: Mapping[str, Report], board: Board, layout: ArenaLayout = "shared", in_slot: bool = False
) -> Placement:
    """Place the image's programs (one or several, by model name) with the arena `layout`, or raise
    FitError naming each short region and by how much; the placement also records each model's pools
    and what the other layout would need. `in_slot`: the program and its reference live in a model
    slot, not in the image (placement = "slot"; the board given has its slots taken off already)."""
    b, pools = image_budget(reports, layout)
    if in_slot:
        b = replace(b, pte_bytes=0, reference_bytes=0)
    for report in reports.values():
        check_isa(report, board)
    placement, closest = _search(board, b)
    other_planned, other_temp = arena_pools(pools, "separate" if layout == "shared" else "shared")
    other = sum(other_planned) + b.method_pool_bytes + other_temp
    if placement is None:
        raise _no_fit(len(reports), board, b, closest, layout, other)
    if len(pools) == 1:  # one model has no arena layout to choose: its placement records none
        return placement
    return replace(placement, models=pools, arena_layout=layout, other_layout_arena_bytes=other)


def _no_fit(count: int, board: Board, b: Budget, closest: list[RegionUse], layout: ArenaLayout, other: int) -> FitError:
    """What does not fit where, and the fix: the boards it fits on, else what to change."""
    short = [u for u in closest if u.free < 0]
    detail = "; ".join(
        f"region {u.region!r} ({u.kind}, {size(u.size)}) needs {size(u.used)} "
        f"[{', '.join(f'{k} {size(v)}' for k, v in u.items.items())}]: short by {-u.free:,} bytes"
        for u in short
    )
    others = _boards_fitting(b, exclude=board.id)
    if layout == "separate" and other < b.arena_bytes:
        hint = "models that run one after another can share their arena: drop separate_arenas"
    elif others:
        hint = f"it fits on: {', '.join(others)}"
    elif count > 1:
        hint = "take a model out of the image, shrink one, or pick a board with more memory"
    else:
        hint = f"no {b.isa} board in the database fits it; shrink the model or add a board (docs/boards.md)"
    what = "the model" if count == 1 else f"the {count} models ({layout} arenas)"
    return FitError(
        f"{what} does not fit {board.id}: {detail}" if count == 1 else f"{what} do not fit {board.id}: {detail}",
        hint,
        board_id=board.id,
        shortfalls=[_shortfall(u) for u in short],
        fits_on=others,
        uses=closest,
    )
