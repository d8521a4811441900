"""The memory goals a project may set (`[options] memory`, `--memory`): what the backend's schedule
favours (lower/delegate/costs.py). `fit` tries them in order and keeps the first that fits the board
(pipeline/generate.py)."""

from typing import Literal, cast, get_args

MemoryGoal = Literal["fast", "balanced", "min"]
MEMORY_GOALS: tuple[MemoryGoal, ...] = get_args(MemoryGoal)
DEFAULT_MEMORY_GOAL: MemoryGoal = "balanced"
FIT = "fit"  # not a goal of its own: the first of MEMORY_GOALS whose program fits

# Whether cmx_conv_row_s8 widens a layer's int8 weights into its scratch at each call (`[options]
# stage_weights`, `--stage-weights`) rather than reading int16 copies from the program: "auto" where
# the board's flash waits (a wait state in its board file), so each weight is read from flash once a
# call instead of once for every pair of output positions; more RAM (the largest such layer's weights
# as int16), less flash (no int16 copies).
StageWeights = Literal["auto", "yes", "no"]
STAGE_WEIGHTS: tuple[StageWeights, ...] = get_args(StageWeights)
DEFAULT_STAGE_WEIGHTS: StageWeights = "auto"


def stages_weights(setting: str, flash_waits: bool, memory: str) -> bool:
    """Whether the program stages its weights: yes; or auto where the board's flash waits, except with
    the `min` goal, whose RAM it would grow (it keeps int8 weights read in place)."""
    if setting != "auto":
        return setting == "yes"
    return flash_waits and memory != "min"


def stage_trials(setting: str, flash_waits: bool, memory: str) -> tuple[bool, ...]:
    """Whether to stage the weights, in the order to try (create and check): auto where the board's
    flash waits tries staged first and, where that does not fit, unstaged."""
    staged = stages_weights(setting, flash_waits, memory)
    return (True, False) if staged and setting == "auto" else (staged,)


# Where a program's inputs live (`[options] input_memory`, `--input-memory`): "pool", in the planned
# pool (the caller writes into them); "caller", in the caller's own buffers (a camera frame, a
# constant in flash), which the program reads where they are and never writes (cmx_input_bind).
InputMemory = Literal["pool", "caller"]
INPUT_MEMORIES: tuple[InputMemory, ...] = get_args(InputMemory)
DEFAULT_INPUT_MEMORY: InputMemory = "pool"


def goals_to_try(memory: str) -> tuple[str, ...]:
    """The goals a project's `memory` setting lowers with, in order: all of them for `fit`."""
    return MEMORY_GOALS if memory == FIT else (memory,)


# Where the model's program lives (`[model] placement`, `--placement`): "linked" into the firmware
# image; or "slot", in a flash slot of its own that the board declares (`model_slots`), written and
# updated apart from the firmware and checked by it before it runs (docs/api.md "Updating the model").
Placement = Literal["linked", "slot"]
PLACEMENTS: tuple[Placement, ...] = get_args(Placement)
DEFAULT_PLACEMENT: Placement = "linked"


# The weights' precision (`[options] weights`, `--weights`; lower/weight_bits.py): "int8", or "int4"
# (4w8a): convolution, depthwise and fully connected weights in 4 bits, two a byte, run by CMSIS-NN's
# s4 kernels (about half the weight bytes, some accuracy). `weights_for` overrides it per layer.
WeightBits = Literal["int8", "int4"]
WEIGHT_BITS: tuple[WeightBits, ...] = get_args(WeightBits)
DEFAULT_WEIGHT_BITS: WeightBits = "int8"
# ... or "auto" (lower/weight_choice.py): int4 for the layers whose 4 bits cost the least error per byte
# saved, as many as keep the output's SQNR against float at or above `sqnr_target` (dB; default: the
# all-int8 program's less AUTO_SQNR_SLACK_DB), measured on the calibration samples.
WeightSetting = Literal["int8", "int4", "auto"]
WEIGHT_SETTINGS: tuple[WeightSetting, ...] = get_args(WeightSetting)
AUTO_SQNR_SLACK_DB = 3.0


def _split_override(text: str, choices: tuple[str, ...]) -> tuple[str, str]:
    """`PART=BITS` with BITS one of `choices` (ValueError naming the form otherwise)."""
    part, sep, bits = text.rpartition("=")
    if not sep or not part or bits not in choices:
        raise ValueError(f"{text!r} is not " + " or ".join(f"PART={c}" for c in choices))
    return part, bits


def parse_weight_override(text: str) -> tuple[str, WeightBits]:
    """`PART=int4` as `weights_for` and --weights-for take it."""
    part, bits = _split_override(text, WEIGHT_BITS)
    return part, cast(WeightBits, bits)


# The activations' precision (`[options] precision`, `--precision`; lower/activation_bits.py): "int8", or
# "int16" (8w16a): the convolution, depthwise and fully connected layers read and write 16-bit
# activations (symmetric, zero point 0) with int8 weights and 64-bit biases, run by CMSIS-NN's s16
# kernels (twice the activation bytes, about 48 dB more headroom). `precision_for` overrides it per layer.
Precision = Literal["int8", "int16"]
PRECISIONS: tuple[Precision, ...] = get_args(Precision)
DEFAULT_PRECISION: Precision = "int8"
# ... or "auto" (lower/precision_choice.py): int16 for the layers whose 16 bits gain the most output SQNR per
# activation byte added, as few as reach `sqnr_target` (dB; default: the all-int16 program's less
# AUTO_PRECISION_SLACK_DB), each calibration sample's SQNR averaged.
PrecisionSetting = Literal["int8", "int16", "auto"]
PRECISION_SETTINGS: tuple[PrecisionSetting, ...] = get_args(PrecisionSetting)
AUTO_PRECISION_SLACK_DB = 1.0


def parse_precision_override(text: str) -> tuple[str, Precision]:
    """`PART=int16` as `precision_for` and --precision-for take it."""
    part, bits = _split_override(text, PRECISIONS)
    return part, cast(Precision, bits)
