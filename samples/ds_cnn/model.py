"""Keyword spotting DS-CNN, the MLPerf Tiny KWS reference architecture, in plain torch.

Input: 49 frames x 10 MFCC coefficients (1x1x49x10), output: 12 class scores
(softmax probabilities, as in the reference: 10 keywords, silence, unknown).
Weights are random (fixed seed): the Speech Commands data cannot be fetched
here. BatchNorm statistics are estimated on the synthetic calibration data so
activations have a realistic range for INT8 calibration.
"""

from __future__ import annotations

import torch
from torch import nn

SEED = 2024
NUM_CLASSES = 12
INPUT_SHAPE = (1, 1, 49, 10)


class DepthwiseSeparable(nn.Module):
    """3x3 depthwise conv + BN + ReLU, then 1x1 pointwise conv + BN + ReLU."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.depthwise = nn.Conv2d(channels, channels, 3, padding=1, groups=channels, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.pointwise = nn.Conv2d(channels, channels, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.bn1(self.depthwise(x)))
        return torch.relu(self.bn2(self.pointwise(x)))


class DSCNN(nn.Module):
    """DS-CNN (S) for keyword spotting: conv 10x4/2 + 4 depthwise-separable blocks of 64 channels."""

    def __init__(self, num_classes: int = NUM_CLASSES, channels: int = 64, seed: int = SEED) -> None:
        super().__init__()
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            # 'same' padding of the reference: 49x10 -> 25x5 with stride 2.
            self.conv = nn.Conv2d(1, channels, (10, 4), stride=(2, 2), padding=(5, 1), bias=False)
            self.bn = nn.BatchNorm2d(channels)
            self.blocks = nn.Sequential(*[DepthwiseSeparable(channels) for _ in range(4)])
            self.dropout1 = nn.Dropout(0.2)
            self.dropout2 = nn.Dropout(0.4)
            # The reference pools with (24, 5) over the 25x5 map (valid padding) -> 1x1.
            # count_include_pad=False keeps the lowering from inserting a (no-op) pad copy.
            self.pool = nn.AvgPool2d((24, 5), count_include_pad=False)
            self.fc = nn.Linear(channels, num_classes)
            estimate_batchnorm(self, synthetic_inputs(seed + 1, 32))
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.bn(self.conv(x)))
        if self.training:  # eval-mode Dropout would export as a copy (portable _clone_dim_order)
            x = self.dropout1(x)
        x = self.blocks(x)
        if self.training:
            x = self.dropout2(x)
        x = torch.flatten(self.pool(x), 1)  # 1x1 spatial: a free view
        return torch.softmax(self.fc(x), dim=1)


def synthetic_inputs(seed: int, n: int) -> torch.Tensor:
    """n deterministic MFCC-like frames: unit-variance noise (standardised MFCCs)."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn((n, *INPUT_SHAPE[1:]), generator=g)


def estimate_batchnorm(model: nn.Module, x: torch.Tensor) -> None:
    """Set BatchNorm running statistics from x (cumulative average), as a trained model would have."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
    model.train()
    with torch.no_grad():
        for chunk in x.split(8):
            model(chunk)
    model.eval()
    for m in bns:
        m.momentum = 0.1


def example_inputs() -> tuple[torch.Tensor]:
    return (synthetic_inputs(SEED + 2, 1).to(memory_format=torch.channels_last),)


def calibration_data(n: int = 32) -> list[tuple[torch.Tensor]]:
    x = synthetic_inputs(SEED + 3, n)
    return [(x[i : i + 1].to(memory_format=torch.channels_last),) for i in range(n)]
