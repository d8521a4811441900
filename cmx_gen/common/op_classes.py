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


@lru_cache(maxsize=1)
def _lut_data() -> dict[str, list[str]]:
    data: dict[str, list[str]] = yaml.safe_load((DATA_DIR / "lut_ops.yaml").read_text())
    return data


def elementwise_ops() -> frozenset[str]:
    """The element-wise operators (`aten::name`) cmx-gen runs on int8 as a table (data/lut_ops.yaml
    `ops`): each keeps its input's shape and memory format."""
    return frozenset(_lut_data()["ops"])


def folded_ops() -> frozenset[str]:
    """The activations upstream leaves on int8 data with folded quantization (lut_ops.yaml `folded`)."""
    return frozenset(_lut_data()["folded"])
