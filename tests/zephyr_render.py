"""Render a Zephyr app the way `cmx-gen create --rtos zephyr` does (used by the Zephyr tests).

Goes through cmx_gen.render (staging, shared sources from cmx_template.yaml, model/ files, the
manifest); adds the `zephyr` context entry (cmx_gen.zephyr.template_context) when render.context
does not provide it yet.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from cmx_gen import artifacts, boards, memory, model_files, project, render, zephyr
from cmx_gen.paths import TEMPLATES_DIR


def zephyr_context(art: artifacts.Artifacts, board: boards.Board, placement: memory.Placement) -> dict:
    return zephyr.template_context(
        board.model_dump(mode="json"), placement.to_dict(), art.report, model_files.pool_sizes(art.pte, art.report)
    )


def render_zephyr_app(lowered: Path, board_id: str, out_dir: Path, app_name: str = "digits") -> Path:
    art = artifacts.read(lowered)
    board = boards.load_board(board_id)
    placement = memory.plan(art.report, board)
    proj = project.Project(model=str(lowered / "model.pte"), board=board_id, rtos="zephyr", name=app_name)
    template_dir = TEMPLATES_DIR / "zephyr_app"
    spec = render.TemplateSpec.load(template_dir)
    ctx = render.context(proj, art, board, placement)
    ctx.setdefault("zephyr", zephyr_context(art, board, placement))
    app = out_dir / app_name
    app.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="cmx-render-") as tmp:
        stage = render._stage(template_dir, ctx, spec, art, project.dumps(proj, app), Path(tmp))
        render.sync(stage, app, spec)
    return app
