"""Writes a model file whose weights live in a file beside it, so a test can retrain it (change
the file) and see which of an app's files change."""

from __future__ import annotations

import textwrap
from pathlib import Path

WEIGHTED = textwrap.dedent("""
    from pathlib import Path
    import torch
    from torch import nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3, padding=1)
            self.fc = nn.Linear(8 * 4 * 4, 4)
            self.load_state_dict(torch.load(Path(__file__).with_name("weights.pt")))

        def forward(self, x):
            x = nn.functional.max_pool2d(torch.relu(self.conv(x)), 2)
            return self.fc(x.flatten(1))

    def example_inputs():
        g = torch.Generator().manual_seed(0)
        return ((torch.rand(1, 3, 8, 8, generator=g) * 2 - 1).contiguous(memory_format=torch.channels_last),)

    def calibration_data():
        g = torch.Generator().manual_seed(1)
        return [((torch.rand(1, 3, 8, 8, generator=g) * 2 - 1).contiguous(memory_format=torch.channels_last),)
                for _ in range(8)]
""")


def weighted_model(folder: Path, seed: int) -> str:
    """Write the model file and weights drawn from `seed`; its spec."""
    import torch
    from torch import nn

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.py").write_text(WEIGHTED)
    torch.manual_seed(seed)
    state = {
        **{f"conv.{k}": v for k, v in nn.Conv2d(3, 8, 3, padding=1).state_dict().items()},
        **{f"fc.{k}": v for k, v in nn.Linear(8 * 4 * 4, 4).state_dict().items()},
    }
    torch.save(state, folder / "weights.pt")
    return f"{folder / 'model.py'}:Net"
