"""Models for the model-slot tests (placement = "slot"), written as a product team would: the network
in code, its trained weights in a file beside it (`slot_weights.pt`), so retraining changes the file
and not the code. SlotCnnWide (more channels: more arena) and SlotCnnAvgPool (a layer kind more, the same sizes) are
models a firmware built for SlotCnn must refuse. SlotMlpLarge has more weights than a slot holds."""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

WEIGHTS = Path(__file__).with_name("slot_weights.pt")


class SlotCnn(nn.Module):
    width = 8

    def __init__(self):
        super().__init__()
        torch.manual_seed(5)
        self.c1 = nn.Conv2d(1, self.width, 3, padding=1)
        self.c2 = nn.Conv2d(self.width, self.width, 3, padding=1)
        self.pool = self.pooling()
        self.fc = nn.Linear(self.width * 6 * 6, 4)
        if WEIGHTS.is_file():  # the trained weights, when the team has some
            self.load_state_dict(torch.load(WEIGHTS))

    def pooling(self) -> nn.Module:
        return nn.MaxPool2d(2)

    def body(self, x):
        x = self.pool(torch.relu(self.c2(torch.relu(self.c1(x)))))
        return self.fc(x.flatten(1))

    def forward(self, x):
        return self.body(x)

    def example_inputs(self):
        return (torch.randn(1, 1, 12, 12, generator=torch.Generator().manual_seed(0)),)

    def calibration_data(self):
        return [(torch.randn(1, 1, 12, 12, generator=torch.Generator().manual_seed(s)),) for s in range(1, 9)]


class SlotCnnWide(SlotCnn):
    width = 48


class SlotCnnAvgPool(SlotCnn):
    def pooling(self) -> nn.Module:
        return nn.AvgPool2d(2)


class SlotMlpLarge(nn.Module):
    """About 690 KB of int8 weights, more than the AN386's 512 KiB slots: its weights go to the slot's
    weights area (the PSRAM), its program's head stays in the slot."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(9)
        self.fc1 = nn.Linear(768, 768)
        self.fc2 = nn.Linear(768, 128)
        self.fc3 = nn.Linear(128, 10)

    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))

    def example_inputs(self):
        return (torch.randn(1, 768, generator=torch.Generator().manual_seed(0)),)

    def calibration_data(self):
        return [(torch.randn(1, 768, generator=torch.Generator().manual_seed(s)),) for s in range(1, 9)]


def retrain(seed: int) -> None:
    """Stand-in for a training run: SlotCnn's weights, other values, written where SlotCnn loads them."""
    torch.manual_seed(seed)
    model = SlotCnn()
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(1.0 + 0.5 * torch.rand_like(p))
    torch.save(model.state_dict(), WEIGHTS)
