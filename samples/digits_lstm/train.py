"""Train DigitsLstm on load_digits and write digits_lstm.pt next to this file.

Deterministic (fixed seeds, one CPU thread, deterministic algorithms): the same
torch version gives the same weights. Takes about a minute.
Run: python samples/digits_lstm/train.py [--out digits_lstm.pt]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).parent))
from model import WEIGHTS, DigitsLstm, evaluation_data, load_split  # noqa: E402

SEED = 0
EPOCHS = 60
BATCH = 32
LR = 1e-2


def accuracy(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    with torch.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


def main() -> None:
    parser = argparse.ArgumentParser(description="train DigitsLstm on load_digits")
    parser.add_argument("--out", type=Path, default=WEIGHTS, help=f"where to write the state_dict (default {WEIGHTS.name})")
    out = parser.parse_args().out
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    x, y = load_split("train")
    model = DigitsLstm(weights=None).train()
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, EPOCHS)
    gen = torch.Generator().manual_seed(SEED)
    for epoch in range(EPOCHS):
        order = torch.randperm(len(x), generator=gen)
        for i in range(0, len(x), BATCH):
            idx = order[i : i + BATCH]
            loss = F.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        sched.step()
    model.eval()
    xt, yt = evaluation_data()
    print(f"train accuracy {accuracy(model, x, y):.4f}  test accuracy {accuracy(model, xt, yt):.4f}")
    torch.save(model.state_dict(), out)
    print(f"wrote {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
