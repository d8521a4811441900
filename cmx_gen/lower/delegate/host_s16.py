"""The s16 kinds' records run on the host (host_run.RUN): the int16 tensors read from the delegate's
memory in the runtime's layout (NHWC images, rows), the weights read back from the record's layout,
and computed with the same host models as the lowering's ops (host_models/s16_models.py)."""

from __future__ import annotations

import numpy as np
import torch

from cmx_gen.lower.delegate.host_memory import DelegateMemory, int8, int16, plan_values, put
from cmx_gen.lower.delegate.plan import NONE
from cmx_gen.lower.host_models import layer_models, s16_models


def _bias(plan: bytes, offset: int, count: int) -> torch.Tensor | None:
    return None if offset == NONE else torch.from_numpy(plan_values(plan, offset, count, "<i8"))


def conv(plan: bytes, f: dict[str, int], memory: DelegateMemory, isa: str) -> None:
    """conv_s16 / depthwise_s16: the filter back to OIHW, the input to NCHW."""
    n, h, w, c = (f[f"input_{d}"] for d in "nhwc")
    fn, fh, fw, fc = (f[f"filter_{d}"] for d in "nhwc")
    oc = f["output_c"]
    depthwise = "ch_mult" in f
    laid = plan_values(plan, f["weight"], fn * fh * fw * fc, "i1").reshape(fn, fh, fw, fc)
    weight = laid.transpose(3, 0, 1, 2) if depthwise else laid.transpose(0, 3, 1, 2)
    x = torch.from_numpy(int16(memory, f["input"], n * h * w * c).reshape(n, h, w, c)).permute(0, 3, 1, 2)
    out = s16_models.conv2d_s16(
        x,
        torch.from_numpy(np.ascontiguousarray(weight)),
        _bias(plan, f["bias"], oc),
        [f["stride_h"], f["stride_w"]],
        [f["pad_h"], f["pad_w"]],
        [f["dilation_h"], f["dilation_w"]],
        c if depthwise else 1,
        plan_values(plan, f["multipliers"], oc, "<i4").tolist(),
        plan_values(plan, f["shifts"], oc, "<i4").tolist(),
        f["act_min"],
        f["act_max"],
    )
    put(memory, f["output"], out.permute(0, 2, 3, 1).contiguous().numpy(), "<i2")


def linear(plan: bytes, f: dict[str, int], memory: DelegateMemory, isa: str) -> None:
    """linear_s16: rows of the input times the weight [out][in]."""
    batches, features, outputs = f["input_n"], f["input_c"], f["output_c"]
    x = torch.from_numpy(int16(memory, f["input"], batches * features).reshape(batches, features))
    weight = torch.from_numpy(plan_values(plan, f["weight"], outputs * features, "i1").reshape(outputs, features))
    out = s16_models.fully_connected_s16(
        x, weight, _bias(plan, f["bias"], outputs), f["multiplier"], f["shift"], f["act_min"], f["act_max"]
    )
    put(memory, f["output"], out.numpy(), "<i2")


def lut(plan: bytes, f: dict[str, int], memory: DelegateMemory, isa: str) -> None:
    """lut_s16: each int8 input's int16 from the table at its value + 128."""
    table = plan_values(plan, f["table"], 256, "<i2")
    x = int8(memory, f["input"], f["count"]).astype(np.int64)
    put(memory, f["output"], table[x + 128], "<i2")


def narrow(plan: bytes, f: dict[str, int], memory: DelegateMemory, isa: str) -> None:
    """narrow_s16: each int16 input's int8, lowest plus the thresholds at or below it."""
    thresholds = plan_values(plan, f["table"], f["steps"], "<i2") if f["steps"] else np.zeros(0, np.int16)
    x = int16(memory, f["input"], f["count"])
    put(memory, f["output"], s16_models.narrow_s16(x, thresholds, f["lowest"]))


