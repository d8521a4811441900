"""Expected outputs of the lowered program, and its quantization error against the float model.

The firmware is later checked against `reference.npz` bit-exact: the expected outputs come from the
lowered program run in Python, not from the float model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from cmx_gen.lowering import LoweredModel


def _logical(tensor: torch.Tensor) -> np.ndarray:
    """Contiguous NCHW numpy array: the firmware re-lays it out by the program's dim_order."""
    return tensor.detach().contiguous().cpu().numpy()


def reference_arrays(lowered: LoweredModel) -> dict[str, np.ndarray]:
    arrays = {f"input_{i}": _logical(x) for i, x in enumerate(lowered.sample_inputs)}
    arrays.update({f"output_{i}": _logical(y) for i, y in enumerate(lowered.reference_outputs)})
    return arrays


def write_reference(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """np.savez with a fixed zip timestamp would still embed one; write arrays sorted for stable bytes."""
    with path.open("wb") as handle:
        np.savez(handle, **dict(sorted(arrays.items())))


def load_reference(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as npz:
        return {key: npz[key] for key in npz.files}


def _is_classifier(outputs: tuple[torch.Tensor, ...]) -> bool:
    return len(outputs) == 1 and outputs[0].dim() == 2 and outputs[0].shape[1] > 1


def quantization_error(lowered: LoweredModel) -> dict[str, Any]:
    """Max abs error (float vs INT8 program) on the sample input and over the calibration set.

    For a classifier (one [N, K] output) also the top-1 agreement between float and INT8 over
    the calibration set.
    """
    pairs = [(lowered.float_outputs, lowered.reference_outputs), *lowered.calibration_outputs]
    max_abs = 0.0
    for float_out, int8_out in pairs:
        for f, q in zip(float_out, int8_out):
            max_abs = max(max_abs, float((f.float() - q.float()).abs().max()))
    result: dict[str, Any] = {
        "max_abs_err": round(max_abs, 6),
        "sample_max_abs_err": round(
            max(float((f.float() - q.float()).abs().max()) for f, q in zip(lowered.float_outputs, lowered.reference_outputs)), 6
        ),
        "samples": len(pairs),
        "top1_agreement": None,
    }
    if _is_classifier(lowered.float_outputs) and lowered.calibration_outputs:
        agree = sum(
            int(torch.equal(f[0].argmax(dim=-1), q[0].argmax(dim=-1))) for f, q in lowered.calibration_outputs
        )
        result["top1_agreement"] = round(agree / len(lowered.calibration_outputs), 4)
    return result
