"""Train the denoiser on windows make_signals makes and write denoiser.pt next to this file.

Deterministic (fixed seeds, one CPU thread): the same torch version gives the same weights. About a
minute on one core. Run: python samples/denoiser/train.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from model import WEIGHTS, Denoiser, evaluation_data, make_signals, snr_db  # noqa: E402

STEPS = 3000
BATCH = 64
LR = 2e-3


def main() -> None:
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = Denoiser(weights=None).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, STEPS)
    noisy, clean = make_signals(BATCH * 64, seed=0)
    for step in range(STEPS):
        at = (step % 64) * BATCH
        target = clean[at : at + BATCH]
        # each window's error against its own energy: a quiet window weighs as much as a loud one
        error = ((model(noisy[at : at + BATCH]) - target) ** 2).sum(dim=(1, 2))
        loss = torch.mean(error / (target**2).sum(dim=(1, 2)))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
    model.eval()
    x, y = evaluation_data()
    with torch.no_grad():
        print(f"input SNR {snr_db(y, x):.2f} dB, float output SNR {snr_db(y, model(x)):.2f} dB")
    torch.save(model.state_dict(), WEIGHTS)
    print(f"wrote {WEIGHTS}")


if __name__ == "__main__":
    main()
