"""App kinds, one class each over apps/base.AppKind, registered in one table as runners/ are."""

from __future__ import annotations

from cmx_gen.app.kinds.base import AppKind, Built
from cmx_gen.app.kinds.baremetal import BareMetalApp
from cmx_gen.app.kinds.zephyr import ZephyrApp
from cmx_gen.common.errors import RenderError

APP_KINDS: dict[str, AppKind] = {kind.name: kind for kind in (BareMetalApp(), ZephyrApp())}


def register(kind: AppKind) -> None:
    """Add an app kind (a plug-in, or a test's)."""
    APP_KINDS[kind.name] = kind


def app_kind(name: str) -> AppKind:
    if name not in APP_KINDS:
        raise RenderError(f"no app kind {name!r}", f"use one of {', '.join(APP_KINDS)}")
    return APP_KINDS[name]


__all__ = ["APP_KINDS", "AppKind", "Built", "app_kind", "register"]
