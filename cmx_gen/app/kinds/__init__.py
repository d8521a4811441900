"""App kinds, one class each over kinds/base.AppKind, registered in one table as device/runners/ are."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cmx_gen.app.kinds.baremetal import BareMetalApp
from cmx_gen.app.kinds.base import AppKind, Built
from cmx_gen.app.kinds.package import CMakePackage, ZephyrModule
from cmx_gen.app.kinds.zephyr import ZephyrApp
from cmx_gen.common.errors import RenderError

if TYPE_CHECKING:
    from cmx_gen.app.folder import AppFolder

APP_KINDS: dict[str, AppKind] = {
    kind.name: kind for kind in (BareMetalApp(), ZephyrApp(), CMakePackage(), ZephyrModule())
}


def register(kind: AppKind) -> None:
    """Add an app kind (a plug-in, or a test's)."""
    APP_KINDS[kind.name] = kind


def app_kind(name: str) -> AppKind:
    """The kind a cmx.toml's `[target] rtos` (or `--rtos`) names."""
    if name not in APP_KINDS:
        raise RenderError(f"no app kind {name!r} (cmx.toml [target] rtos)", f"use one of {', '.join(APP_KINDS)}")
    return APP_KINDS[name]


def kind_of(app: AppFolder) -> AppKind:
    """How this app is built, run, flashed and checked: the kind its cmx.toml names."""
    return app_kind(app.kind)


__all__ = ["APP_KINDS", "AppKind", "Built", "app_kind", "kind_of", "register"]
