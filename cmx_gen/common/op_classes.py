"""How cmx-gen classes an operator (data/op_classes.yaml): on CMSIS-NN, a quantize/dequantize at a
float <-> int8 edge, a copy, or a portable compute fallback. The .pte's reader and the lowering's
float parts ask the same rules."""

from __future__ import annotations

import fnmatch
from functools import lru_cache

import yaml

from cmx_gen.common.paths import DATA_DIR


@lru_cache(maxsize=1)
def _op_rules() -> list[tuple[str, str]]:
    data = yaml.safe_load((DATA_DIR / "op_classes.yaml").read_text())
    return [(rule["match"], rule["class"]) for rule in data["rules"]]


def classify(op_name: str) -> str:
    """Class of an operator (`namespace::name`, overload stripped) per data/op_classes.yaml."""
    base = op_name.split(".")[0]
    for pattern, klass in _op_rules():
        if fnmatch.fnmatchcase(base, pattern):
            return klass
    return "fallback"
