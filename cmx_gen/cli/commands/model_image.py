"""`cmx-gen model-image APP`: the app's model as a slot image (placement = "slot"), for one slot.

The firmware is built once; a retrained model (`cmx-gen regen APP` after the weights changed) becomes
a new image here, written to its slot by `cmx-gen flash APP --model-only` or loaded by `cmx-gen run`.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("model-image", help='write the model of a placement = "slot" app as the image of one slot')
    parser.add_argument("app", help="app folder made with --placement slot")
    parser.add_argument("--slot", default="a", help="the slot it is for: a (default) or b")
    parser.add_argument(
        "--sequence",
        type=int,
        default=None,
        help="its sequence number: the firmware runs the highest that verifies (default: one above "
        "every image already in APP/build)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cmx_gen.app.folder import AppFolder
    from cmx_gen.app.model_slots import write_image

    image = write_image(AppFolder(Path(args.app)), args.slot, args.sequence)
    print(image.line())
    print(f"next       cmx-gen run {args.app}   or   cmx-gen flash {args.app} --model-only {args.slot}")
    return 0
