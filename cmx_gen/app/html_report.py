"""One self-contained HTML page of what cmx-gen knows about a model and its app: the board's memory
map, the operators, the on-target profile, the per-layer quantization error and the last result.

The charts are SVG drawn here, in Python, and inlined: the page needs no network, no script library
and stays a few tens of KB (a vendored chart library would be 100+ KB and a second thing to trust).
Hover text is SVG `<title>`, which every browser shows without a script.
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypedDict

import jinja2
from markupsafe import Markup

from cmx_gen.app.folder import MODEL_APPS, AppFolder
from cmx_gen.app.kinds import AppKind, app_kind
from cmx_gen.common.format import size_label
from cmx_gen.common.paths import DATA_DIR
from cmx_gen.device.profile import ProfileJson, RowJson
from cmx_gen.fit.memory import Placement
from cmx_gen.program.report import Report
from cmx_gen.program.report_text import (
    CLASS_LABELS,
    describe_layer,
    precision_lines,
    schedule_line,
    weight_lines,
    worst_layers,
)

PAGE = "report.html"
PROFILE_JSON = "profile.json"  # written beside the profile image by `run --profile`
LAST_RESULT = "last_result.txt"  # build/: the last `run`'s kind and result line (record_result)
RUN_KINDS = {
    "check": "the check image",
    "profile": "the profile image",
    "trace": "the trace image",
    "app": "your application",
}
_COLORS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"]


@dataclass(frozen=True)
class ModelPage:
    """One model's part of the page: its report and, once `run --profile` made one, its profile."""

    report: Report
    name: str | None = None  # in an app of several models
    profile: ProfileJson | None = None


@dataclass(frozen=True)
class PageData:
    """What one page shows: each model's part (one, or one per model of the app), the placement and
    the last result."""

    models: tuple[ModelPage, ...]
    placement: Placement | None = None
    result_line: str | None = None
    result_run: str = "check"  # a RUN_KINDS key: which run the line is from
    run_hint: str = AppKind.run_hint  # the folder's kind's: how a run or a profile would be made
    profile_hint: str = AppKind.profile_hint


def record_result(folder: Path, run: str, line: str) -> None:
    """Keep the last run's line for the page, with which run it was (every kind of `run` records one)."""
    (folder / "build").mkdir(exist_ok=True)
    (folder / "build" / LAST_RESULT).write_text(f"{run}\t{line}\n")


def _last_result(path: Path) -> tuple[str | None, str]:
    """(line, run kind) from build/last_result.txt; a file without a kind is the check's (older apps)."""
    if not path.is_file():
        return None, "check"
    run, _, line = path.read_text().strip().rpartition("\t")
    return line, run if run in RUN_KINDS else "check"


def _esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def memory_svg(placement: Placement, width: int = 760) -> str:
    """A bar per region that holds anything, split into its contents; free space grey."""
    regions = [use for use in placement.uses if use.items]
    bar, gap, label = 26, 34, 170
    rows = []
    legend: dict[str, str] = {}
    for row, use in enumerate(regions):
        y = row * (bar + gap) + 18
        rows.append(
            f'<text x="0" y="{y - 4}" class="lbl">{_esc(use.region)} — {size_label(use.used)} of '
            f"{size_label(use.size)} ({use.percent:.1f} %)</text>"
        )
        x = 0.0
        scale = (width - label) / use.size if use.size else 0
        for name, nbytes in use.items.items():
            color = legend.setdefault(name, _COLORS[len(legend) % len(_COLORS)])
            w = max(nbytes * scale, 1.0)
            rows.append(
                f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{bar}" fill="{color}">'
                f"<title>{_esc(use.region)}: {_esc(name)} {size_label(nbytes)} ({nbytes:,} B)</title></rect>"
            )
            x += w
        rows.append(
            f'<rect x="{x:.1f}" y="{y}" width="{max(width - label - x, 0):.1f}" height="{bar}" fill="#e8e8e8">'
            f"<title>{_esc(use.region)}: free {size_label(use.free)}</title></rect>"
        )
    height = len(regions) * (bar + gap) + 10
    keys = "".join(f'<span class="key"><i style="background:{c}"></i>{_esc(n)}</span>' for n, c in legend.items())
    return (
        f'<svg id="memory-map" width="{width}" height="{height}" role="img" aria-label="memory map">'
        + "".join(rows)
        + f'</svg><div class="legend">{keys}</div>'
    )


