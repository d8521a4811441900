"""The memory goals a project may set (`[options] memory`, `--memory`): what the backend's schedule
favours (lower/delegate/costs.py). `fit` tries them in order and keeps the first that fits the board
(pipeline/generate.py)."""

MEMORY_GOALS = ("fast", "balanced", "min")
DEFAULT_MEMORY_GOAL = "balanced"
FIT = "fit"  # not a goal of its own: the first of MEMORY_GOALS whose program fits


def goals_to_try(memory: str) -> tuple[str, ...]:
    """The goals a project's `memory` setting lowers with, in order: all of them for `fit`."""
    return MEMORY_GOALS if memory == FIT else (memory,)
