"""Synthetic lowering reports (plain data, typed as the pipeline takes them) for the fit and
render tests: a board's memory decisions without lowering a model."""

from __future__ import annotations

from cmx_gen.fit.budget import kernel_sizes
from cmx_gen.program.report import Report

KiB = 1024
SIZES = kernel_sizes()


def make_report(**kwargs) -> Report:
    """A synthetic lowering report (report_data), typed as the pipeline takes it."""
    return Report.of(report_data(**kwargs))


def report_data(
    isa="MVE", core="cortex-m55", pte=60 * KiB, planned=(16 * KiB,), method=8 * KiB, temp=256, ops=None, **extra
) -> dict:
    ops = (
        ops
        if ops is not None
        else [
            {"name": "cortex_m::quantize_per_tensor.out", "count": 1, "class": "quant_boundary"},
            {"name": "cortex_m::quantized_conv2d.out", "count": 2, "class": "cmsis_nn"},
            {"name": "cortex_m::quantized_linear.out", "count": 1, "class": "cmsis_nn"},
            {"name": "cortex_m::dequantize_per_tensor.out", "count": 1, "class": "quant_boundary"},
        ]
    )
    return {
        "schema": "cmx-gen/report/1",
        "executorch_version": "1.5.1",
        "target": {"core": core, "isa": isa},
        "pte": {"bytes": pte, "constant_bytes": pte - 4 * KiB, "sha256": "0" * 64},
        "operators": ops,
        "fallbacks": [],
        "memory": {
            "planned_buffer_sizes": list(planned),
            "planned_bytes": sum(planned),
            "scratch_bytes": 0,
            "method_allocator_bytes": method,
            "temp_allocator_bytes": temp,
        },
        **extra,
    }


def big_fallback_report(code_bytes: int, isa: str = "MVE", core: str = "cortex-m55") -> Report:
    """A program whose portable fp32 kernels alone need more than `code_bytes` of code."""
    table = SIZES["isa"][isa]
    each = table["defaults"]["fallback"]["code"]
    count = code_bytes // each + 1
    ops = [{"name": f"aten::fp32_op_{i}.out", "count": 1, "class": "fallback"} for i in range(count)]
    return make_report(isa=isa, core=core, ops=ops)