def bars_svg(rows: Sequence[tuple[str, float, str]], unit: str, element_id: str, width: int = 760) -> str:
    """Horizontal bars, largest first: (label, value, hover text)."""
    rows = sorted(rows, key=lambda r: -r[1])
    top = max((r[1] for r in rows), default=1.0) or 1.0
    bar, label = 16, 300
    parts = []
    for i, (name, value, hover) in enumerate(rows):
        y = i * (bar + 4)
        w = max((width - label - 90) * value / top, 1.0)
        parts.append(
            f'<text x="{label - 6}" y="{y + 12}" class="lbl" text-anchor="end">{_esc(name[:48])}</text>'
            f'<rect x="{label}" y="{y}" width="{w:.1f}" height="{bar}" fill="{_COLORS[0]}">'
            f"<title>{_esc(hover)}</title></rect>"
            f'<text x="{label + w + 4:.1f}" y="{y + 12}" class="lbl">{value:,.0f} {unit}</text>'
        )
    return (
        f'<svg id="{element_id}" width="{width}" height="{len(rows) * (bar + 4) + 4}" role="img">'
        + "".join(parts)
        + "</svg>"
    )


def sqnr_svg(report: Report, width: int = 760, height: int = 220, element_id: str = "sqnr-chart") -> str:
    """SQNR after each compared layer along the network's depth; the layers that lose the most in red."""
    points = [layer for layer in report.layers if layer.sqnr_db is not None]
    if not points:
        return ""
    worst = {layer.index for layer in worst_layers(report, 3)}
    values = [p.sqnr_db for p in points if p.sqnr_db is not None]
    low, high = min(values), max(values)
    low, high = min(low, high - 1.0) - 2.0, high + 2.0
    pad, step = 40, (width - 60) / max(len(points) - 1, 1)
    xy = [(pad + i * step, height - 24 - (v - low) / (high - low) * (height - 44)) for i, v in enumerate(values)]
    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
    dots = "".join(
        f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{6 if p.index in worst else 4}" '
        f'fill="{"#e15759" if p.index in worst else _COLORS[0]}"><title>{_esc(describe_layer(p) if p.sqnr_drop_db is not None else f"op #{p.index} {p.op} ({p.module}): {p.sqnr_db} dB")}</title></circle>'
        for (x, y), p in zip(xy, points)
    )
    axis = (
        f'<text x="0" y="14" class="lbl">{high:.0f} dB</text>'
        f'<text x="0" y="{height - 24}" class="lbl">{low:.0f} dB</text>'
        f'<text x="{pad}" y="{height - 4}" class="lbl">input</text>'
        f'<text x="{width - 20}" y="{height - 4}" class="lbl" text-anchor="end">output</text>'
    )
    return (
        f'<svg id="{element_id}" width="{width}" height="{height}" role="img" aria-label="SQNR by layer">'
        f'{axis}<polyline points="{line}" fill="none" stroke="{_COLORS[0]}" stroke-width="2"/>{dots}</svg>'
    )


def _latency(report: Report, board_id: str | None) -> str:
    """The latency `create` printed for this program on the page's board (fit/latency.py), or ""."""
    from cmx_gen.common.errors import CmxError
    from cmx_gen.fit.boards import load_board
    from cmx_gen.fit.latency import estimate

    if not board_id:
        return ""
    try:
        return estimate(report, load_board(board_id)).line().removeprefix("latency").strip()
    except CmxError:  # a board file the page cannot find again
        return ""


def _profile_bar(row: RowJson, value: int, unit: str) -> tuple[str, float, str]:
    """A profile row's bar: (label, value, hover text)."""
    hover = f"{row['op']} {row['module']} {row['source']}: {value:,} {unit} ({row['share']:.1f} %)"
    return f"#{row['index']} {row['op']} ({row['module']})", value, hover


class _ModelPart(TypedDict):
    """What report_model.html.j2 shows of one model."""

    name: str | None
    suffix: str
    report: Report
    profile: ProfileJson | None
    profile_svg: str
    latency: str
    kinds_svg: str
    sqnr_svg: str
    worst: list[str]
    schedules: list[str]
    # report_text.weight_lines and precision_lines: the 4-bit weights (auto's choice a layer a line), the
    # 16-bit activations
    weights: list[str]


