"""The memory goals a project may set (`[options] memory`, `--memory`): what the backend's schedule
favours (lower/delegate/costs.py). `fit` tries them in order and keeps the first that fits the board
(pipeline/generate.py)."""

MEMORY_GOALS = ("fast", "balanced", "min")
DEFAULT_MEMORY_GOAL = "balanced"
FIT = "fit"  # not a goal of its own: the first of MEMORY_GOALS whose program fits

# Where a program's inputs live (`[options] input_memory`, `--input-memory`): "pool", in the planned
# pool (the caller writes into them); "caller", in the caller's own buffers (a camera frame, a
# constant in flash), which the program reads where they are and never writes (cmx_input_bind).
INPUT_MEMORIES = ("pool", "caller")
DEFAULT_INPUT_MEMORY = "pool"


def goals_to_try(memory: str) -> tuple[str, ...]:
    """The goals a project's `memory` setting lowers with, in order: all of them for `fit`."""
    return MEMORY_GOALS if memory == FIT else (memory,)


# Where the model's program lives (`[model] placement`, `--placement`): "linked" into the firmware
# image; or "slot", in a flash slot of its own that the board declares (`model_slots`), written and
# updated apart from the firmware and checked by it before it runs (docs/api.md "Updating the model").
PLACEMENTS = ("linked", "slot")
DEFAULT_PLACEMENT = "linked"
