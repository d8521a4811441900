"""Visual wake words MobileNetV1 (width 0.25), the MLPerf Tiny VWW reference architecture, in plain torch.

Input: a 96x96 RGB image as 1x3x96x96 (channels_last), values 0..1.
Output: 2 class probabilities (no person, person), softmax as in the reference.
Weights are random (fixed seed): the Visual Wake Words data cannot be fetched
here. BatchNorm statistics are estimated on the synthetic calibration data so
activations have a realistic range for INT8 calibration.
"""

from __future__ import annotations

import torch
from torch import nn

SEED = 2025
NUM_CLASSES = 2
INPUT_SHAPE = (1, 3, 96, 96)
# (output channels, stride) of the 13 depthwise-separable blocks at width 0.25.
BLOCKS = [(16, 1), (32, 2), (32, 1), (64, 2), (64, 1), (128, 2),
          (128, 1), (128, 1), (128, 1), (128, 1), (128, 1), (256, 2), (256, 1)]


class DepthwiseSeparable(nn.Module):
    """3x3 depthwise conv + BN + ReLU, then 1x1 pointwise conv + BN + ReLU."""

    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.depthwise = nn.Conv2d(cin, cin, 3, stride=stride, padding=1, groups=cin, bias=False)
        self.bn1 = nn.BatchNorm2d(cin)
        self.pointwise = nn.Conv2d(cin, cout, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.bn1(self.depthwise(x)))
        return torch.relu(self.bn2(self.pointwise(x)))


class MobileNetV1025(nn.Module):
    """MobileNetV1 alpha 0.25: 3x3/2 stem of 8 channels, 13 depthwise-separable blocks, 3x3 average pool."""

    def __init__(self, num_classes: int = NUM_CLASSES, seed: int = SEED) -> None:
        super().__init__()
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            self.stem = nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)  # 96 -> 48
            self.bn = nn.BatchNorm2d(8)
            layers, cin = [], 8
            for cout, stride in BLOCKS:
                layers.append(DepthwiseSeparable(cin, cout, stride))
                cin = cout
            self.blocks = nn.Sequential(*layers)  # 48 -> 3
            # A fixed 3x3 pool, not AdaptiveAvgPool2d: same result on the 3x3 map, and
            # count_include_pad=False keeps the lowering from inserting a (no-op) pad copy.
            self.pool = nn.AvgPool2d(3, count_include_pad=False)
            self.fc = nn.Linear(cin, num_classes)
            estimate_batchnorm(self, synthetic_inputs(seed + 1, 32))
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.bn(self.stem(x)))
        x = self.pool(self.blocks(x))
        return torch.softmax(self.fc(torch.flatten(x, 1)), dim=1)  # 1x1 spatial: a free view


def synthetic_inputs(seed: int, n: int) -> torch.Tensor:
    """n deterministic images in 0..1: smooth random colour fields plus pixel noise."""
    g = torch.Generator().manual_seed(seed)
    coarse = torch.rand((n, 3, 6, 6), generator=g)
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


def calibration_data(n: int = 16) -> list[tuple[torch.Tensor]]:
    x = synthetic_inputs(SEED + 3, n)
    return [(x[i : i + 1].to(memory_format=torch.channels_last),) for i in range(n)]
