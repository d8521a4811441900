"""`cmx-gen run APP --data FILE|DIR`: a data set through the user's application on the target,
every sample checked bit-exact against the host.

The host reference of each sample comes from lowering the app's model again with the samples
attached (lowering.lower(evaluate=...)): the same kernel-exact interpreter that made the check's
reference runs each sample, and the float model gives the float accuracy. The program that
lowering makes must be byte-identical to the app's model/model.pte, or the reference would be of
another program: that is refused. The samples go to the firmware as one binary file, each
sample's inputs back to back in the program's memory order, which the application reads through
semihosting (`cmx-input=PATH` on its command line, cmx_platform_read).
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from cmx_gen.common.dim_order import from_layout, to_layout
from cmx_gen.common.errors import RunError
from cmx_gen.program.report import Report, TensorSpec

if TYPE_CHECKING:
    from cmx_gen.app.folder import AppFolder

LABEL_KEYS = ("labels", "label", "y", "targets")


class DataError(RunError):
    """Bad data for `run --data`: one line naming the sample and what was expected."""


@dataclass(frozen=True)
class DataSet:
    samples: list[tuple[NDArray[Any], ...]]  # per sample, one float array per input, logical shape
    labels: NDArray[Any] | None
    where: str


def _read(path: Path) -> dict[str, NDArray[Any]]:
    try:
        if path.suffix == ".npy":
            return {path.stem: np.load(path, allow_pickle=False)}
        with np.load(path, allow_pickle=False) as npz:
            return {key: npz[key] for key in npz.files}
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
        raise DataError(
            f"{path} is not a NumPy .npz/.npy file: {type(exc).__name__}: {exc}",
            "write it with np.savez(path, input=array, labels=labels) from numeric arrays",
        ) from exc


def _sample(array: NDArray[Any], spec: TensorSpec, where: str) -> NDArray[Any]:
    want = tuple(spec.shape)
    shape = tuple(array.shape)
    if shape == want[1:] and want and want[0] == 1:
        array = array.reshape(want)
    if tuple(array.shape) != want or array.dtype.kind not in "fiub":
        raise DataError(
            f"{where} has shape {shape} and dtype {array.dtype}, the model input is {want} "
            f"(or {want[1:]}) of real numbers",
            "give samples shaped like the model input, samples along axis 0 of each array",
        )
    if not np.isfinite(array).all():
        raise DataError(f"{where} has NaN/Inf values", "clean or drop that sample")
    return np.ascontiguousarray(array, dtype=np.float32)


def load(path: Path, labels: Path | None, report: Report) -> DataSet:
    """`.npz` (one array per input, samples on axis 0; an array named labels/label/y holds the
    labels), `.npy` (one input), or a folder of `.npy` files (one sample each, one-input models)."""
    path = Path(path)
    specs = report.inputs
    if not path.exists():
        raise DataError(f"data {path} not found", "give an .npz, an .npy or a folder of .npy files")
    found_labels: NDArray[Any] | None = None
    if path.is_dir():
        files = sorted(path.glob("*.npy"))
        if not files:
            raise DataError(f"{path} holds no .npy files", "put one .npy file per sample there, or give an .npz")
        if len(specs) != 1:
            raise DataError(
                f"a folder of .npy feeds one-input models; this one takes {len(specs)}",
                "use an .npz with one array per input",
            )
        samples: list[tuple[NDArray[Any], ...]] = [
            (_sample(np.load(f, allow_pickle=False), specs[0], f"sample {f.name}"),) for f in files
        ]
    elif path.suffix in (".npz", ".npy"):
        arrays = _read(path)
        label_key = next((k for k in LABEL_KEYS if k in arrays), None)
        if label_key:
            found_labels = arrays.pop(label_key)
        if len(arrays) != len(specs):
            raise DataError(
                f"{path.name} holds {len(arrays)} input array(s) ({', '.join(arrays)}), the model takes {len(specs)}",
                "store one array per model input, samples along axis 0 (labels as `labels`)",
            )
        columns = list(arrays.values())
        counts = {len(a) for a in columns}
        if len(counts) != 1:
            raise DataError(
                f"the arrays of {path.name} hold different sample counts {sorted(counts)}",
                "give every input the same number of samples",
            )
        samples = [
            tuple(
                _sample(a[i], spec, f"sample {i} of {path.name} (input {k})")
                for k, (a, spec) in enumerate(zip(columns, specs))
            )
            for i in range(counts.pop())
        ]
    else:
        raise DataError(f"cannot read data {path}", "use .npz, .npy or a folder of .npy files")
    if labels is not None:
        found_labels = next(iter(_read(Path(labels)).values()))
    if found_labels is not None:
        found_labels = np.asarray(found_labels).reshape(-1)
        if len(found_labels) != len(samples) or found_labels.dtype.kind not in "iu":
            raise DataError(
                f"labels: {len(found_labels)} {found_labels.dtype} value(s) for {len(samples)} sample(s)",
                "give one integer class index per sample",
            )
    if not samples:
        raise DataError(f"{path} holds no samples", "give at least one sample")
    return DataSet(samples, found_labels, str(path))


def layout(array: NDArray[Any], spec: TensorSpec) -> bytes:
    """The bytes the firmware's buffer holds: the program's dtype, in its dim order (as the app's
    reference data is laid out, model_files)."""
    return to_layout(array, spec.dim_order).tobytes()


def lsb(spec: TensorSpec) -> float:
    """One quantization step of an output in its own unit: 1 for integer outputs (--io int8), the
    scale of a float output behind a dequantize, 0 when unknown."""
    if spec.dtype.startswith(("int", "uint")):
        return 1.0
    return float(spec.quant.scale or 0.0) if spec.quant else 0.0


@dataclass(frozen=True)
class Comparison:
    """The target against the host, over the data set."""

    samples: int
    bit_exact: int
    max_lsb: float  # where not bit-exact: the largest difference, in output quantization steps
    first_differing: int | None
    target_accuracy: float | None
    host_int8_accuracy: float | None
    host_float_accuracy: float | None


def compare(
    target: list[dict[int, bytes]],
    host: list[list[NDArray[Any]]],
    floats: list[list[NDArray[Any]]],
    specs: list[TensorSpec],
    steps: list[float],
    labels: NDArray[Any] | None,
) -> Comparison:
    """`target[i]`: the output bytes the firmware printed for sample i; `host[i]` the kernel-exact
    outputs (logical shape); `floats[i]` the float model's; `steps` each output's LSB (0: raw units)."""
    exact = 0
    worst = 0.0
    first = None
    for i, (got, want) in enumerate(zip(target, host)):
        same = True
        for k, (array, spec) in enumerate(zip(want, specs)):
            expected = layout(array, spec)
            if got.get(k) == expected:
                continue
            same = False
            if got.get(k) is None or len(got[k]) != len(expected):
                worst = float("inf")
                continue
            a = np.frombuffer(got[k], dtype=array.dtype).astype(np.float64)
            b = np.frombuffer(expected, dtype=array.dtype).astype(np.float64)
            worst = max(worst, float(np.abs(a - b).max()) / (steps[k] or 1.0))
        exact += same
        if not same and first is None:
            first = i

    def accuracy(outputs: list[NDArray[Any]]) -> float | None:
        if labels is None or not outputs:
            return None
        return float(np.mean([int(np.argmax(o)) == int(y) for o, y in zip(outputs, labels)]))

    target_first = []
    for got, want in zip(target, host):
        raw = got.get(0)
        if raw is None or len(raw) != want[0].nbytes:
            target_first.append(np.full(want[0].size, -np.inf))
            continue
        target_first.append(from_layout(np.frombuffer(raw, dtype=want[0].dtype), want[0].shape, specs[0].dim_order))
    return Comparison(
        samples=len(host),
        bit_exact=exact,
        max_lsb=worst,
        first_differing=first,
        target_accuracy=accuracy(target_first),
        host_int8_accuracy=accuracy([h[0] for h in host]),
        host_float_accuracy=accuracy([f[0] for f in floats]),
    )


def np_array(tensor: object) -> NDArray[Any]:
    return np.ascontiguousarray(tensor.detach().cpu().numpy())  # type: ignore[attr-defined]


def host_references(app: AppFolder, data: DataSet) -> list:
    """Each sample's program input and outputs on the host: the app's model lowered again with the
    samples attached; its program must be the app's, byte for byte."""
    import torch

    from cmx_gen.app import project as project_mod
    from cmx_gen.common import progress
    from cmx_gen.lower.lowering import LowerOptions, lower
    from cmx_gen.lower.state import Evaluated
    from cmx_gen.model import source as model_source
    from cmx_gen.model.export import export

    project = project_mod.load(app.path)
    (model,) = project.models  # a data run is one model's (data_stream refuses an app of several)
    source = model_source.load(
        model.source,
        input_shape=model.input_shape,
        calibration=model.calibration,
        random_calibration=model.random_calibration,
    )
    if source.is_program:
        raise RunError(
            f"--data needs the model the app was made from; this app was made from a .{source.kind}",
            "give the model source in cmx.toml",
        )
    samples = [tuple(torch.from_numpy(x) for x in sample) for sample in data.samples]
    made = app.report().lowering_options
    options = LowerOptions(
        keep_fp32=model.keep_fp32,
        io=model.io,
        weights=model.weights,
        weights_for=model.weights_for,
        sqnr_target=model.sqnr_target,
        precision=model.precision,
        precision_for=model.precision_for,
        per_channel_linear=model.per_channel_linear,
        delegate=project.delegate,
        memory=made.memory,
        input_memory=made.input_memory,
        stage_weights=made.stage_weights,
    )
    choice = app.report().weight_choice
    if options.weights == "auto" and choice is not None:  # the app's choice, not a new search
        from cmx_gen.lower.weight_choice import resolved_options

        options = resolved_options(options, choice)
    precision = app.report().precision_choice
    if options.precision == "auto" and precision is not None:
        from cmx_gen.lower import precision_choice

        options = precision_choice.resolved_options(options, precision)
    with progress.step(f"host reference of {len(samples)} sample(s) (lowering {model.source} again)"):
        lowered = lower(export(source), app.board().core.lower_target, options, evaluate=samples)
    if lowered.pte != (app.path / "model" / "model.pte").read_bytes():
        raise RunError(
            "the model lowers to another program than the app's model/model.pte: the app is older than "
            "the model (or the lowering is not reproducible here)",
            f"run `cmx-gen regen {app.path}` and `cmx-gen build {app.path}`, then --data again",
        )
    return list(lowered.get(Evaluated).samples)


