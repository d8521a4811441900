"""Where cmx-gen's own data lives: boards, templates, kernels and samples sit beside the package."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOARDS_DIR = ROOT / "boards"
TEMPLATES_DIR = ROOT / "templates"
KERNELS_DIR = ROOT / "kernels"
SAMPLES_DIR = ROOT / "samples"
DATA_DIR = Path(__file__).resolve().parent / "data"
