"""Keyword spotting TC-ResNet8: temporal (1-D) convolutions over MFCC frames, in plain torch.

Choi et al., "Temporal Convolution for Real-time Keyword Spotting on Mobile Devices" (Interspeech
2019): the 40 MFCC coefficients are the channels and time is the one axis, so every layer is a
Conv1d. Input: 40 coefficients x 101 frames (1x40x101), output: 12 class scores (softmax
probabilities: 10 keywords, silence, unknown). Weights are random (fixed seed): the Speech Commands
data cannot be fetched here. BatchNorm statistics are estimated on the synthetic calibration data
so activations have a realistic range for INT8 calibration.
"""

from __future__ import annotations

import torch
from torch import nn

SEED = 2026
NUM_CLASSES = 12
INPUT_SHAPE = (1, 40, 101)


class Block(nn.Module):
    """Two 9-tap temporal convolutions (+BN, ReLU), the first with stride 2, and a 1-tap strided
    shortcut (+BN, ReLU): the TC-ResNet residual block."""

    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv1d(cin, cout, 9, stride=2, padding=4, bias=False)
        self.bn1 = nn.BatchNorm1d(cout)
        self.conv2 = nn.Conv1d(cout, cout, 9, padding=4, bias=False)
        self.bn2 = nn.BatchNorm1d(cout)
        self.shortcut = nn.Conv1d(cin, cout, 1, stride=2, bias=False)
        self.bn3 = nn.BatchNorm1d(cout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x)))))
        return torch.relu(y + torch.relu(self.bn3(self.shortcut(x))))


class TCResNet8(nn.Module):
    """TC-ResNet8 (width 1): conv 3 (40->16), blocks 16->24->32->48 (each halves time), pool, dense."""

    def __init__(self, num_classes: int = NUM_CLASSES, seed: int = SEED) -> None:
        super().__init__()
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            self.conv = nn.Conv1d(40, 16, 3, padding=1, bias=False)
            self.blocks = nn.Sequential(Block(16, 24), Block(24, 32), Block(32, 48))
            self.pool = nn.AvgPool1d(13)  # 101 -> 51 -> 26 -> 13 frames: one average over time
            self.fc = nn.Linear(48, num_classes)
            estimate_batchnorm(self, synthetic_inputs(seed + 1, 32))
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.blocks(self.conv(x))
        x = torch.flatten(self.pool(x), 1)  # one frame left: a free view
        return torch.softmax(self.fc(x), dim=1)


def synthetic_inputs(seed: int, n: int) -> torch.Tensor:
    """n deterministic MFCC-like windows: unit-variance noise (standardised MFCCs)."""
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
    return (synthetic_inputs(SEED + 2, 1),)


def calibration_data(n: int = 32) -> list[tuple[torch.Tensor]]:
    x = synthetic_inputs(SEED + 3, n)
    return [(x[i : i + 1],) for i in range(n)]
