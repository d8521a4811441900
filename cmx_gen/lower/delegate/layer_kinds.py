"""The backend's layer kinds, one record each (data/backend_layers.yaml): the code a plan record
carries, the function the runtime calls and whose code it is, what it links.

The C side is generated from the same records, so that adding a kind is one record and its kernel,
not a kind written into parallel switches kept equal by hand:

    kernels/backend/cmx_plan_kinds.h         the op codes, and X-macros over every kind and over
                                             the kinds compiled in, that the plan check, the layer
                                             loop and the backend expand into their one dispatch
    kernels/backend/cmx_backend_layers.cmake what each kind links: CMSIS-NN folders, kernels/nn/ files
    kernels/backend/cmx_plan_records.h       each kind's C record, the runtime reads in place, from its
                                             fields (plan_fields.py)

Regenerate them with `python -m cmx_gen.lower.delegate.layer_kinds`; tests/lower/test_layer_kinds.py
fails when they are stale.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal, cast

import yaml

from cmx_gen.common.paths import DATA_DIR, KERNELS_DIR
from cmx_gen.lower.delegate import plan_fields

RECORDS = DATA_DIR / "backend_layers.yaml"
SCHEMA = "cmx-gen/backend-layers/2"
Whose = Literal["CMSIS-NN", "cmx-gen", "libc"]
MAX_CODE = 63  # the runtime's kind mask (cmx_backend_kinds, a slot's kinds) is 64 bits, bit k for code k


@dataclass(frozen=True)
class LayerKind:
    """One layer kind of the backend."""

    name: str
    code: int  # the record's `op` word
    calls: str  # the function the runtime calls for it (the report's and the profile's label)
    whose: Whose  # whose code that is
    cmsis_nn: tuple[str, ...] = ()  # cortex_m kernels whose CMSIS-NN folders it calls (cmsis_nn_folders.cmake)
    own: tuple[str, ...] = ()  # the kernels/nn/ sources it compiles
    always: bool = False  # no kernel of its own: compiled into every backend

    @property
    def macro(self) -> str:
        """Its C name: CMX_OP_<MACRO>, CMX_BACKEND_<MACRO>."""
        return self.name.upper()

    @property
    def label(self) -> str:
        """How the report and the profile name what it runs: `cmx_conv_row_s8 (cmx-gen)`."""
        return f"{self.calls} ({self.whose})"


def parse(text: str) -> tuple[LayerKind, ...]:
    """The records of a backend_layers.yaml text, in code order; a malformed one raises ValueError."""
    data = yaml.safe_load(text)
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise ValueError(f"backend layer kinds: not a {SCHEMA} file")
    out = []
    for name, raw in cast(Mapping[str, Mapping[str, object]], data["kinds"]).items():
        whose = raw.get("from")
        if whose not in ("CMSIS-NN", "cmx-gen", "libc"):
            raise ValueError(f"layer kind {name}: from must be CMSIS-NN, cmx-gen or libc, not {whose!r}")
        kind = LayerKind(
            name=name,
            code=int(cast(int, raw["code"])),
            calls=str(raw["calls"]),
            whose=whose,
            cmsis_nn=tuple(cast(list[str], raw.get("cmsis_nn", []))),
            own=tuple(cast(list[str], raw.get("own", []))),
            always=bool(raw.get("always", False)),
        )
        if not 1 <= kind.code <= MAX_CODE:
            raise ValueError(f"layer kind {name}: code {kind.code} outside 1..{MAX_CODE}")
        out.append(kind)
    codes = [k.code for k in out]
    if len(set(codes)) != len(codes):
        raise ValueError("backend layer kinds: two kinds share a code")
    return tuple(sorted(out, key=lambda k: k.code))


@cache
def kinds() -> dict[str, LayerKind]:
    """Every layer kind by name, in code order."""
    return {k.name: k for k in parse(RECORDS.read_text())}


def _banner(comment: Callable[[str], str], source: str = "cmx_gen/data/backend_layers.yaml") -> str:
    return comment(
        f"Generated from {source} by `python -m cmx_gen.lower.delegate.layer_kinds`:\n"
        "edit the records there, not this file (tests/lower/test_layer_kinds.py fails when it is stale)."
    )


def _c_comment(text: str) -> str:
    return "/* " + text.replace("\n", "\n * ") + " */"


def c_header(records: tuple[LayerKind, ...]) -> str:
    """kernels/backend/cmx_plan_kinds.h: the op codes; CMX_IF_<KIND>(...), its arguments when the
    kind is compiled in (CMX_BACKEND_<KIND>, from the app's model/cmx_ops.cmake), else nothing;
    CMX_PLAN_KINDS(X) over every kind and CMX_PLAN_KINDS_IN(X) over those compiled in, X(KIND, kind)."""
    lines = [_banner(_c_comment), "#pragma once", ""]
    lines += ["enum cmx_plan_op {", *(f"  CMX_OP_{k.macro} = {k.code}," for k in records), "};", ""]
    for k in records:
        if k.always:
            lines += [f"#define CMX_IF_{k.macro}(...) __VA_ARGS__", ""]
        else:
            lines += [f"#ifdef CMX_BACKEND_{k.macro}", f"#define CMX_IF_{k.macro}(...) __VA_ARGS__", "#else"]
            lines += [f"#define CMX_IF_{k.macro}(...)", "#endif", ""]
    lines += ["#define CMX_PLAN_KINDS(X) \\", *(f"  X({k.macro}, {k.name}) \\" for k in records), "", ""]
    lines += ["#define CMX_PLAN_KINDS_IN(X) \\", *(f"  CMX_IF_{k.macro}(X({k.macro}, {k.name})) \\" for k in records)]
    return "\n".join(lines) + "\n\n"


def cmake_lists(records: tuple[LayerKind, ...]) -> str:
    """kernels/backend/cmx_backend_layers.cmake: CMX_NN_LAYER_<kind> (the cortex_m kernels whose
    CMSIS-NN folders it calls) and CMX_OWN_LAYER_<kind> (its kernels/nn/ sources), read by
    kernels/CMakeLists.txt for the kinds an app's plans use."""
    lines = [_banner(lambda t: "# " + t.replace("\n", "\n# ")), ""]
    lines += [f"set(CMX_NN_LAYER_{k.name} {' '.join(k.cmsis_nn)})" for k in records if k.cmsis_nn]
    lines += [f"set(CMX_OWN_LAYER_{k.name} {' '.join(k.own)})" for k in records if k.own]
    return "\n".join(lines) + "\n"


def c_records(_records: tuple[LayerKind, ...]) -> str:
    """kernels/backend/cmx_plan_records.h: every kind's C record, cmx_layer_<kind>, from its fields
    (plan_fields.RECORDS, SAME), every member of a C type on one line; needing arm_nn_types.h and
    cmx_nn.h for the CMSIS-NN and cmx-gen structs stored in them."""
    lines = [_banner(_c_comment, "cmx_gen/lower/delegate/plan_fields.py"), "#pragma once", ""]
    lines += ['#include "arm_nn_types.h"', '#include "cmx_nn.h"', ""]
    for kind, record in plan_fields.RECORDS.items():
        lines += [_c_comment(record.doc)] if record.doc else []
        lines += ["typedef struct {", "  cmx_layer_head head;"]
        lines += [f"  {m.c_type} {', '.join(m.names)};" for m in record.members]
        lines += [f"}} cmx_layer_{kind};", ""]
    for kind, (same, doc) in plan_fields.SAME.items():
        lines += [_c_comment(doc), f"typedef cmx_layer_{same} cmx_layer_{kind};", ""]
    return "\n".join(lines)


GENERATED: dict[str, Callable[[tuple[LayerKind, ...]], str]] = {
    "backend/cmx_plan_kinds.h": c_header,
    "backend/cmx_backend_layers.cmake": cmake_lists,
    "backend/cmx_plan_records.h": c_records,
}


def write(kernels: Path = KERNELS_DIR) -> list[Path]:
    """Regenerate the C and CMake files under `kernels` from the records; the paths written."""
    records = tuple(kinds().values())
    out = []
    for relative, render in GENERATED.items():
        path = kernels / relative
        path.write_text(render(records))
        out.append(path)
    return out


if __name__ == "__main__":
    for written in write():
        print(f"wrote {written}", file=sys.stderr)
