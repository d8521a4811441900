"""The samples bundled with cmx-gen (samples/ in a clone, inside an installed copy): list them, and
copy one into the user's folder, where its project file writes its app (an installed copy's own
files are never written to)."""

from __future__ import annotations

import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path

from cmx_gen.common.errors import ModelSourceError
from cmx_gen.common.paths import SAMPLES_DIR

PROJECT_FILE = "cmx.toml"
LEFT_OUT = shutil.ignore_patterns("build", "__pycache__", "*.pyc", ".pytest_cache")


@dataclass(frozen=True)
class Sample:
    name: str
    folder: Path
    summary: str  # the first sentence of its README after the title


def bundled() -> list[Sample]:
    out = []
    for folder in sorted(p for p in SAMPLES_DIR.iterdir() if (p / PROJECT_FILE).is_file()):
        readme = folder / "README.md"
        out.append(Sample(folder.name, folder, _first_sentence(readme.read_text() if readme.is_file() else "")))
    return out


def _first_sentence(readme: str, most: int = 100) -> str:
    paragraph = " ".join(readme.split("\n\n")[1].split()) if readme.count("\n\n") else ""
    sentence = paragraph.split(". ")[0].rstrip(".")
    return sentence if len(sentence) <= most else sentence[: most - 1] + "…"


def _siblings(project_file: Path) -> list[str]:
    """Other samples a sample's models come from (kws_digits: source = "../ds_cnn/model.py:DSCNN")."""
    data = tomllib.loads(project_file.read_text())
    tables = data.get("model", [])
    sources = [t.get("source", "") for t in (tables if isinstance(tables, list) else [tables])]
    return [src.split("/")[1] for src in sources if isinstance(src, str) and src.startswith("../")]


def copy(name: str, dest: Path) -> list[Path]:
    """Copy sample `name` to `dest`, which must not exist (nothing of the user's is written over),
    and the samples its models come from beside it where they are not there yet."""
    known = {s.name: s for s in bundled()}
    if name not in known:
        raise ModelSourceError(f"no bundled sample {name!r}", f"choose from {', '.join(known)}")
    if dest.exists():
        raise ModelSourceError(f"{dest} already exists", "give a folder that does not exist yet, or use the copy there")
    copied = [Path(shutil.copytree(known[name].folder, dest, ignore=LEFT_OUT))]
    for other in _siblings(known[name].folder / PROJECT_FILE):
        if other in known and not (dest.parent / other).exists():
            copied.append(Path(shutil.copytree(known[other].folder, dest.parent / other, ignore=LEFT_OUT)))
    return copied


def hint_for_missing(path: Path) -> str | None:
    """For a missing project file like samples/<name>/cmx.toml whose sample is bundled: how to get
    it (an installed cmx-gen has no samples/ folder where the user works)."""
    parts = path.parts
    names = [parts[i + 1] for i in range(len(parts) - 1) if parts[i] == "samples"]
    if names and (SAMPLES_DIR / names[-1] / PROJECT_FILE).is_file():
        return f"it is a sample bundled with cmx-gen: copy it here first with `cmx-gen samples {names[-1]}`"
    return None
