"""`cmx-gen validate APP`: the offline checks the app's kind has (the Zephyr app's: Twister, west,
Kconfig, devicetree, compile; cmx_gen/app/kinds/zephyr/checks/)."""

from __future__ import annotations

import argparse
from pathlib import Path

from cmx_gen.app.kinds import APP_KINDS
from cmx_gen.common.errors import ValidationError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="check a generated Zephyr app offline (Twister, west, Kconfig, devicetree, compile)",
        description="Run the checks that need no Zephyr tree on a generated Zephyr app: "
        "sample.yaml against Twister's schema, west.yml with west, prj.conf and board .conf files "
        "with kconfiglib, board overlays with dtlib, the runner with arm-none-eabi-g++.",
    )
    parser.add_argument("app", type=Path, help="the app folder (cmx-gen create ... --rtos zephyr -o APP)")
    names = sorted({name for kind in APP_KINDS.values() for name in kind.checks()})
    parser.add_argument("--only", action="append", choices=names, help="run only this check (repeatable)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cmx_gen.app.folder import AppFolder
    from cmx_gen.app.kinds import kind_of

    app = AppFolder(args.app)
    kind = kind_of(app)
    checks = kind.checks()
    if not checks:
        kind.require_image("cmx-gen validate")  # a package without offline checks: its own line
        raise ValidationError(
            f"{args.app} is a {kind.name} app, which has no offline checks: its build is the check",
            f"build and run it: cmx-gen build {args.app} && cmx-gen run {args.app}",
        )
    unknown = [name for name in args.only or [] if name not in checks]
    if unknown:
        raise ValidationError(f"{kind.name} apps have no check {unknown[0]!r}", f"use one of {', '.join(checks)}")
    results = [checks[name](args.app.resolve()) for name in args.only or checks]
    failed = []
    for r in results:
        print(f"{r.name:<11} {r.status.upper():<7} {', '.join(r.checked)}")
        for f in r.findings:
            print(f"    {f}")
        if r.note:
            print(f"    note: {r.note}")
        if r.status == "fail":
            failed.append(r)
    print("not checked offline: " + "; ".join(kind.not_checked()))
    if failed:
        first = failed[0].findings[0]
        raise ValidationError(
            f"{sum(len(r.findings) for r in failed)} problem(s) in {args.app}; first: {first}",
            "fix the files named above (or re-render with `cmx-gen regen`)",
        )
    return 0
