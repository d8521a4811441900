"""West extension shim: the command itself ships with cmx-gen (cmx_gen/west_command.py)."""

from cmx_gen.west_command import CmxGenCommand  # noqa: F401  (west looks the class up here)
