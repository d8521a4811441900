"""CIFAR-10 ResNet-8, the MLPerf Tiny image classification reference architecture, in plain torch.

Input: a 32x32 RGB image as 1x3x32x32 (channels_last), values 0..1.
Output: 10 class probabilities (softmax, as in the reference).
Weights are random (fixed seed): CIFAR-10 cannot be fetched here. BatchNorm
statistics are estimated on the synthetic calibration data so activations have
a realistic range for INT8 calibration.
"""

from __future__ import annotations

import torch
from torch import nn

SEED = 2026
NUM_CLASSES = 10
INPUT_SHAPE = (1, 3, 32, 32)


def conv_bn(cin: int, cout: int, kernel: int, stride: int = 1) -> nn.Sequential:
    """Convolution ('same' padding) followed by BatchNorm; BN folds into the conv when quantizing."""
    return nn.Sequential(
        nn.Conv2d(cin, cout, kernel, stride=stride, padding=kernel // 2, bias=False),
        nn.BatchNorm2d(cout),
    )


class ResidualStack(nn.Module):
    """conv3x3-BN-ReLU, conv3x3-BN, plus the shortcut (1x1 conv when the shape changes), then ReLU."""

    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = conv_bn(cin, cout, 3, stride)
        self.conv2 = conv_bn(cout, cout, 3)
        self.shortcut = (
            nn.Conv2d(cin, cout, 1, stride=stride) if stride != 1 or cin != cout else nn.Identity()
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv2(torch.relu(self.conv1(x)))
        return torch.relu(y + self.shortcut(x))


class ResNet8(nn.Module):
    """3x3 conv of 16 channels, three residual stacks (16, 32/2, 64/2), 8x8 average pool, dense."""

    def __init__(self, num_classes: int = NUM_CLASSES, seed: int = SEED) -> None:
        super().__init__()
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            self.stem = conv_bn(3, 16, 3)
            self.stacks = nn.Sequential(
                ResidualStack(16, 16, 1),   # 32x32
                ResidualStack(16, 32, 2),   # 16x16
                ResidualStack(32, 64, 2),   # 8x8
            )
            # The reference's AveragePooling2D(8) over the 8x8 map; count_include_pad=False
            # keeps the lowering from inserting a (no-op) pad copy.
            self.pool = nn.AvgPool2d(8, count_include_pad=False)
            self.fc = nn.Linear(64, num_classes)
            estimate_batchnorm(self, synthetic_inputs(seed + 1, 32))
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stacks(torch.relu(self.stem(x)))
        x = torch.flatten(self.pool(x), 1)  # 1x1 spatial: a free view
        return torch.softmax(self.fc(x), dim=1)


def synthetic_inputs(seed: int, n: int) -> torch.Tensor:
    """n deterministic images in 0..1: smooth random colour fields plus pixel noise."""
    g = torch.Generator().manual_seed(seed)
    coarse = torch.rand((n, 3, 4, 4), generator=g)
    smooth = nn.functional.interpolate(coarse, size=INPUT_SHAPE[2:], mode="bilinear", align_corners=False)
    noise = 0.1 * torch.randn((n, *INPUT_SHAPE[1:]), generator=g)
    return (smooth + noise).clamp(0.0, 1.0)


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
