"""The model-source options `lower`, `check` and `create` share: their command-line arguments, and
the ModelSource and LowerOptions those arguments make."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from cmx_gen.app.project import IO_KINDS
from cmx_gen.common.errors import ModelSourceError
from cmx_gen.common.goals import (
    DEFAULT_INPUT_MEMORY,
    DEFAULT_MEMORY_GOAL,
    DEFAULT_PRECISION,
    DEFAULT_STAGE_WEIGHTS,
    FIT,
    INPUT_MEMORIES,
    MEMORY_GOALS,
    PRECISION_SETTINGS,
    STAGE_WEIGHTS,
    WEIGHT_SETTINGS,
    parse_precision_override,
    parse_weight_override,
    stages_weights,
)

if TYPE_CHECKING:
    from cmx_gen.lower.lowering import LowerOptions
    from cmx_gen.model.source import ModelSource

MODEL_HELP = "path/model.py:Name, model.pt2 (torch.export.save), or model.pte"


def add_model_arguments(
    parser: argparse.ArgumentParser, metavar: str = "MODEL", help: str = MODEL_HELP, nargs: str | None = None
) -> None:
    """Model-source options shared by `lower`, `check` and `create` (`nargs="*"`: create's several or none)."""
    parser.add_argument("model", metavar=metavar, help=help, nargs=nargs)
    parser.add_argument(
        "--input-shape", help="example input shape, e.g. 1,1,49,10 (else example_inputs() from the file)"
    )
    parser.add_argument(
        "--input",
        metavar="FILE",
        help="a .pte's check input (.npz, one array per input, or .npy); else a generated one",
    )
    parser.add_argument("--calibration", help="calibration data: .npz (one array per input), .npy, or a folder of .npy")
    parser.add_argument(
        "--random-calibration",
        action="store_true",
        help="calibrate on random data (poor INT8 accuracy; the report says so)",
    )
    parser.add_argument(
        "--keep-fp32",
        action="append",
        metavar="PART",
        help="leave a part in float on portable kernels: a module path (features.3), a model-file line (model.py:15) "
        "or an exported node name; repeatable",
    )
    parser.add_argument(
        "--weights",
        choices=WEIGHT_SETTINGS,
        default=None,
        help="the weights of convolution, depthwise and linear layers: int8 (default), int4 (4w8a: two a "
        "byte on CMSIS-NN's s4 kernels, about half the weight bytes, more error) or auto (int4 for the layers "
        "that lose the least per byte saved, while the output keeps --sqnr-target); cmx.toml: [options] weights",
    )
    parser.add_argument(
        "--sqnr-target",
        type=float,
        default=None,
        metavar="DB",
        help="with --weights auto: the output's SQNR against float (dB, on the calibration samples) to keep, "
        "default the all-int8 program's less 3 dB; with --precision auto: to reach, each sample's averaged, "
        "default the all-int16 program's less 1 dB; cmx.toml: [options] sqnr_target",
    )
    parser.add_argument(
        "--weights-for",
        action="append",
        metavar="PART=BITS",
        type=_weight_override,
        help="one layer's weights against --weights: PART as --keep-fp32 names one, BITS int8 or int4 "
        "(output=int8); repeatable; cmx.toml: [options] weights_for",
    )
    parser.add_argument(
        "--precision",
        choices=PRECISION_SETTINGS,
        default=None,
        help="the activations of convolution, depthwise, linear and add layers: int8 (default), int16 (8w16a: "
        "CMSIS-NN's s16 kernels, twice the activation bytes, far less rounding) or auto (int16 for the layers that "
        "gain the most per byte added, until the output reaches --sqnr-target); cmx.toml: [options] precision",
    )
    parser.add_argument(
        "--precision-for",
        action="append",
        metavar="PART=BITS",
        type=_precision_override,
        help="one layer's activations against --precision: PART as --keep-fp32 names one, BITS int8 or int16 "
        "(head=int16); repeatable; cmx.toml: [options] precision_for",
    )
    parser.add_argument(
        "--per-channel-linear",
        action="store_true",
        default=None,
        help="linear layers' int8 weights with a scale per output channel (CMSIS-NN's "
        "arm_fully_connected_per_channel_s8) instead of one for the tensor; cmx.toml: [options] per_channel_linear",
    )
    parser.add_argument(
        "--io",
        choices=IO_KINDS,
        default=None,
        help="int8: the program takes and returns int8 tensors, no quantize/dequantize at its edges "
        "(the scale and zero point are in report.json and cmx_model.h); default float",
    )
    parser.add_argument(
        "--no-delegate",
        dest="delegate",
        action="store_false",
        default=None,
        help="run every operator on its own cortex_m/portable kernel instead of cmx-gen's CMSIS-NN "
        "backend (for comparison, or as a way out); cmx.toml: [options] delegate = false",
    )
    parser.add_argument(
        "--memory",
        choices=(*MEMORY_GOALS, FIT),
        default=None,
        help="what the backend's schedule favours: fast, balanced (default: the least RAM within 5 %% "
        "more instructions), min (the least RAM), or fit (the first of them that fits the board); "
        "cmx.toml: [options] memory",
    )
    parser.add_argument(
        "--input-memory",
        choices=INPUT_MEMORIES,
        default=None,
        help="where the program's inputs live: pool (default: planned with the activations; write them "
        "through cmx_input) or caller (your own buffer, a camera frame or a constant in flash, read in "
        "place and never written: cmx_input_bind; the pool shrinks by the inputs' bytes); "
        "cmx.toml: [options] input_memory",
    )
    parser.add_argument(
        "--stage-weights",
        choices=STAGE_WEIGHTS,
        default=None,
        help="widen a convolution's int8 weights into its scratch at each call (read from flash once a call) "
        "instead of reading int16 copies for every pair of output positions: auto (default: where the "
        "board's flash has wait states), yes, no; more RAM, less flash; cmx.toml: [options] stage_weights",
    )


def _weight_override(text: str) -> str:
    try:
        parse_weight_override(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{exc}: write e.g. output=int8") from exc
    return text


def _precision_override(text: str) -> str:
    try:
        parse_precision_override(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{exc}: write e.g. head=int16") from exc
    return text


def lower_options(args: argparse.Namespace, memory: str | None = None, staged: bool | None = None) -> LowerOptions:
    """The lowering options the arguments give (`memory` for one goal of --memory fit; `staged`: a
    board's choice of --stage-weights, else the setting's with no board, where auto is no)."""
    from cmx_gen.lower.lowering import LowerOptions

    goal = memory or args.memory or DEFAULT_MEMORY_GOAL
    if goal == FIT:
        raise ModelSourceError(
            "--memory fit needs a board to fit",
            "use it with create or check --board; lower takes fast, balanced or min",
        )
    return LowerOptions(
        keep_fp32=tuple(args.keep_fp32 or ()),
        io=args.io or "float",
        weights=args.weights or "int8",
        weights_for=tuple(args.weights_for or ()),
        sqnr_target=args.sqnr_target,
        precision=args.precision or DEFAULT_PRECISION,
        precision_for=tuple(args.precision_for or ()),
        per_channel_linear=bool(args.per_channel_linear),
        delegate=args.delegate is not False,
        memory=goal,
        input_memory=args.input_memory or DEFAULT_INPUT_MEMORY,
        stage_weights=(
            stages_weights(args.stage_weights or DEFAULT_STAGE_WEIGHTS, False, goal) if staged is None else staged
        ),
    )


def load_source(args: argparse.Namespace) -> ModelSource:
    from cmx_gen.model import source as model_source

    return model_source.load(
        args.model,
        input_shape=args.input_shape,
        calibration=args.calibration,
        random_calibration=args.random_calibration,
        given_input=args.input,
    )
