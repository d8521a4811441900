"""Models written the ordinary PyTorch way, as a user brings them (issue 53): no layer picked to suit
cmx-gen. Each has the example_inputs() a user's file would."""

import torch
from torch import nn


class TinyUNet(nn.Module):
    """An encoder-decoder with a skip: a strided grouped conv down, a dilated grouped conv, a depthwise
    conv with channel multiplier 2, nn.Upsample back up, torch.cat of the skip, a sigmoid mask."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.enc = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU())
        self.down = nn.Sequential(nn.Conv2d(16, 32, 3, stride=2, padding=1, groups=4), nn.ReLU())
        self.mid = nn.Sequential(
            nn.Conv2d(32, 32, 3, padding=2, dilation=2, groups=2),
            nn.ReLU(),
            nn.Conv2d(32, 64, 3, padding=1, groups=32),
            nn.ReLU(),
            nn.Conv2d(64, 32, 1),
            nn.ReLU(),
        )
        self.up = nn.Upsample(scale_factor=2)
        self.dec = nn.Sequential(nn.Conv2d(48, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 1, 1))

    def forward(self, x):
        skip = self.enc(x)
        x = self.mid(self.down(skip))
        x = torch.cat([self.up(x), skip], dim=1)
        return torch.sigmoid(self.dec(x))


class SkipConcat(nn.Module):
    """Two branches of very different ranges concatenated along the channels (DenseNet-style)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.a = nn.Conv2d(3, 8, 3, padding=1)
        self.b = nn.Conv2d(8, 8, 3, padding=1)
        with torch.no_grad():
            self.b.weight.mul_(8)
        self.head = nn.Conv2d(16, 4, 1)

    def forward(self, x):
        e = torch.relu(self.a(x))
        return self.head(torch.cat([torch.relu(self.b(e)), e], dim=1))


def example_inputs():
    return (torch.randn(1, 3, 16, 16, generator=torch.Generator().manual_seed(0)),)


def calibration_data(n: int = 16):
    g = torch.Generator().manual_seed(1)
    return [(torch.randn(1, 3, 16, 16, generator=g),) for _ in range(n)]
