"""Anomaly detection deep autoencoder, the MLPerf Tiny AD (ToyADMOS) reference architecture, in plain torch.

Input: 640 features (5 frames x 128 log-mel bins) as 1x640. Output: the
reconstruction, 1x640; the anomaly score is the mean squared error between the
two, computed by the application.
Layers: 640 -> 128 -> 128 -> 128 -> 128 -> 8 -> 128 -> 128 -> 128 -> 128 -> 640,
each hidden dense layer followed by BatchNorm and ReLU, the output layer linear.
Weights are random (fixed seed): the ToyADMOS data cannot be fetched here.
BatchNorm statistics are estimated on the synthetic calibration data so
activations have a realistic range for INT8 calibration.
"""

from __future__ import annotations

import torch
from torch import nn

SEED = 2027
INPUT_DIM = 640
HIDDEN = (128, 128, 128, 128, 8, 128, 128, 128, 128)


class DenseBlock(nn.Module):
    """Linear + BatchNorm1d + ReLU; the BN folds into the linear layer when quantizing."""

    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.linear = nn.Linear(cin, cout)
        self.bn = nn.BatchNorm1d(cout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn(self.linear(x)))


class AutoEncoder(nn.Module):
    """Fully connected autoencoder with an 8-unit bottleneck."""

    def __init__(self, input_dim: int = INPUT_DIM, seed: int = SEED) -> None:
        super().__init__()
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            dims = (input_dim, *HIDDEN)
            self.blocks = nn.Sequential(*[DenseBlock(a, b) for a, b in zip(dims, dims[1:])])
            self.output = nn.Linear(HIDDEN[-1], input_dim)
            estimate_batchnorm(self, synthetic_inputs(seed + 1, 64))
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.output(self.blocks(x))


def synthetic_inputs(seed: int, n: int) -> torch.Tensor:
    """n deterministic feature vectors: unit-variance noise (standardised log-mel energies)."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn((n, INPUT_DIM), generator=g)


def estimate_batchnorm(model: nn.Module, x: torch.Tensor) -> None:
    """Set BatchNorm running statistics from x (cumulative average), as a trained model would have."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
    model.train()
    with torch.no_grad():
        for chunk in x.split(16):
            model(chunk)
    model.eval()
    for m in bns:
        m.momentum = 0.1


def example_inputs() -> tuple[torch.Tensor]:
    return (synthetic_inputs(SEED + 2, 1),)


def calibration_data(n: int = 32) -> list[tuple[torch.Tensor]]:
    x = synthetic_inputs(SEED + 3, n)
    return [(x[i : i + 1],) for i in range(n)]
