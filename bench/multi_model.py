"""Several models in one image against one app per model (issue 21): flash and RAM, measured.

For each core (M55 on mps3-an547, M4 on mps2-an386) it builds the digits app, the DS-CNN app, and
one app of both (shared arena, then separate arenas), runs each check on QEMU (-icount shift=0),
and prints per build: .text (code), the programs and reference data (.cmx_model, .cmx_reference),
the pools (.cmx_arena), the static RAM (.data + .bss), the instructions per inference, and what the
one image saves against the two apps. Needs EXECUTORCH_ROOT and CMSIS_NN_PATH (see `cmx-gen sdk`)
and qemu-system-arm; says so and exits 0 without them.
Run: .venv/bin/python bench/multi_model.py [--boards mps3-an547,mps2-an386]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cmx_gen.app import project as project_mod  # noqa: E402
from cmx_gen.app.kinds.baremetal import build  # noqa: E402
from cmx_gen.app.project import ModelEntry  # noqa: E402
from cmx_gen.common import progress  # noqa: E402
from cmx_gen.device.runners import QemuRunner  # noqa: E402
from cmx_gen.fit.boards import load_board  # noqa: E402
from cmx_gen.pipeline.generate import generate  # noqa: E402

MODELS = {"digits": str(ROOT / "samples/digits/model.py:DigitsCNN"), "kws": str(ROOT / "samples/ds_cnn/model.py:DSCNN")}


@dataclass
class Measured:
    text: int  # .text: runtime, kernels, app
    programs: int  # .cmx_model + .cmx_reference: the .pte(s) and their reference data
    arena: int  # .cmx_arena: every pool
    static: int  # .data + .bss
    instr: int  # per inference, every model of the image

    @property
    def flash(self) -> int:
        return self.text + self.programs

    @property
    def ram(self) -> int:
        return self.arena + self.static


def measure(project: project_mod.Project, folder: Path) -> Measured:
    app = folder / "app"
    generate(project, app)
    built = build.build(app, jobs=2)
    sizes: dict[str, int] = {}
    for section in built.sections:
        sizes[section.name] = sizes.get(section.name, 0) + section.size
    result = QemuRunner(load_board(project.board), timeout=600).run(built.elf)
    if not result.passed:
        raise SystemExit(f"{app}: {result.line}")
    return Measured(
        text=sizes.get(".text", 0),
        programs=sizes.get(".cmx_model", 0) + sizes.get(".cmx_reference", 0),
        arena=sizes.get(".cmx_arena", 0),
        static=sizes.get(".data", 0) + sizes.get(".bss", 0),
        instr=result.count[1] if result.count else 0,
    )


def row(name: str, m: Measured) -> str:
    return (
        f"  {name:<22} {m.text:>9,} {m.programs:>9,} {m.flash:>9,} {m.arena:>9,} {m.static:>7,} {m.ram:>9,} "
        f"{m.instr:>11,}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", default="mps3-an547,mps2-an386")
    args = parser.parse_args()
    missing = [v for v in ("EXECUTORCH_ROOT", "CMSIS_NN_PATH") if not os.environ.get(v)]
    if missing or not shutil.which("qemu-system-arm"):
        print(f"bench/multi_model.py: not run: {', '.join(missing) or 'qemu-system-arm'} missing (see `cmx-gen sdk`)")
        return 0
    progress.set_quiet(True)
    for board in args.boards.split(","):
        with tempfile.TemporaryDirectory(prefix="cmx-multi-") as tmp:
            base = Path(tmp)
            singles = {
                name: measure(
                    project_mod.Project.single(model=source, board=board, output=str(base / name)), base / name
                )
                for name, source in MODELS.items()
            }
            entries = [ModelEntry(source, name) for name, source in MODELS.items()]
            shared = measure(
                project_mod.Project(models=entries, board=board, output=str(base / "shared")), base / "shared"
            )
            separate = measure(
                project_mod.Project(models=entries, board=board, separate_arenas=True, output=str(base / "separate")),
                base / "separate",
            )
        two = Measured(
            *(sum(getattr(m, f) for m in singles.values()) for f in ("text", "programs", "arena", "static", "instr"))
        )
        print(f"{board} ({load_board(board).core.name}): bytes; instr = QEMU instructions per inference of every model")
        print(
            f"  {'build':<22} {'.text':>9} {'programs':>9} {'flash':>9} {'arenas':>9} {'static':>7} {'RAM':>9} {'instr':>11}"
        )
        for name, m in singles.items():
            print(row(f"{name} alone", m))
        print(row("two apps (sum)", two))
        print(row("one image, shared", shared))
        print(row("one image, separate", separate))
        print(
            f"  one image (shared) saves {two.text - shared.text:,} B of .text "
            f"({100 * (two.text - shared.text) / two.text:.1f} %), {two.flash - shared.flash:,} B of flash and "
            f"{two.ram - shared.ram:,} B of RAM against the two apps; separate arenas cost "
            f"{separate.arena - shared.arena:,} B more RAM than shared",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