def _sample_bytes(fed: Any, specs: list[TensorSpec]) -> bytes:
    """One sample as the application reads it: its program inputs back to back, in memory order."""
    return b"".join(layout(np_array(x), spec) for x, spec in zip(fed, specs))


def stream_bytes(host: list, specs: list[TensorSpec]) -> bytes:
    """What the application reads through semihosting: every sample, back to back."""
    return b"".join(_sample_bytes(fed, specs) for fed, _, _ in host)


FRAME_MAGIC = b"CMX1"  # platform.c / cmx_platform_zephyr.c cmx_platform_read


def console_frames(host: list, specs: list[TensorSpec]) -> bytes:
    """The same samples as console frames (an image without semihosting reads its UART): per
    sample "CMX1", the byte count (u32, little-endian), the bytes; a count of 0 ends the stream."""
    frames = [_sample_bytes(fed, specs) for fed, _, _ in host]
    return b"".join(FRAME_MAGIC + len(f).to_bytes(4, "little") + f for f in frames) + FRAME_MAGIC + bytes(4)


def check(target: list[dict[int, bytes]], host: list, report: Report, labels: NDArray[Any] | None) -> Comparison:
    """compare() of the firmware's output bytes per sample against host_references()."""
    return compare(
        target,
        [[np_array(y) for y in exact] for _, exact, _ in host],
        [[np_array(y) for y in floats] for _, _, floats in host],
        report.outputs,
        [lsb(spec) for spec in report.outputs],
        labels,
    )
