"""Render a Zephyr app the way cmx-gen create does (used by the Zephyr tests).

Uses cmx_gen.render when it exists; until then the same steps by hand: plan the placement,
write model/ (cmx_gen.model_files), render templates/zephyr_app with cookiecutter, copy the
shared runner, the Zephyr platform layer and kernels/ under cmx/.
"""

from __future__ import annotations

import shutil
from dataclasses import asdict
from pathlib import Path

from cookiecutter.generate import generate_files

from cmx_gen import artifacts, boards, memory, model_files, zephyr
from cmx_gen.paths import KERNELS_DIR, TEMPLATES_DIR


def render_zephyr_app(lowered: Path, board_id: str, out_dir: Path, app_name: str = "digits") -> Path:
    art = artifacts.read(lowered)
    board = boards.load_board(board_id)
    placement = memory.plan(art.report, board)
    board_d = board.model_dump()
    placement_d = asdict(placement)
    context = {
        "cookiecutter": {
            "app_name": app_name,
            "app_dir": app_name,
            "board": board_d,
            "placement": placement_d,
            "model": art.report,
            "zephyr": zephyr.template_context(board_d, placement_d, art.report),
            "cmx_version": "test",
        }
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    app = Path(generate_files(str(TEMPLATES_DIR / "zephyr_app"), context, output_dir=str(out_dir),
                              overwrite_if_exists=True))
    model_files.write_model_files(app / "model", art.pte, art.report, art.reference, zephyr.PTE_SECTION)
    cmx = app / "cmx"
    shutil.copytree(TEMPLATES_DIR / "common" / "runner", cmx / "runner", dirs_exist_ok=True)
    shutil.copytree(TEMPLATES_DIR / "common" / "platform_zephyr", cmx / "platform_zephyr", dirs_exist_ok=True)
    shutil.copytree(KERNELS_DIR, cmx / "kernels", dirs_exist_ok=True)
    return app
