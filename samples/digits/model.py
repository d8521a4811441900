"""Handwritten-digit classifier for 8x8 images (scikit-learn's load_digits).

A small CNN kept inside the operator set the cortex_m backend maps to CMSIS-NN
(conv2d, relu, max_pool2d, linear), so every compute op of the lowered program
runs on a CMSIS-NN kernel. The last conv reduces the feature map to 1x1, so the
flatten before the classifier is a free view instead of a channels-last
transpose (which would cost a portable _clone_dim_order copy).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F

WEIGHTS = Path(__file__).with_name("digits.pt")
SPLIT_SEED = 0      # train/test split of the 1797 images; train.py uses the same
TEST_FRACTION = 0.2


class DigitsCNN(nn.Module):
    """1x1x8x8 image (values 0..1) -> 10 logits."""

    def __init__(self, weights: str | Path | None = WEIGHTS) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)    # 8x8
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)   # 8x8 -> pool -> 4x4
        self.conv3 = nn.Conv2d(16, 32, 3, padding=1)  # 4x4 -> pool -> 2x2
        self.conv4 = nn.Conv2d(32, 32, 2)             # 2x2 -> 1x1
        self.fc = nn.Linear(32, 10)
        if weights is not None and Path(weights).is_file():
            self.load_state_dict(torch.load(weights, map_location="cpu", weights_only=True))
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = F.max_pool2d(F.relu(self.conv3(x)), 2)
        x = F.relu(self.conv4(x))
        return self.fc(torch.flatten(x, 1))


def load_split(split: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Images Nx1x8x8 (float, 0..1, channels_last) and int64 labels of 'train' or 'test'."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    data = load_digits()
    images = (data.images.astype(np.float32) / 16.0)[:, None, :, :]
    x_tr, x_te, y_tr, y_te = train_test_split(
        images, data.target, test_size=TEST_FRACTION, random_state=SPLIT_SEED, stratify=data.target
    )
    x, y = (x_tr, y_tr) if split == "train" else (x_te, y_te)
    return (torch.from_numpy(x).to(memory_format=torch.channels_last),
            torch.from_numpy(y.astype(np.int64)))


def example_inputs() -> tuple[torch.Tensor]:
    """One real test-split digit, 1x1x8x8 channels_last."""
    x, _ = load_split("test")
    return (x[:1].clone().to(memory_format=torch.channels_last),)


def calibration_data(n: int = 64) -> list[tuple[torch.Tensor]]:
    """The first n train-split images, one 1x1x8x8 tuple each."""
    x, _ = load_split("train")
    return [(x[i : i + 1].clone().to(memory_format=torch.channels_last),) for i in range(n)]


def evaluation_data() -> tuple[torch.Tensor, torch.Tensor]:
    """The whole test split: inputs Nx1x8x8 and labels N."""
    return load_split("test")
