"""Zephyr modules offline: a module's zephyr/module.yml read as Zephyr's zephyr_module.py reads it,
and the modules an application's west.yml lists that are checked out in its workspace (so their
Kconfig joins the application's, as Zephyr's Kconfig.modules makes it)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from cmx_gen.app.kinds.zephyr.checks.result import CheckResult, one_file

MODULE_FILE = "zephyr/module.yml"
# What Zephyr's module schema (scripts/zephyr_module.py) allows at the top and under `build:`.
TOP_KEYS = {"name", "build", "samples", "tests", "boards", "blobs", "security", "package-managers"}
BUILD_KEYS = {
    "cmake",
    "kconfig",
    "cmake-ext",
    "kconfig-ext",
    "sysbuild-cmake",
    "sysbuild-kconfig",
    "depends",
    "settings",
}


@dataclass(frozen=True)
class Module:
    folder: Path
    name: str
    cmake: Path | None  # the folder Zephyr add_subdirectory()s
    kconfig: Path | None  # the Kconfig file Zephyr sources


def read_module(folder: Path) -> Module:
    """`folder`'s module.yml; ValueError names what is wrong with it."""
    data = yaml.safe_load((folder / MODULE_FILE).read_text()) or {}
    if not isinstance(data, dict):
        raise ValueError("not a mapping")
    unknown = sorted(set(data) - TOP_KEYS)
    if unknown:
        raise ValueError(f"unknown key(s) {', '.join(unknown)} (Zephyr's module schema)")
    name = str(data.get("name") or folder.name)
    if not re.fullmatch(r"[A-Za-z0-9_-]+", name):
        raise ValueError(f"name {name!r} is not a module name (letters, digits, '_' and '-')")
    build = data.get("build") or {}
    unknown = sorted(set(build) - BUILD_KEYS)
    if unknown:
        raise ValueError(f"unknown build key(s) {', '.join(unknown)}")
    # Zephyr's defaults when module.yml names none: zephyr/CMakeLists.txt and zephyr/Kconfig, if there
    cmake = folder / str(build.get("cmake", "zephyr"))
    kconfig = folder / str(build.get("kconfig", "zephyr/Kconfig"))
    return Module(
        folder,
        name,
        cmake if "cmake" in build or (cmake / "CMakeLists.txt").is_file() else None,
        kconfig if "kconfig" in build or kconfig.is_file() else None,
    )


def workspace_modules(app: Path) -> list[Module]:
    """The modules west.yml lists that are checked out in the app's workspace (its parent folder,
    west's topdir): the ones offline checks can read. Zephyr's own and ExecuTorch are not here."""
    try:
        data = yaml.safe_load((app / "west.yml").read_text()) or {}
        projects = (data.get("manifest") or {}).get("projects") or []
    except (OSError, yaml.YAMLError, AttributeError):
        return []  # the west check reports an unreadable manifest
    found = []
    for project in projects:
        if not isinstance(project, dict):
            continue
        folder = app.parent / str(project.get("path") or project.get("name"))
        if (folder / MODULE_FILE).is_file():
            try:
                found.append(read_module(folder))
            except (ValueError, yaml.YAMLError):
                continue  # check_module reports it
    return found


def check_module(folder: Path) -> CheckResult:
    """module.yml as Zephyr reads it: known keys, a module name, and the CMake folder and Kconfig
    file it names present."""
    result, path, name = one_file("module", folder, MODULE_FILE)
    if not path.is_file():
        result.fail(name, "missing")
        return result
    try:
        module = read_module(folder)
    except (ValueError, yaml.YAMLError) as exc:
        result.fail(name, " ".join(str(exc).split()))
        return result
    if module.cmake is not None and not (module.cmake / "CMakeLists.txt").is_file():
        result.fail(name, f"build: cmake: {module.cmake.relative_to(folder)} has no CMakeLists.txt")
    if module.kconfig is not None and not module.kconfig.is_file():
        result.fail(name, f"build: kconfig: {module.kconfig.relative_to(folder)} is missing")
    return result
