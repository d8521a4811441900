"""The backend's memory schedule per sample, core and memory goal (issue 32): planned RAM (the
program's whole planned arena), the working memory against layer-by-layer placement, that
placement's floor, the peak layer, and the instructions a goal is estimated to add.

No firmware needed: these are the lowering's own figures, which the firmware's `planned=` equals
(docs/performance.md has the QEMU runs). Lowerings are cached like `create`'s.

Run: .venv/bin/python bench/memory_schedule.py [--samples ds_cnn resnet8 mobilenet_v2:MobileNetV2] [--cores cortex-m4 cortex-m55]
                                               [--goals fast balanced min] [--io int8] [--input-memory caller]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cmx_gen.app import project as project_mod  # noqa: E402
from cmx_gen.common import progress  # noqa: E402
from cmx_gen.common.goals import DEFAULT_INPUT_MEMORY, INPUT_MEMORIES, MEMORY_GOALS  # noqa: E402
from cmx_gen.common.noise import quiet_third_party  # noqa: E402
from cmx_gen.lower.lowering import LowerOptions  # noqa: E402
from cmx_gen.model import source as model_source  # noqa: E402
from cmx_gen.pipeline.lower import produce  # noqa: E402

SAMPLES = ["ds_cnn", "mobilenet_v1_025", "resnet8", "autoencoder"]  # the MLPerf Tiny four
CORES = ["cortex-m4", "cortex-m55"]


def _source(name: str) -> model_source.ModelSource:
    """A sample by its folder (its cmx.toml), or `folder:Class` for a class of its model.py with
    its own example input and calibration (mobilenet_v2:MobileNetV2, which has no cmx.toml)."""
    folder, _, cls = name.partition(":")
    if cls:
        return model_source.load(f"{ROOT / 'samples' / folder / 'model.py'}:{cls}")
    project = project_mod.load(ROOT / "samples" / name / "cmx.toml")
    (model,) = project.models
    return model_source.load(
        model.source,
        input_shape=model.input_shape,
        calibration=model.calibration,
        random_calibration=model.random_calibration,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", nargs="+", default=SAMPLES)
    parser.add_argument("--cores", nargs="+", default=CORES)
    parser.add_argument("--goals", nargs="+", default=["balanced", "min"], choices=MEMORY_GOALS)
    parser.add_argument("--io", default="int8", choices=project_mod.IO_KINDS)
    parser.add_argument("--input-memory", default=DEFAULT_INPUT_MEMORY, choices=INPUT_MEMORIES)
    args = parser.parse_args()
    quiet_third_party()
    progress.set_quiet(True)
    print(
        f"{'sample':<17} {'core':<11} {'goal':<9} {'planned_B':>9} {'work_B':>7} {'layerwise_B':>11} "
        f"{'floor_B':>8} {'peak at':<22} {'extra_instr':>11}"
    )
    for name in args.samples:
        source = _source(name)
        for core in args.cores:
            for goal in args.goals:
                result, _ = produce(source, core, LowerOptions(io=args.io, memory=goal, input_memory=args.input_memory))
                report = result.report
                for s in report.schedules:
                    extra = "unknown" if s.extra_instructions is None else f"{s.extra_instructions:+,}"
                    print(
                        f"{name:<17} {core:<11} {goal:<9} {report.memory.planned_bytes:>9,} {s.work_bytes:>7,} "
                        f"{s.layer_by_layer_bytes:>11,} {s.floor_bytes:>8,} {s.peak_at:<22} {extra:>11}"
                        + (
                            f"  patches: {s.patch_layers} layers, {s.patch_grid} of {s.patch_until}"
                            if s.patch_layers
                            else ""
                        ),
                        flush=True,
                    )


if __name__ == "__main__":
    main()
