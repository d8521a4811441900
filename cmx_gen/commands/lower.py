"""`cmx-gen lower MODEL`: quantize + lower, write model.pte / report.json / report.md / reference.npz."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from typing import TYPE_CHECKING

from cmx_gen.project import IO_KINDS
from cmx_gen.report import check_strict
from cmx_gen.targets import TARGETS, canonical_core

if TYPE_CHECKING:
    from cmx_gen.lowering import LowerOptions
    from cmx_gen.model_source import ModelSource



MODEL_HELP = "path/model.py:Name, model.pt2 (torch.export.save), or model.pte"


def add_model_arguments(parser: argparse.ArgumentParser, metavar: str = "MODEL", help: str = MODEL_HELP) -> None:
    """Model-source options shared by `lower`, `check` and `create`."""
    parser.add_argument("model", metavar=metavar, help=help)
    parser.add_argument("--input-shape", help="example input shape, e.g. 1,1,49,10 (else example_inputs() from the file)")
    parser.add_argument("--calibration", help="calibration data: .npz (one array per input), .npy, or a folder of .npy")
    parser.add_argument(
        "--random-calibration", action="store_true", help="calibrate on random data (poor INT8 accuracy; the report says so)"
    )
    parser.add_argument(
        "--keep-fp32", action="append", metavar="PART",
        help="leave a part in float on portable kernels: a module path (features.3), a model-file line (model.py:15) "
             "or an exported node name; repeatable",
    )
    parser.add_argument("--io", choices=IO_KINDS, default=None,
                        help="int8: the program takes and returns int8 tensors, no quantize/dequantize at its edges "
                             "(the scale and zero point are in report.json and cmx_model.h); default float")


def lower_options(args: argparse.Namespace) -> "LowerOptions":
    from cmx_gen.lowering import LowerOptions

    return LowerOptions(keep_fp32=tuple(args.keep_fp32 or ()), io=args.io or "float")


def load_source(args: argparse.Namespace) -> "ModelSource":
    from cmx_gen import model_source

    return model_source.load(
        args.model, input_shape=args.input_shape, calibration=args.calibration, random_calibration=args.random_calibration
    )


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("lower", help="quantize and lower a model, report what it costs on a Cortex-M")
    add_model_arguments(parser)
    parser.add_argument("--target", metavar="CORE",
                        help=f"one of {', '.join(TARGETS)} (default cortex-m55; for a .pte, the core it was lowered for)")
    parser.add_argument("-o", "--output", default="cmx-out", help="output folder (default: cmx-out)")
    parser.add_argument("--strict", action="store_true", help="fail when any compute op falls back to portable kernels")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cmx_gen import artifacts
    from cmx_gen.lowering import resolve_target
    from cmx_gen.report import table

    if args.target:
        resolve_target(args.target)  # fail on a bad target before the slow steps
    source = load_source(args)
    core = canonical_core(args.target) if args.target else ("" if source.kind == "pte" else "cortex-m55")
    result = artifacts.produce(source, core, lower_options(args))
    out_dir = Path(args.output)
    written = result.write(out_dir)
    print(table(result.report))
    print(f"\nwrote {', '.join(str(p) for p in written)}", file=sys.stderr)
    if args.strict:
        check_strict(result.report)
    return 0
