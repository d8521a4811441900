"""`cmx-gen lower MODEL`: quantize + lower, write model.pte / report.json / report.md / reference.npz."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cmx_gen.cli.model_args import add_model_arguments, load_source, lower_options
from cmx_gen.common.targets import TARGETS, canonical_core
from cmx_gen.program.report import check_strict


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("lower", help="quantize and lower a model, report what it costs on a Cortex-M")
    add_model_arguments(parser)
    parser.add_argument(
        "--target",
        metavar="CORE",
        help=f"one of {', '.join(TARGETS)} (default cortex-m55; for a .pte, the core it was lowered for)",
    )
    parser.add_argument("-o", "--output", default="cmx-out", help="output folder (default: cmx-out)")
    parser.add_argument("--strict", action="store_true", help="fail when any compute op falls back to portable kernels")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cmx_gen.lower.lowering import resolve_target
    from cmx_gen.pipeline.lower import produce
    from cmx_gen.program.report_text import table

    if args.target:
        resolve_target(args.target)  # fail on a bad target before the slow steps
    source = load_source(args)
    core = canonical_core(args.target) if args.target else ("" if source.is_program else "cortex-m55")
    result, _ = produce(source, core, lower_options(args), use_cache=False)
    out_dir = Path(args.output)
    written = result.write(out_dir)
    print(table(result.report))
    print(f"\nwrote {', '.join(str(p) for p in written)}", file=sys.stderr)
    if args.strict:
        check_strict(result.report)
    return 0