def add(plan: bytes, f: dict[str, int], memory: DelegateMemory, isa: str) -> None:
    """add_s16: two int16 tensors of `count` elements, the record's requantization."""
    a, b = (torch.from_numpy(int16(memory, f[k], f["count"])) for k in ("input1", "input2"))
    quant = [f[k] for k in ("input1_multiplier", "input1_shift", "input2_multiplier", "input2_shift")]
    quant += [f["output_multiplier"], f["output_shift"]]
    put(memory, f["output"], s16_models.add_s16(a, b, quant, f["act_min"], f["act_max"]).numpy(), "<i2")


def mul(plan: bytes, f: dict[str, int], memory: DelegateMemory, isa: str) -> None:
    """mul_s16: two int16 tensors of `count` elements, the record's requantization."""
    a, b = (torch.from_numpy(int16(memory, f[k], f["count"])) for k in ("input1", "input2"))
    out = s16_models.mul_s16(a, b, f["output_multiplier"], f["output_shift"], f["act_min"], f["act_max"])
    put(memory, f["output"], out.numpy(), "<i2")


def pool(plan: bytes, f: dict[str, int], memory: DelegateMemory, isa: str, average: bool) -> None:
    """avg_pool_s16 / max_pool_s16 over the NHWC input."""
    n, h, w, c = (f[f"input_{d}"] for d in "nhwc")
    x = torch.from_numpy(int16(memory, f["input"], n * h * w * c).reshape(n, h, w, c)).permute(0, 3, 1, 2)
    window = ([f["filter_h"], f["filter_w"]], [f["stride_h"], f["stride_w"]], [f["pad_h"], f["pad_w"]])
    out = s16_models.pool2d_s16(x, *window, average, f["act_min"], f["act_max"])
    put(memory, f["output"], out.permute(0, 2, 3, 1).contiguous().numpy(), "<i2")


def bmm(plan: bytes, f: dict[str, int], memory: DelegateMemory, isa: str) -> None:
    """bmm_s16: arm_batch_matmul_s16 on b as [batch][cols][inner] (the run's transposition done here)."""
    batches, rows, inner, cols = f["batches"], f["rows"], f["inner"], f["cols"]
    a = int16(memory, f["input1"], batches * rows * inner).reshape(batches, rows, inner)
    b = int16(memory, f["input2"], batches * inner * cols)
    b_t = b.reshape(batches, cols, inner) if f["transposed"] else b.reshape(batches, inner, cols).transpose(0, 2, 1)
    put(memory, f["output"], s16_models.bmm_s16(a, b_t, f["multiplier"], f["shift"]), "<i2")


def softmax(plan: bytes, f: dict[str, int], memory: DelegateMemory, isa: str) -> None:
    """softmax_s16: rows of row_size int16 values, with the record's two tables."""
    x = int16(memory, f["input"], f["rows"] * f["row_size"]).reshape(f["rows"], f["row_size"])
    tables = (plan_values(plan, f[name], 513, "<i2") for name in ("exp_table", "one_by_one_table"))
    put(memory, f["output"], s16_models.softmax_s16(x, f["multiplier"], f["shift"], *tables), "<i2")


def activation(plan: bytes, f: dict[str, int], memory: DelegateMemory, isa: str) -> None:
    """activation_s16: sigmoid or tanh (layer_models.activation_s16, arm_nn_activation_s16's arithmetic)."""
    x = int16(memory, f["input"], f["count"])
    kind = "tanh" if f["type"] else "sigmoid"
    put(memory, f["output"], layer_models.activation_s16(x, f["left_shift"], kind), "<i2")


RUN = {
    "conv_s16": conv,
    "depthwise_s16": conv,
    "linear_s16": linear,
    "bmm_s16": bmm,
    "softmax_s16": softmax,
    "activation_s16": activation,
    "lut_s16": lut,
    "narrow_s16": narrow,
    "add_s16": add,
    "mul_s16": mul,
    "avg_pool_s16": lambda p, f, m, isa: pool(p, f, m, isa, average=True),
    "max_pool_s16": lambda p, f, m, isa: pool(p, f, m, isa, average=False),
}
