"""Models for 4-bit weights (`weights = "int4"`, issue 52), written as a user writes them: a small image
classifier whose layers take every s4 kind and the layouts whose packing crosses a byte (an RGB 3x3 stem:
27 weights a filter; a depthwise layer of 5 channels: 45 weights; a linear layer of 45 inputs), and a
1-D convolution with a linear head."""

import torch
from torch import nn


class Int4Net(nn.Module):
    """conv 3x3 (3 -> 5), depthwise 3x3 (5), pointwise (5 -> 8), depthwise 5x5 stride 2 (8), flatten, linear
    (8 x 3 x 3 = 72 -> 45), linear (45 -> 10)."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(52)
        self.stem = nn.Sequential(nn.Conv2d(3, 5, 3, padding=1), nn.BatchNorm2d(5), nn.ReLU())
        self.dw = nn.Sequential(nn.Conv2d(5, 5, 3, padding=1, groups=5), nn.ReLU())
        self.pw = nn.Sequential(nn.Conv2d(5, 8, 1), nn.ReLU())
        self.dw5 = nn.Sequential(nn.Conv2d(8, 8, 5, stride=2, padding=2, groups=8), nn.ReLU())
        self.fc = nn.Sequential(nn.Flatten(), nn.Linear(8 * 3 * 3, 45), nn.ReLU())
        self.head = nn.Linear(45, 10)
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.fc(self.dw5(self.pw(self.dw(self.stem(x))))))


def example_inputs() -> tuple[torch.Tensor]:
    return (torch.rand(1, 3, 6, 6, generator=torch.Generator().manual_seed(1)),)


def calibration_data() -> list[tuple[torch.Tensor]]:
    g = torch.Generator().manual_seed(2)
    return [(torch.rand(1, 3, 6, 6, generator=g),) for _ in range(16)]


class Int4Multiplier(nn.Module):
    """A depthwise layer with a channel multiplier (4 -> 8, groups 4) between two convolutions: CMSIS-NN's
    s4 wrapper sends it to arm_depthwise_conv_s4, which computes other results, so it keeps the int8 kind."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(53)
        self.stem = nn.Conv2d(3, 4, 1)
        self.dw = nn.Conv2d(4, 8, 3, padding=1, groups=4)
        self.pw = nn.Conv2d(8, 4, 1)
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pw(torch.relu(self.dw(torch.relu(self.stem(x)))))
