"""A 1-D signal denoiser: where 8-bit activations are not enough (issue 52's 8w16a sample).

A window of 256 samples of a clean signal (three sinusoids of random frequency, amplitude and phase)
at a level anywhere in a 25 dB range, plus white noise about 21 dB below it, goes in; the clean
window comes out. A regression output is judged by its SNR against the clean signal, window by
window (the mean of each window's SNR in dB: a quiet window counts as much as a loud one, as in
audio). One quantization scale serves every window: int8 activations leave a quiet window a few
steps of its scale and its SNR falls; int16 ones (8w16a, `precision = "int16"`) keep 256 times
more. The data is made here (make_signals, fixed seeds); train.py trains the weights into
denoiser.pt.

Layers: a residual denoiser (DnCNN's form: the body estimates what to take off the noisy window, the
window itself passes by it to the add): four 1-D convolutions of 9 taps (1 -> 16 -> 16 -> 16 -> 1
channels, same padding), ReLU between them, the last linear, and the add. Only the add and the first
convolution see the window itself: with those two at int16 the body between them can stay int8
(`precision = "auto"`, README).
"""

from __future__ import annotations

import math
from pathlib import Path

import torch
from torch import nn

WEIGHTS = Path(__file__).with_name("denoiser.pt")
WINDOW = 256
NOISE = 0.04  # the noise's standard deviation against a full-level window (RMS about 0.6)
RANGE_DB = 25.0  # each window's level: 0 to -25 dB, uniform in dB
CHANNELS = 16
TAPS = 9


class Denoiser(nn.Module):
    """1x1x256 noisy window -> 1x1x256 clean estimate."""

    def __init__(self, weights: str | Path | None = WEIGHTS) -> None:
        super().__init__()
        pad = TAPS // 2
        self.conv1 = nn.Conv1d(1, CHANNELS, TAPS, padding=pad)
        self.conv2 = nn.Conv1d(CHANNELS, CHANNELS, TAPS, padding=pad)
        self.conv3 = nn.Conv1d(CHANNELS, CHANNELS, TAPS, padding=pad)
        self.out = nn.Conv1d(CHANNELS, 1, TAPS, padding=pad)
        if weights is not None and Path(weights).is_file():
            self.load_state_dict(torch.load(weights, map_location="cpu", weights_only=True))
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.conv1(x))
        h = torch.relu(self.conv2(h))
        h = torch.relu(self.conv3(h))
        return x + self.out(h)


def make_signals(count: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(noisy, clean), each count x 1 x 256: three sinusoids of 2 to 24 cycles a window, amplitudes 0.1 to
    0.6, random phases, the window at a level of 0 to -RANGE_DB dB, and white noise of NOISE standard
    deviation at that level on the noisy copy."""
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(WINDOW, dtype=torch.float32) / WINDOW
    cycles = 2 + 22 * torch.rand(count, 3, 1, generator=g)
    amplitude = 0.1 + 0.5 * torch.rand(count, 3, 1, generator=g)
    phase = 2 * math.pi * torch.rand(count, 3, 1, generator=g)
    level = 10 ** (-RANGE_DB * torch.rand(count, 1, 1, generator=g) / 20)
    clean = level * (amplitude * torch.sin(2 * math.pi * cycles * t + phase)).sum(1, keepdim=True)
    noisy = clean + level * NOISE * torch.randn(count, 1, WINDOW, generator=g)
    return noisy, clean


def snr_db(clean: torch.Tensor, estimate: torch.Tensor) -> float:
    """The estimate's SNR against the clean signal, window by window, averaged in dB (segmental SNR)."""
    signal = (clean**2).sum(dim=(1, 2))
    error = ((estimate - clean) ** 2).sum(dim=(1, 2)).clamp_min(1e-30)
    return float((10 * torch.log10(signal / error)).mean())


def example_inputs() -> tuple[torch.Tensor]:
    noisy, _ = make_signals(1, seed=7)
    return (noisy,)


def calibration_data() -> list[tuple[torch.Tensor]]:
    """64 windows of their own seed (training uses seed 0, evaluation seed 2)."""
    noisy, _ = make_signals(64, seed=1)
    return [(noisy[i : i + 1],) for i in range(len(noisy))]


def evaluation_data() -> tuple[torch.Tensor, torch.Tensor]:
    """200 held-out windows: noisy inputs and the clean targets."""
    return make_signals(200, seed=2)
