"""MobileNetV2 (torchvision's layer configuration) in plain torch: 224x224 RGB, 1000 classes.

The layers are torchvision's `mobilenet_v2()` (width 1.0): a 3x3/2 stem of 32 channels, 17
inverted-residual blocks (expand 1x1 + ReLU6, depthwise 3x3 + ReLU6, project 1x1; a residual add
where stride is 1 and the channels match), a 1x1 to 1280, a global average pool and a 1000-way
linear layer. No torchvision import: its wheel here needs CUDA libraries.

Weights are random (fixed seed), BatchNorm statistics estimated on synthetic images so activations
have realistic ranges for INT8 calibration. `MobileNetV2Small` is the same network at width 0.35 on
96x96 images, for tests and quick runs.
"""

from __future__ import annotations

import torch
from torch import nn

SEED = 2026
# torchvision's inverted_residual_setting: expansion t, output channels c, repeats n, first stride s.
SETTING = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]


def _divisible(v: float, divisor: int = 8) -> int:
    """torchvision's _make_divisible: channels rounded to a multiple of 8, never below 90 %."""
    new = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new + divisor if new < 0.9 * v else new


def _conv_bn(cin: int, cout: int, kernel: int, stride: int, groups: int = 1, relu: bool = True) -> nn.Sequential:
    layers: list[nn.Module] = [
        nn.Conv2d(cin, cout, kernel, stride, (kernel - 1) // 2, groups=groups, bias=False),
        nn.BatchNorm2d(cout),
    ]
    if relu:
        layers.append(nn.ReLU6())
    return nn.Sequential(*layers)


class InvertedResidual(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, expand: int) -> None:
        super().__init__()
        hidden = round(cin * expand)
        self.residual = stride == 1 and cin == cout
        layers: list[nn.Module] = [] if expand == 1 else [_conv_bn(cin, hidden, 1, 1)]
        layers += [_conv_bn(hidden, hidden, 3, stride, groups=hidden), _conv_bn(hidden, cout, 1, 1, relu=False)]
        self.conv = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.conv(x) if self.residual else self.conv(x)


class MobileNetV2(nn.Module):
    """torchvision's mobilenet_v2(width_mult=1.0) on 224x224 images."""

    SIZE = 224

    def __init__(self, width: float = 1.0, num_classes: int = 1000, seed: int = SEED) -> None:
        super().__init__()
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            cin = _divisible(32 * width)
            last = _divisible(1280 * max(1.0, width))
            blocks: list[nn.Module] = [_conv_bn(3, cin, 3, 2)]
            for t, c, n, s in SETTING:
                cout = _divisible(c * width)
                for i in range(n):
                    blocks.append(InvertedResidual(cin, cout, s if i == 0 else 1, t))
                    cin = cout
            blocks.append(_conv_bn(cin, last, 1, 1))
            self.features = nn.Sequential(*blocks)
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.classifier = nn.Linear(last, num_classes)
            _estimate_batchnorm(self, synthetic_inputs(seed + 1, 8, self.SIZE))
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(torch.flatten(self.pool(self.features(x)), 1))


class MobileNetV2Small(MobileNetV2):
    """The same network at width 0.35 on 96x96 images (MCUNet's smallest ImageNet setting)."""

    SIZE = 96

    def __init__(self) -> None:
        super().__init__(width=0.35, num_classes=10)


def synthetic_inputs(seed: int, n: int, size: int) -> torch.Tensor:
    """n deterministic images in 0..1: smooth random colour fields plus pixel noise."""
    g = torch.Generator().manual_seed(seed)
    coarse = torch.rand((n, 3, 7, 7), generator=g)
    smooth = nn.functional.interpolate(coarse, size=(size, size), mode="bilinear", align_corners=False)
    return (smooth + 0.1 * torch.randn((n, 3, size, size), generator=g)).clamp(0.0, 1.0)


def _estimate_batchnorm(model: nn.Module, x: torch.Tensor) -> None:
    """BatchNorm running statistics from x (cumulative average), as a trained model would have."""
    bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
    model.train()
    with torch.no_grad():
        for chunk in x.split(4):
            model(chunk)
    model.eval()
    for m in bns:
        m.momentum = 0.1


def example_inputs(size: int = MobileNetV2.SIZE) -> tuple[torch.Tensor]:
    return (synthetic_inputs(SEED + 2, 1, size).to(memory_format=torch.channels_last),)


def calibration_data(n: int = 4, size: int = MobileNetV2.SIZE) -> list[tuple[torch.Tensor]]:
    x = synthetic_inputs(SEED + 3, n, size)
    return [(x[i : i + 1].to(memory_format=torch.channels_last),) for i in range(n)]
