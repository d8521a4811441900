"""The `zephyr` entry of the template context, declared: what templates/zephyr_app reads of each
board target (its overlay, where the program and the pools go) and of the app (context.py makes it)."""

from __future__ import annotations

from typing import Literal, TypedDict


class Place(TypedDict):
    """Where the program or the pools go: their usual section, or a linker region (`where: region`)."""

    where: Literal["rodata", "data", "bss", "region"]
    region: str | None


class AddedNode(TypedDict):
    """A memory node the overlay adds for a board region the devicetree does not describe."""

    label: str
    base: int
    size: int
    region: str
    node: str


class RegionProp(TypedDict):
    """An existing devicetree node the overlay gives a `zephyr,memory-region`."""

    label: str
    region: str


class PartitionNode(TypedDict):
    label: str
    node: str
    base: int
    size: int


class Partition(TypedDict):
    name: str
    label: str
    offset: int
    size: int


class PartitionGroup(TypedDict):
    """A `partitions` node: in the flash node `parent`, else in a memory `node` of its own."""

    parent: str | None
    node: PartitionNode | None
    region: str
    partitions: list[Partition]


class ZephyrTarget(TypedDict):
    """One Zephyr board target's .conf, .overlay and linker placement."""

    target: str
    file_name: str
    simulation: str
    soc_selects: list[str]
    fpu: bool
    fpu_note: str
    isa_note: str
    overlay: bool
    added_nodes: list[AddedNode]
    region_props: list[RegionProp]
    chosen: dict[str, str]
    pte: Place
    arena: Place
    slots: list[PartitionGroup]


class SlotImage(TypedDict):
    file: str
    address: int


class Kconfig(TypedDict):
    """The prj.conf sizes: the runner's stack and heap, the pools and what the program estimates."""

    main_stack_size: int
    heap_mem_pool_size: int
    method_pool_size: int
    temp_pool_size: int
    method_estimate: int
    temp_estimate: int


class ZephyrContext(TypedDict):
    target: str
    file_name: str
    targets: list[ZephyrTarget]
    qemu_target: str | None
    fvp: bool
    zephyr_revision: str
    executorch_revision: str
    executorch_commit: str | None
    modules: list[str]
    pte_section: str
    arena_section: str
    default_slot_images: list[SlotImage]
    fvp_cpu: str
    kconfig: Kconfig
