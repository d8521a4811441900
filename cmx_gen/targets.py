"""The cores cmx-gen lowers for (`--target`). Its own module, free of torch, so the CLI, the board
database and the lowering step share one list and `cmx-gen --help` stays fast."""

TARGETS = ("cortex-m0plus", "cortex-m3", "cortex-m4", "cortex-m7", "cortex-m33", "cortex-m55", "cortex-m85")