def _model_part(model: ModelPage, several: bool, board_id: str | None = None) -> _ModelPart:
    """What report_model.html.j2 shows of one model (`suffix` keeps element ids unique on a page of several)."""
    report, profile = model.report, model.profile
    suffix = f"-{model.name}" if several else ""
    profile_svg = kinds_svg = ""
    if profile:
        # estimated cycles lead where the profile has them (run --profile under QEMU), else the counter
        cycles = profile.get("cycles")
        key: Literal["cycles", "count"] = "cycles" if cycles and cycles["estimated"] else "count"
        unit = "cycles" if key == "cycles" else profile["counter"]
        rows = [_profile_bar(r, r[key] or 0, unit) for r in profile["rows"]]  # estimated: every row has cycles
        kinds = [(k["kind"], k[key], f"{k['kind']}: {k['share']:.1f} %") for k in profile["by_kind"]]
        profile_svg = bars_svg(rows, unit, f"profile-chart{suffix}")
        kinds_svg = bars_svg(kinds, unit, f"profile-kinds{suffix}")
    return {
        "name": model.name,
        "suffix": suffix,
        "report": report,
        "profile": profile,
        "profile_svg": profile_svg,
        "latency": _latency(report, board_id),
        "kinds_svg": kinds_svg,
        "sqnr_svg": sqnr_svg(report, element_id=f"sqnr-chart{suffix}"),
        "worst": [describe_layer(layer) for layer in worst_layers(report)],
        "schedules": [schedule_line(s) for s in report.schedules],
        "weights": weight_lines(report) + precision_lines(report),
    }


def render(data: PageData) -> str:
    """The page's HTML."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(DATA_DIR), autoescape=True, undefined=jinja2.StrictUndefined
    )
    several = len(data.models) > 1
    return env.get_template("report.html.j2").render(
        title=", ".join(m.name or "" for m in data.models) if several else data.models[0].report.source,
        one=not several,
        models=[_model_part(m, several, data.placement.board_id if data.placement else None) for m in data.models],
        labels=CLASS_LABELS,
        placement=data.placement,
        result_line=data.result_line,
        result_run=RUN_KINDS[data.result_run],
        run_hint=Markup(data.run_hint),
        profile_hint=Markup(data.profile_hint),
        memory_svg=memory_svg(data.placement) if data.placement else "",
        size=size_label,
    )


def _profile(path: Path) -> ProfileJson | None:
    """The profile.json `run --profile` wrote (device/profile.py), if it did."""
    profile: ProfileJson | None = json.loads(path.read_text()) if path.is_file() else None
    return profile


def gather(folder: Path, profile_dir: str = "build-profile") -> PageData:
    """An app folder (model/report.json or, for several models, model/<name>/report.json; the
    placement; the last runs) or a `lower -o` folder."""
    from cmx_gen.program.report import load_json

    placement = folder / "model" / "placement.json"
    if not placement.is_file():
        placement = folder / "placement.json"
    names = [m["name"] for m in json.loads(placement.read_text()).get("models", [])] if placement.is_file() else []
    if names:  # each model's profile from its one-model app (pipeline/one_model.py: build-models/<name>/)
        models = tuple(
            ModelPage(
                load_json(folder / "model" / name / "report.json"),
                name,
                _profile(folder / MODEL_APPS / name / profile_dir / PROFILE_JSON),
            )
            for name in names
        )
    else:
        model = folder / "model" if (folder / "model" / "report.json").is_file() else folder
        models = (ModelPage(load_json(model / "report.json"), None, _profile(folder / profile_dir / PROFILE_JSON)),)
    line, run = _last_result(folder / "build" / LAST_RESULT)
    kind = app_kind(AppFolder(folder).kind) if (folder / "cmx.toml").is_file() else AppKind()
    return PageData(
        models=models,
        placement=Placement.from_dict(json.loads(placement.read_text())) if placement.is_file() else None,
        result_line=line,
        result_run=run,
        run_hint=kind.run_hint,
        profile_hint=kind.profile_hint,
    )


def write(folder: Path, out: Path | None = None, profile_dir: str = "build-profile") -> Path:
    """Render the page for `folder` into `out` (default: FOLDER/report.html, a view cmx-gen rewrites
    whenever it learns more; not in the app's manifest), whole or not at all; its path."""
    out = out or folder / PAGE
    staging = out.with_name(f".{out.name}.tmp")
    staging.write_text(render(gather(folder, profile_dir)))
    os.replace(staging, out)
    return out
