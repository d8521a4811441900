"""The values cmx.toml's keys take, checked: each refusal one line naming the file, the table, the key
and what to write instead (project.py reads the file; the command line checks its own arguments)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypedDict, cast

from cmx_gen.common.errors import ModelSourceError
from cmx_gen.common.goals import (
    DEFAULT_PRECISION,
    DEFAULT_WEIGHT_BITS,
    FIT,
    MEMORY_GOALS,
    PRECISION_SETTINGS,
    WEIGHT_SETTINGS,
    PrecisionSetting,
    WeightSetting,
    parse_precision_override,
    parse_weight_override,
)


class NumberFormats(TypedDict):
    """A model's number formats: its weights' and activations' precisions and their per-layer overrides."""

    weights: WeightSetting
    weights_for: tuple[str, ...]
    sqnr_target: float | None
    precision: PrecisionSetting
    precision_for: tuple[str, ...]
    per_channel_linear: bool


def number_formats(path: Path, table: dict[str, Any], where: str) -> NumberFormats:
    """A model's `weights`, `weights_for`, `sqnr_target`, `precision`, `precision_for` and
    `per_channel_linear`."""
    bits = check_choice(
        path, "weights", table.get("weights", DEFAULT_WEIGHT_BITS), WEIGHT_SETTINGS, "a weight precision", where
    )
    target = table.get("sqnr_target")
    if target is not None and (isinstance(target, bool) or not isinstance(target, (int, float))):
        raise ModelSourceError(
            f"{path}: {where} sqnr_target = {target!r} is not a number", "write e.g. sqnr_target = 20.0"
        )
    precision = check_choice(
        path,
        "precision",
        table.get("precision", DEFAULT_PRECISION),
        PRECISION_SETTINGS,
        "an activation precision",
        where,
    )
    per_channel = table.get("per_channel_linear", False)
    if not isinstance(per_channel, bool):
        raise ModelSourceError(
            f"{path}: {where} per_channel_linear = {per_channel!r} is not true or false",
            "write per_channel_linear = true",
        )
    return NumberFormats(
        per_channel_linear=per_channel,
        weights=cast(WeightSetting, bits),
        weights_for=_overrides(
            path, table, "weights_for", parse_weight_override, "int8 or PART=int4", "output=int8", where
        ),
        sqnr_target=float(target) if target is not None else None,
        precision=cast(PrecisionSetting, precision),
        precision_for=_overrides(
            path, table, "precision_for", parse_precision_override, "int8 or PART=int16", "head=int16", where
        ),
    )


def _overrides(
    path: Path, table: dict[str, Any], key: str, parse: Callable[[str], object], form: str, example: str, where: str
) -> tuple[str, ...]:
    """A list of per-layer overrides, each PART=<form> as `parse` takes it."""
    given = table.get(key, [])
    if not isinstance(given, list) or not all(isinstance(o, str) and _parses(parse, o) for o in given):
        raise ModelSourceError(
            f"{path}: {where} {key} = {given!r} is not a list of PART={form}", f'write e.g. {key} = ["{example}"]'
        )
    return tuple(given)


def _parses(parse: Callable[[str], object], text: str) -> bool:
    try:
        parse(text)
    except ValueError:
        return False
    return True


def check_memory(path: Path, value: Any) -> str:
    return check_choice(path, "memory", value, (*MEMORY_GOALS, FIT), "a memory goal")


def check_choice(
    path: Path, key: str, value: Any, choices: tuple[str, ...], what: str, table: str = "[options]"
) -> str:
    if value not in choices:
        raise ModelSourceError(
            f"{path}: {table} {key} = {value!r} is not {what}",
            f"write {key} = one of {', '.join(repr(c) for c in choices)}",
        )
    return str(value)


def check_bool(path: Path, where: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ModelSourceError(
            f"{path}: {where} = {value!r} is not true or false", f"write {where.split()[-1]} = false"
        )
    return value
