"""Models for 16-bit activations (`precision = "int16"`, 8w16a, issue 52), written as a user writes them: a
small image network whose layers take every s16 kind (a 3x3 stem with BatchNorm and ReLU, a depthwise 3x3, a
pointwise, a depthwise 5x5 stride 2 with ReLU6, a flattened linear head) and a 1-D signal regressor."""

import torch
from torch import nn


class Int16Net(nn.Module):
    """conv 3x3 (3 -> 6), depthwise 3x3 (6), pointwise (6 -> 8), depthwise 5x5 stride 2 (8), flatten, linear
    (8 x 3 x 3 = 72 -> 24), linear (24 -> 10)."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(16)
        self.stem = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.BatchNorm2d(6), nn.ReLU())
        self.dw = nn.Sequential(nn.Conv2d(6, 6, 3, padding=1, groups=6), nn.ReLU())
        self.pw = nn.Sequential(nn.Conv2d(6, 8, 1), nn.ReLU())
        self.dw5 = nn.Sequential(nn.Conv2d(8, 8, 5, stride=2, padding=2, groups=8), nn.ReLU6())
        self.fc = nn.Sequential(nn.Flatten(), nn.Linear(8 * 3 * 3, 24), nn.ReLU())
        self.head = nn.Linear(24, 10)
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.fc(self.dw5(self.pw(self.dw(self.stem(x))))))


def example_inputs() -> tuple[torch.Tensor]:
    return (torch.rand(1, 3, 6, 6, generator=torch.Generator().manual_seed(1)),)


def calibration_data() -> list[tuple[torch.Tensor]]:
    g = torch.Generator().manual_seed(2)
    return [(torch.rand(1, 3, 6, 6, generator=g),) for _ in range(16)]


class Int16Residual(nn.Module):
    """A residual block as a denoiser or a U-Net writes it: conv, ReLU, conv, the input added back, ReLU;
    a gate (the block's output times a 1x1 convolution of it); a max pool 2x2 and an average pool 2x2 after
    it; a 1x1 head."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(17)
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.conv1 = nn.Conv2d(8, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.gate = nn.Conv2d(8, 8, 1)
        self.head = nn.Conv2d(8, 4, 1)
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.stem(x))
        y = self.conv2(torch.relu(self.conv1(x)))
        x = torch.relu(x + y)
        x = x * self.gate(x)
        x = nn.functional.avg_pool2d(nn.functional.max_pool2d(x, 2), 2)
        return self.head(x)


class TwoHeads(nn.Module):
    """Two outputs: a 16-bit head (`fine`) beside an 8-bit one (`coarse`), as --precision-for fine=int16 makes."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(18)
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Flatten())
        self.fine = nn.Linear(8 * 6 * 6, 4)
        self.coarse = nn.Linear(8 * 6 * 6, 3)
        self.eval()

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        features = self.body(x)
        return self.fine(features), self.coarse(features)


class Int16Gate(nn.Module):
    """A gated unit as recurrent cells and gated MLPs write it: sigmoid(a(x)) * tanh(b(x)), then a linear
    layer; 6 steps of 12 features."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(6)
        self.a, self.b, self.out = nn.Linear(12, 16), nn.Linear(12, 16), nn.Linear(16, 4)
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(torch.sigmoid(self.a(x)) * torch.tanh(self.b(x)))

    def example_inputs(self) -> tuple[torch.Tensor]:
        return (torch.randn(1, 6, 12, generator=torch.Generator().manual_seed(7)),)

    def calibration_data(self) -> list[tuple[torch.Tensor]]:
        g = torch.Generator().manual_seed(8)
        return [(torch.randn(1, 6, 12, generator=g) * 2,) for _ in range(16)]
