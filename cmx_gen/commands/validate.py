"""`cmx-gen validate APP`: the offline checks of a generated Zephyr app (see cmx_gen/apps/zephyr/checks.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from cmx_gen.errors import ValidationError
from cmx_gen.apps.zephyr.checks import CHECKS, NOT_CHECKED, validate_app


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="check a generated Zephyr app offline (Twister, west, Kconfig, devicetree, compile)",
        description="Run the checks that need no Zephyr tree on a generated Zephyr app: "
        "sample.yaml against Twister's schema, west.yml with west, prj.conf and board .conf files "
        "with kconfiglib, board overlays with dtlib, the runner with arm-none-eabi-g++.",
    )
    parser.add_argument("app", type=Path, help="the app folder (cmx-gen create ... --rtos zephyr -o APP)")
    parser.add_argument("--only", action="append", choices=sorted(CHECKS), help="run only this check (repeatable)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cmx_gen.app_folder import AppFolder

    app: Path = args.app
    if not (app / "CMakeLists.txt").is_file() or not (app / "prj.conf").is_file():
        raise ValidationError(f"{app} is not a Zephyr app folder (no CMakeLists.txt + prj.conf)",
                              "pass the folder written by `cmx-gen create ... --rtos zephyr -o APP`")
    results = validate_app(app, args.only, AppFolder(app).app_kind.checks())
    failed = []
    for r in results:
        print(f"{r.name:<11} {r.status.upper():<7} {', '.join(r.checked)}")
        for f in r.findings:
            print(f"    {f}")
        if r.note:
            print(f"    note: {r.note}")
        if r.status == "fail":
            failed.append(r)
    print("not checked offline: " + "; ".join(NOT_CHECKED))
    if failed:
        first = failed[0].findings[0]
        raise ValidationError(
            f"{sum(len(r.findings) for r in failed)} problem(s) in {app}; first: {first}",
            "fix the files named above (or re-render with `cmx-gen regen`)",
        )
    return 0
