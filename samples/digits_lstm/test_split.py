"""Write the digits test split (360 digits as 16 steps of 4 pixels, and their labels) for `cmx-gen run APP --data`.

Run: python samples/digits_lstm/test_split.py [--out test.npz]
then: cmx-gen run samples/digits_lstm/build/app --data test.npz
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from model import evaluation_data  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("test.npz"))
    args = parser.parse_args()
    x, y = evaluation_data()
    np.savez(args.out, input=x.contiguous().numpy(), labels=y.numpy())
    print(f"wrote {args.out}: {len(y)} digits {tuple(x.shape[1:])}, labels")


if __name__ == "__main__":
    main()
