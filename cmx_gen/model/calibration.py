"""Calibration data and a .pte's check input from files: .npz (one array per input, samples along axis
0), .npy, or a folder of .npy; checked against the example inputs' shapes and for NaN/inf, each in
one line naming the file."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from cmx_gen.common.errors import ModelSourceError

Inputs = tuple[torch.Tensor, ...]


def check_calibration_shapes(samples: list[Inputs], example: Inputs, where: str) -> None:
    want = [tuple(x.shape) for x in example]
    for index, sample in enumerate(samples):
        got = [tuple(x.shape) for x in sample]
        if got != want:
            raise ModelSourceError(
                f"calibration sample {index} from {where} has shape {got}, the model input is {want}",
                "make calibration_data() match the inputs (a model's own comes before its file's; or drop"
                " --input-shape), or pass --calibration FILE or --random-calibration",
            )


def _sample_tensor(array: NDArray[Any], expected: torch.Tensor, where: str) -> torch.Tensor:
    shape = tuple(expected.shape)
    if tuple(array.shape) == shape[1:] and shape[0] == 1:
        array = array.reshape(shape)
    if tuple(array.shape) != shape:
        raise ModelSourceError(
            f"calibration sample {where} has shape {tuple(array.shape)}, the model input is {shape}",
            "give samples shaped like the model input (a leading sample axis is allowed in .npz/.npy)",
        )
    return torch.from_numpy(np.ascontiguousarray(array)).to(expected.dtype)


def read_arrays(path: Path, what: str = "calibration file") -> list[NDArray[Any]]:
    """The arrays of a .npy or .npz, refusing pickles (loading one runs code) and broken files in one line."""
    if not path.is_file():
        raise ModelSourceError(f"{what} {path} not found", "check the path")
    try:
        if path.suffix == ".npy":
            return [np.load(path, allow_pickle=False)]
        with np.load(path, allow_pickle=False) as npz:
            return [npz[key] for key in npz.files]
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, KeyError) as exc:
        kind = "a zip of .npy arrays" if path.suffix == ".npz" else "a NumPy array file"
        raise ModelSourceError(
            f"{what} {path} is not {kind}: {type(exc).__name__}: {exc}",
            f"write it with np.{'savez(path, input=array)' if path.suffix == '.npz' else 'save(path, array)'} "
            "from numeric arrays (no pickled objects)",
        ) from exc


def check_finite(samples: list[Inputs], where: str) -> None:
    """NaN or Inf in a sample makes every observer's range infinite: name the sample instead."""
    for index, sample in enumerate(samples):
        for position, tensor in enumerate(sample):
            if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
                bad = int((~torch.isfinite(tensor)).sum())
                raise ModelSourceError(
                    f"{where} sample {index} (input {position}) has {bad} NaN/Inf value(s)",
                    "clean or drop those samples: calibration needs finite data",
                )


def load_calibration(path: Path, example_inputs: Inputs) -> list[Inputs]:
    """Read `.npz` (one array per input, samples on axis 0), `.npy` (one input) or a folder of `.npy`."""
    if not path.exists():
        raise ModelSourceError(f"calibration data {path} not found", "check the --calibration path")
    if path.is_dir():
        files = sorted(path.glob("*.npy"))
        if not files:
            raise ModelSourceError(f"{path} holds no .npy files", "put one .npy file per calibration sample there")
        if len(example_inputs) != 1:
            raise ModelSourceError(
                "a folder of .npy calibrates one-input models only", "use an .npz with one array per input"
            )
        return [(_sample_tensor(read_arrays(f)[0], example_inputs[0], f.name),) for f in files]
    if path.suffix not in (".npy", ".npz"):
        raise ModelSourceError(f"cannot read calibration file {path}", "use .npz, .npy or a folder of .npy files")
    arrays = read_arrays(path)
    if len(arrays) != len(example_inputs):
        raise ModelSourceError(
            f"{path.name} holds {len(arrays)} arrays, the model takes {len(example_inputs)} inputs",
            "store one array per model input, samples along axis 0",
        )
    count = {len(a) for a in arrays}
    if len(count) != 1:
        raise ModelSourceError(
            f"arrays in {path.name} hold different sample counts {sorted(count)}",
            "give every input the same number of samples",
        )
    samples: list[Inputs] = []
    for index in range(count.pop()):
        samples.append(
            tuple(_sample_tensor(a[index], x, f"{index} of {path.name}") for a, x in zip(arrays, example_inputs))
        )
    return samples


def calibration_set(
    model: str,
    example: Inputs,
    own: list[Inputs],
    own_source: str,
    calibration: str | None,
    random_calibration: bool,
    random_samples: int,
) -> tuple[list[Inputs], bool, str]:
    """The samples `model` is calibrated on, whether they are random, and where they came from: a file
    given, random inputs asked for, or the model file's own (`own`, from `own_source`)."""
    if calibration:
        samples = load_calibration(Path(calibration), example)
        return samples, False, f"{calibration} ({len(samples)} samples)"
    if random_calibration:
        generator = torch.Generator().manual_seed(1)
        samples = [
            tuple(torch.rand(x.shape, generator=generator) * 2 - 1 for x in example) for _ in range(random_samples)
        ]
        return samples, True, f"random uniform [-1, 1) ({random_samples} samples; requested with --random-calibration)"
    if own:
        check_calibration_shapes(own, example, own_source)
        return own, False, own_source
    raise ModelSourceError(
        f"no calibration data for {model}",
        "pass --calibration data.npz (or .npy, or a folder of .npy), define calibration_data() in the model file, "
        "or accept a poorer INT8 model with --random-calibration",
    )
