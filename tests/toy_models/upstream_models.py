"""Upstream's own cortex_m model cases (backends/cortex_m/test/models), as a user would bring them."""

import torch
from executorch.examples.models.silero_vad.export_silero_vad import CONTEXT_SIZE, HIDDEN_DIM, WINDOW_SIZE, SileroVAD16k


class SileroVad(torch.nn.Module):
    """silero_vad_16k: an STFT as a conv1d, a conv encoder, an LSTM cell, a sigmoid (test_silero_vad.py)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.vad = SileroVAD16k().eval()

    def forward(self, x, state):
        return self.vad(x, state)


def example_inputs():
    g = torch.Generator().manual_seed(0)
    return (torch.randn(1, CONTEXT_SIZE + WINDOW_SIZE, generator=g) * 0.1, torch.zeros(2, 1, HIDDEN_DIM))
