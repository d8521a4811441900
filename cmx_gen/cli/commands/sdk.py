"""`cmx-gen sdk`: show which ExecuTorch / CMSIS-NN sources and tools firmware builds will use."""

from __future__ import annotations

import argparse
from pathlib import Path

from cmx_gen.common import progress
from cmx_gen.device import sdk


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("sdk", help="report the ExecuTorch/CMSIS-NN sources and tools for firmware builds")
    parser.add_argument("--clone", metavar="DIR", help="clone the pinned sources into DIR (needs network)")
    parser.add_argument("--version", help="ExecuTorch version to clone (default: the installed wheel's)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.clone:
        with progress.step(f"cloning the firmware SDK into {args.clone}"):
            found = sdk.clone(Path(args.clone), args.version)
        print("\n".join(sdk.describe(found)))
        print(f"\nexport EXECUTORCH_ROOT={found.executorch_root} CMSIS_NN_PATH={found.cmsis_nn_path}")
        return 0 if found.ok else 1
    found = sdk.find()
    print("\n".join(sdk.describe(found)))
    return 0 if found.ok else 1
