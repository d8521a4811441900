"""placement.json declared: a Placement (memory.py) as an app's model/placement.json holds it, and
as `check --json` prints it; the HTML page and `run` read it back (Placement.from_dict)."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from cmx_gen.fit.budget import ArenaLayout, ModelPools


class RegionUseJson(TypedDict):
    region: str
    kind: str
    used: int
    size: int
    items: dict[str, int]
    base: int
    free: int
    percent: float


class ModelPoolsJson(TypedDict):
    name: str
    method_pool_bytes: int
    planned_buffer_sizes: list[int]
    temp_pool_bytes: int
    pte_bytes: int


class LayoutJson(TypedDict, total=False):
    """An image of several models' pools and arena layout (a one-model app's placement.json has none)."""

    models: list[ModelPoolsJson]
    arena_layout: ArenaLayout | None
    other_layout_arena_bytes: int


class PlacementJson(LayoutJson):
    """A Placement as placement.json holds it: its fields (the region uses with their free bytes and
    use), then the arena's bytes and the decisions in words."""

    board_id: str
    pte_region: str
    pte_in_place: bool
    code_region: str
    data_region: str
    arena_region: str
    stack_bytes: int
    heap_bytes: int
    method_pool_bytes: int
    planned_buffer_sizes: list[int]
    temp_pool_bytes: int
    uses: list[RegionUseJson]
    isa: NotRequired[str]
    pte_bytes: NotRequired[int]
    code_bytes: NotRequired[int]
    code_estimated: NotRequired[bool]
    code_items: NotRequired[dict[str, int]]
    static_ram_bytes: NotRequired[int]
    arena_bytes: int
    decisions: list[str]


def pools_json(pools: ModelPools) -> ModelPoolsJson:
    return {
        "name": pools.name,
        "method_pool_bytes": pools.method_pool_bytes,
        "planned_buffer_sizes": list(pools.planned_buffer_sizes),
        "temp_pool_bytes": pools.temp_pool_bytes,
        "pte_bytes": pools.pte_bytes,
    }
