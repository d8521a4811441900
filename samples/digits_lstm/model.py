"""Handwritten digits read as a sequence by an LSTM (scikit-learn's load_digits: real data shipped in the
package, nothing downloaded).

Each 8x8 image is read a half row at a time: 16 steps of 4 pixels, one nn.LSTM layer of 48, the last step's
hidden state classified by a linear layer. The sample of a recurrent model whose state carries the answer
through every step (issue 52): at 16-bit activations (cmx.toml's `precision = "int16"`) the LSTM runs on
CMSIS-NN's arm_lstm_unidirectional_s16.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn

WEIGHTS = Path(__file__).with_name("digits_lstm.pt")
SPLIT_SEED = 0  # train/test split of the 1797 images (the digits sample's); train.py uses the same
TEST_FRACTION = 0.2
STEPS, WIDTH = 16, 4  # a half row of pixels a step


class DigitsLstm(nn.Module):
    """[1, 16, 4] pixel values 0..1 (batch first) -> 10 logits."""

    def __init__(self, weights: str | Path | None = WEIGHTS) -> None:
        super().__init__()
        self.lstm = nn.LSTM(WIDTH, 48, batch_first=True)
        self.fc = nn.Linear(48, 10)
        if weights is not None and Path(weights).is_file():
            self.load_state_dict(torch.load(weights, map_location="cpu", weights_only=True))
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y, _ = self.lstm(x)
        return self.fc(y[:, -1])


def load_split(split: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Sequences Nx16x4 (float, 0..1) and int64 labels of 'train' or 'test'."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    data = load_digits()
    sequences = (data.images.astype(np.float32) / 16.0).reshape(-1, STEPS, WIDTH)
    x_tr, x_te, y_tr, y_te = train_test_split(
        sequences, data.target, test_size=TEST_FRACTION, random_state=SPLIT_SEED, stratify=data.target
    )
    x, y = (x_tr, y_tr) if split == "train" else (x_te, y_te)
    return torch.from_numpy(x), torch.from_numpy(y.astype(np.int64))


def example_inputs() -> tuple[torch.Tensor]:
    """One test-split digit, 1x16x4."""
    x, _ = load_split("test")
    return (x[:1].clone(),)


def calibration_data(n: int = 64) -> list[tuple[torch.Tensor]]:
    """The first n train-split digits, one 1x16x4 tuple each."""
    x, _ = load_split("train")
    return [(x[i : i + 1].clone(),) for i in range(n)]


def evaluation_data() -> tuple[torch.Tensor, torch.Tensor]:
    """The whole test split: inputs Nx16x4 and labels N."""
    return load_split("test")
