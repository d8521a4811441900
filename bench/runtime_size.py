"""Flash the runtime costs with no kernel at all, per CMSIS-NN code path: the `runtime.code` of
cmx_gen/data/kernel_sizes.yaml.

The digits app for a board of each ISA, built as it ships (LTO, log messages, no program verifier)
but registering no kernel: what its code region holds besides the program and the reference data
(.text, .rodata, .ARM.exidx, the .data load image) is what every app pays before its kernels.
Prints one YAML line per ISA to paste into kernel_sizes.yaml, and the full app beside it.
Needs EXECUTORCH_ROOT and CMSIS_NN_PATH. Run: .venv/bin/python bench/runtime_size.py
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cmx_gen.app import project as project_mod  # noqa: E402
from cmx_gen.app.kinds.baremetal import build  # noqa: E402
from cmx_gen.common import progress  # noqa: E402
from cmx_gen.common.errors import CmxError  # noqa: E402
from cmx_gen.pipeline.generate import generate  # noqa: E402

BOARDS = {"MVE": "mps3-an547", "DSP": "mps2-an386", "SCALAR": "mps2-an385"}
DIGITS = str(ROOT / "samples/digits/model.py:DigitsCNN")
NOT_CODE = (".cmx_model", ".cmx_reference")


def code_bytes(result: build.BuildResult, region: str) -> int:
    used = next(r for r in result.regions if r.name.lower() == region.lower())
    return sum(size for name, size in used.sections.items() if not name.startswith(NOT_CODE))


def main() -> None:
    progress.set_quiet(True)
    for isa, board in BOARDS.items():
        with tempfile.TemporaryDirectory() as tmp:
            app = Path(tmp) / "app"
            done = generate(
                project_mod.Project.single(model=DIGITS, board=board, rtos="baremetal", output=str(app)), app
            )
            region = done.placement.code_region
            full = build.build(app, app / "build-full", jobs=2, shared=False)
            # the same app with an empty kernel set: no kernel, no CMSIS-NN, an empty registration
            ops = app / "model" / "cmx_ops.cmake"
            ops.write_text(
                re.sub(
                    r"set\((CMX_CORTEX_M_OPS|CMX_PORTABLE_OPS|CMX_PORTABLE_KERNELS|CMX_PRIM_OPS|"
                    r"CMX_REGISTERED_OPS) [^)]*\)",
                    r"set(\1 )",
                    ops.read_text(),
                )
            )
            (app / "model" / "cmx_kernels.cpp").write_text('extern "C" int cmx_register_kernels(void) { return 0; }\n')
            bare = build.build(app, app / "build-bare", jobs=2, shared=False)
            print(
                f"{isa}: runtime.code {code_bytes(bare, region)}  (digits app: {code_bytes(full, region)} "
                f"on {board}, .text {full.text_bytes})",
                flush=True,
            )


if __name__ == "__main__":
    try:
        main()
    except CmxError as exc:
        sys.exit(f"runtime_size: {exc.one_line()}")
