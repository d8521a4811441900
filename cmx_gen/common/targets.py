"""The Cortex-M cores (data/cores.yaml) and those cmx-gen lowers for (`--target`). Its own module,
free of torch, so the CLI, the board database, the Zephyr checks and the lowering step share one
table and `cmx-gen --help` stays fast."""

from __future__ import annotations

import functools
import re
from typing import Any, Literal

import yaml

from cmx_gen.common.paths import DATA_DIR

# The CMSIS-NN code path a core runs (data/cores.yaml `isa`): Helium, the DSP extension, or plain C.
Isa = Literal["MVE", "DSP", "SCALAR"]


@functools.lru_cache(maxsize=1)
def _cores_file() -> dict[str, Any]:
    return yaml.safe_load((DATA_DIR / "cores.yaml").read_text())


def cores() -> dict[str, dict[str, Any]]:
    """name -> {isa, lower, optional, gcc_stand_in, zephyr_dsp}, in the file's order."""
    return _cores_file()["cores"]


def isa_target(isa: str) -> str:
    """The core cmx-gen lowers for when a board's core runs code path `isa` (MVE, DSP, SCALAR)."""
    return _cores_file()["isa_targets"][isa]


def arch_macros() -> dict[str, list[str]]:
    """Architecture -> the ACLE macros a compiler defines for it, any one (armv7e-m: __ARM_ARCH_7EM__)."""
    return {arch: list(macros) for arch, macros in _cores_file()["arch_macros"].items()}


def optional(core: str, option: str) -> bool:
    """A board may leave `option` (mve, dsp, fpu) out of `core`."""
    return option in cores()[core].get("optional", [])


TARGETS = tuple(name for name, core in cores().items() if core.get("lower"))


def canonical_core(name: str) -> str:
    """`m55`, `M55`, `cm55`, `Cortex-M55` -> `cortex-m55`; `m0+` -> `cortex-m0plus`. Names it does
    not recognise come back lower-cased, for the caller's own "unknown" message."""
    text = name.strip().lower().replace("_", "-").replace("+", "plus")
    match = re.fullmatch(r"(?:arm-)?(?:cortex-?)?c?(m\d+(?:plus|p)?)", text)
    return f"cortex-{match.group(1)}" if match else text
