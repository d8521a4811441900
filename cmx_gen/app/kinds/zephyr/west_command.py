"""`west cmx-gen ...`: the cmx-gen CLI as a west extension command.

Inside a west workspace, `west cmx-gen create MODEL --board ID -o APP` behaves like
`cmx-gen create ... --rtos zephyr`: the Zephyr app is the default there. Every other argument is
passed through unchanged, so the CLI's help and errors apply (`west cmx-gen --help`).
Registered by west-commands.yml (repo root) and by each generated app's scripts/west-commands.yml,
through cmx_gen/west_command.py. It runs the CLI as `python -m cmx_gen` with west's Python: the
Zephyr kind sits below the CLI and does not import it.
"""

from __future__ import annotations

import subprocess
import sys

from west.commands import WestCommand

_DESCRIPTION = __doc__


def cli_args(argv: list[str]) -> list[str]:
    """The argv `west cmx-gen` hands to the CLI: `create` defaults to --rtos zephyr."""
    args = list(argv)
    if args and args[0] == "create" and not any(a == "--rtos" or a.startswith("--rtos=") for a in args):
        args += ["--rtos", "zephyr"]
    return args


class CmxGenCommand(WestCommand):
    def __init__(self) -> None:
        super().__init__(
            "cmx-gen",
            "PyTorch model -> Cortex-M app (cmx-gen)",
            _DESCRIPTION,
            accepts_unknown_args=True,
            requires_workspace=False,
        )

    def do_add_parser(self, parser_adder):
        # add_help=False: `west cmx-gen --help` shows the cmx-gen CLI's own help.
        return parser_adder.add_parser(self.name, help=self.help, description=self.description, add_help=False)

    def do_run(self, args, unknown) -> None:
        code = subprocess.call([sys.executable, "-m", "cmx_gen", *cli_args(unknown)])
        if code:
            raise SystemExit(code)
