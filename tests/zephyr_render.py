"""Render a Zephyr app the way `cmx-gen create --rtos zephyr` does (used by the Zephyr tests):
cmx_gen.app.render.render_app with a lowered program, a board and its placement."""

from __future__ import annotations

from pathlib import Path

from cmx_gen.program import artifacts

from cmx_gen.fit import boards, memory

from cmx_gen.app import project, render


def render_zephyr_app(lowered: Path, board_id: str, out_dir: Path, app_name: str = "digits") -> Path:
    art = artifacts.read(lowered)
    board = boards.load_board(board_id)
    placement = memory.plan(art.report, board)
    proj = project.Project(model=str(lowered / "model.pte"), board=board_id, rtos="zephyr", name=app_name)
    app = out_dir / app_name
    render.render_app(proj, art, board, placement, app)
    return app
