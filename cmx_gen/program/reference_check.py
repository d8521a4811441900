"""The report's `reference` and `quantization_error`: which reference the firmware is checked
against and how far ExecuTorch's own is from it, and the INT8 program's distance from the float
model, all from one LoweredModel."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch
from numpy.typing import NDArray

from cmx_gen.lower.host_models.kernel_models import MODELS
from cmx_gen.program.report import QuantizationError, ReferenceCheck

if TYPE_CHECKING:
    from cmx_gen.lower.lowering import LoweredModel


def compare_references(lowered: LoweredModel, output_scales: list[float]) -> ReferenceCheck:
    """report.json's `reference`: which reference the firmware is checked against, how far
    ExecuTorch's Python reference is from it at the outputs (LSB of each output), and by op."""

    def lsb(a: tuple[torch.Tensor, ...], b: tuple[torch.Tensor, ...]) -> int:
        worst = 0
        for x, y, scale in zip(a, b, output_scales or [0.0] * len(a)):
            diff = (x.float() - y.float()).abs().max().item() if x.numel() else 0.0
            worst = max(worst, round(diff / scale) if scale else int(diff > 0))
        return worst

    from cmx_gen.lower.state import Errors, Referenced

    runs, errors = lowered.get(Referenced).runs, lowered.get(Errors)
    ops = sorted(lowered.op_diffs, key=lambda d: d.index)
    if runs.python is None:
        return ReferenceCheck(
            checked_against="cmsis-nn",
            description="bit-exact host models of the CMSIS-NN C kernels; ExecuTorch's Python reference cannot run "
            f"this program ({', '.join(sorted(runs.python_missing))} has no integer kernel in torch)",
            python_reference_max_lsb=None,
            python_reference_max_lsb_calibration=None,
            ops=ops,
        )
    from cmx_gen.lower.fx_nodes import op_name
    from cmx_gen.lower.state import Checked

    own = sorted({name for n in lowered.get(Checked).program.graph.nodes if (name := op_name(n)).startswith("cmx::")})
    sample = lsb(runs.kernel_exact, runs.python)
    everywhere = max([sample, *(lsb(k, p) for k, p in errors.calibration_references if p is not None)])
    return ReferenceCheck(
        checked_against="cmsis-nn",
        description="ExecuTorch's Python cortex_m ops, with bit-exact host models of the CMSIS-NN C kernels "
        f"for {', '.join(sorted(MODELS))}"
        + (f"; cmx-gen's own {', '.join(own)} run their kernels' models (kernel_models.py)" if own else ""),
        python_reference_max_lsb=sample,
        python_reference_max_lsb_calibration=everywhere,
        ops=ops,
    )


def _logical(tensor: torch.Tensor) -> NDArray[Any]:
    """Contiguous NCHW numpy array: the firmware re-lays it out by the program's dim_order."""
    return tensor.detach().contiguous().cpu().numpy()


def reference_arrays(lowered: LoweredModel) -> dict[str, NDArray[Any]]:
    from cmx_gen.lower.state import Lowered, Referenced

    arrays = {f"input_{i}": _logical(x) for i, x in enumerate(lowered.get(Lowered).inputs)}
    arrays.update({f"output_{i}": _logical(y) for i, y in enumerate(lowered.get(Referenced).runs.kernel_exact)})
    return arrays


def _is_classifier(outputs: tuple[torch.Tensor, ...]) -> bool:
    return len(outputs) == 1 and outputs[0].dim() == 2 and outputs[0].shape[1] > 1


def quantization_error(lowered: LoweredModel) -> QuantizationError:
    """Max abs error (float vs INT8 program) on the sample input and over the calibration set.

    For a classifier (one [N, K] output) also the top-1 agreement between float and INT8 over
    the calibration set.
    """
    from cmx_gen.lower.rewrites.int8_io import dequantize_outputs
    from cmx_gen.lower.state import Errors, Lowered, Referenced

    io, float_outputs = lowered.get(Lowered).io, lowered.given.exported.float_outputs
    calibration = lowered.get(Errors).calibration_outputs

    def real(outputs: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:  # --io int8 outputs, dequantized
        return dequantize_outputs(outputs, io) if io else outputs

    pairs = [(f, real(q)) for f, q in [(float_outputs, lowered.get(Referenced).runs.kernel_exact), *calibration]]
    max_abs = 0.0
    for float_out, int8_out in pairs:
        for f, q in zip(float_out, int8_out):
            max_abs = max(max_abs, float((f.float() - q.float()).abs().max()))
    top1 = None
    if _is_classifier(float_outputs) and calibration:
        agree = sum(int(torch.equal(f[0].argmax(dim=-1), q[0].argmax(dim=-1))) for f, q in pairs[1:])
        top1 = round(agree / len(calibration), 4)
    return QuantizationError(
        max_abs_err=round(max_abs, 6),
        sample_max_abs_err=round(max(float((f.float() - q.float()).abs().max()) for f, q in zip(*pairs[0])), 6),
        samples=len(pairs),
        top1_agreement=top1,
    )
