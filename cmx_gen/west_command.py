"""`west cmx-gen`: the entry point west loads (west-commands.yml, and each generated Zephyr app's
scripts/west_cmx_gen.py import it by this name); the command lives in the Zephyr kind."""

from cmx_gen.app.kinds.zephyr.west_command import CmxGenCommand, cli_args

__all__ = ["CmxGenCommand", "cli_args"]
