"""The memory goals a project may set (`[options] memory`, `--memory`): what the backend's schedule
favours (lower/delegate/costs.py). `fit` tries them in order and keeps the first that fits the board
(pipeline/generate.py)."""

MEMORY_GOALS = ("fast", "balanced", "min")
DEFAULT_MEMORY_GOAL = "balanced"
FIT = "fit"  # not a goal of its own: the first of MEMORY_GOALS whose program fits
