"""The text of the files cmx-gen writes into an app's model/ folder (cmx_model.h, cmx_model_io.c,
model_pte.S, cmx_models.h, cmx_shared_pools.c, cmx_models.cmake, cmx_ops.cmake, cmx_kernels.cpp) is
Jinja in templates/common/model/, like the rest of the app's; model_files.py, shared_files.py and
codegen.py compute the values."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable
from typing import Any

import jinja2

from cmx_gen.common.paths import TEMPLATES_DIR

MODEL_TEMPLATES = TEMPLATES_DIR / "common" / "model"


def cmake_list(items: Iterable[str]) -> str:
    """A CMake list of quoted items: `"a" "b"`."""
    return " ".join(f'"{x}"' for x in items)


@functools.cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(MODEL_TEMPLATES),
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
    )
    env.filters["cmake_list"] = cmake_list
    return env


def render(template: str, /, **context: Any) -> str:
    """templates/common/model/<template>.j2 with `context`."""
    return _environment().get_template(f"{template}.j2").render(**context)


@functools.cache
def digest() -> str:
    """The templates' text, for the keys of what is memoized from them (common/memo.memo_json keys on
    cmx-gen's Python code only)."""
    text = hashlib.sha256()
    for path in sorted(MODEL_TEMPLATES.glob("*.j2")):
        text.update(path.name.encode() + b"\0" + path.read_bytes())
    return text.hexdigest()
