"""A plan of cmx-gen's backend run on the host, from its bytes alone.

Each record is turned back into the cortex_m call it replaced (the same arguments the runtime
passes CMSIS-NN: offsets, multipliers, shifts, dims, the weights at their offsets in the plan) and
computed with the host functions the plan reference uses for that call (kernel_models.compute).
So a `.pte` with delegated layers has a host reference like a per-operator one, and CI, which has
no SDK, checks every plan byte the runtime reads against the lowering's reference.

Tensors are int8 bytes in the runtime's layout: NHWC for images, rows for linear and softmax.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from cmx_gen.lower.delegate import host_own, host_s16
from cmx_gen.lower.delegate.host_memory import DelegateMemory, int8, put
from cmx_gen.lower.delegate.kernel_numbers import (
    fc_filter,
    fc_s4_filter,
    helium_constants_read,
    row_constants_read,
    row_filter,
)
from cmx_gen.lower.delegate.own_kernels import FC_GROUP, RowGeometry, bias_from_sums
from cmx_gen.lower.delegate.plan import NONE, read_header, read_layers
from cmx_gen.lower.host_models.kernel_models import compute, masked_softmax_s8
from cmx_gen.lower.weight_bits import unpack_int4


def _nhwc(memory: DelegateMemory, operand: int, n: int, h: int, w: int, c: int) -> torch.Tensor:
    """An int8 image the runtime keeps NHWC, as the logical NCHW tensor the cortex_m ops take."""
    return torch.from_numpy(int8(memory, operand, n * h * w * c).reshape(n, h, w, c)).permute(0, 3, 1, 2)


def _store(memory: DelegateMemory, operand: int, value: torch.Tensor, nchw: bool) -> None:
    data = value.to(torch.int8)
    if nchw:
        data = data.permute(0, 2, 3, 1)
    put(memory, operand, data.contiguous().numpy())


def _constant(plan: bytes, offset: int, count: int, dtype: Any, shape: Sequence[int]) -> torch.Tensor | None:
    if offset == NONE:
        return None
    array = np.frombuffer(plan, dtype=dtype, count=count, offset=offset)
    return torch.from_numpy(array.reshape(shape).copy())


def _op(name: str) -> Callable[..., Any]:
    import executorch.backends.cortex_m.passes.cortex_m_pass_manager  # noqa: F401 (registers the ops)

    op: Callable[..., Any] = getattr(torch.ops.cortex_m, name).default
    return op


def _dims(f: dict[str, int], name: str) -> tuple[int, int, int, int]:
    return f[f"{name}_n"], f[f"{name}_h"], f[f"{name}_w"], f[f"{name}_c"]


def _border(x: torch.Tensor, f: dict[str, int], out_hw: tuple[int, int], kernel: tuple[int, int]) -> torch.Tensor:
    """The input with the padding CMSIS-NN reads below and right of it beyond `pad_h`/`pad_w`:
    its kernels pad `pad` before the first row and column and wherever a tap falls past the last
    (a patch's box, patches.py, is padded on one side only). The padding is the zero point: its
    taps add nothing, as CMSIS-NN skips them."""
    extra = [
        (o - 1) * f[f"stride_{d}"] + (k - 1) * f[f"dilation_{d}"] + 1 - f[f"pad_{d}"] - size
        for d, o, k, size in (("h", out_hw[0], kernel[0], x.shape[2]), ("w", out_hw[1], kernel[1], x.shape[3]))
    ]
    bottom, right = (max(0, e - f[f"pad_{d}"]) for e, d in zip(extra, "hw"))
    if not bottom and not right:
        return x
    return torch.nn.functional.pad(x, (0, right, 0, bottom), value=-f["input_offset"])


def _conv_call(
    f: dict[str, int], x: torch.Tensor, weight: Any, bias: Any, quant: tuple[Any, Any], window: Any, isa: str
) -> torch.Tensor:
    """cortex_m::quantized_conv2d (quantized_depthwise_conv2d where the record has ch_mult) computed
    with the record's offsets and range: quant = (multipliers, shifts), window = (stride, padding,
    dilation) as [h, w] pairs."""
    depthwise = "ch_mult" in f
    name = "cortex_m::quantized_depthwise_conv2d" if depthwise else "cortex_m::quantized_conv2d"
    args = [
        x,
        weight,
        bias,
        *window,
        *([f["ch_mult"]] if depthwise else []),
        f["input_offset"],
        f["output_offset"],
        *quant,
        f["act_min"],
        f["act_max"],
        torch.empty(0, dtype=torch.int8),
    ]
    out = compute(name, _op(name.split("::")[1]), args, {}, isa)
    assert isinstance(out, torch.Tensor), (name, out)
    return out


def _quant(plan: bytes, f: dict[str, int], channels: int) -> tuple[Any, Any]:
    """A record's per-channel multipliers and shifts, read from the plan."""
    shape = (channels,)
    return (
        _constant(plan, f["multipliers"], channels, np.int32, shape),
        _constant(plan, f["shifts"], channels, np.int32, shape),
    )


def _record_window(f: dict[str, int]) -> tuple[list[int], list[int], list[int]]:
    return [f["stride_h"], f["stride_w"]], [f["pad_h"], f["pad_w"]], [f["dilation_h"], f["dilation_w"]]


def _image_conv(
    f: dict[str, int], memory: DelegateMemory, weight: Any, bias: Any, quant: tuple[Any, Any], isa: str
) -> None:
    """A convolution or depthwise record over its NHWC input, the padding CMSIS-NN reads below and
    right included (_border), its output cropped to the record's."""
    n, h, w, c = _dims(f, "input")
    _, fh, fw, _ = _dims(f, "filter")
    _, oh, ow, _ = _dims(f, "output")
    x = _border(_nhwc(memory, f["input"], n, h, w, c), f, (oh, ow), (fh, fw))
    out = _conv_call(f, x, weight, bias, quant, _record_window(f), isa)
    assert out.shape[2] >= oh and out.shape[3] >= ow, out.shape
    _store(memory, f["output"], out[:, :, :oh, :ow], nchw=True)


def _weights(plan: bytes, offset: int, shape: tuple[int, ...], int4: bool) -> torch.Tensor:
    """A record's int8 weights, or (int4) its 4-bit ones unpacked: the values the kernel multiplies."""
    count = int(np.prod(shape))
    values = unpack_int4(plan[offset:], count) if int4 else np.frombuffer(plan, np.int8, count, offset)
    return torch.from_numpy(values.reshape(shape).copy())


def _conv(plan: bytes, f: dict[str, int], memory: DelegateMemory, isa: str, int4: bool = False) -> None:
    """CMSIS-NN's convolution or depthwise call: the record's CMSIS-NN arguments (int4: its s4 call,
    which computes what the s8 one does with the same values)."""
    fn, fh, fw, fc = _dims(f, "filter")
    oc = f["output_c"]
    weight = _weights(plan, f["weight"], (fn, fh, fw, fc), int4)
    quant = _quant(plan, f, oc)
    _image_conv(f, memory, weight, _constant(plan, f["bias"], oc, np.int32, (oc,)), quant, isa)


def _conv_row(plan: bytes, f: dict[str, int], memory: DelegateMemory, isa: str) -> None:
    """cmx_conv_row_s8 as the convolution it computes: over `in_rows` x `in_positions` (a 1x1 over
    H x W reads the same bytes as one over H * W positions), its filter read back from the kernel's
    layout."""
    geometry = RowGeometry(*(f[field.name] for field in dataclasses.fields(RowGeometry)))
    if geometry.row_bytes != f["row_bytes"]:
        raise ValueError(f"conv_row layer: row_bytes {f['row_bytes']}, its geometry lays out {geometry.row_bytes}")
    g = geometry
    x = _nhwc(memory, f["input"], 1, g.in_rows, g.in_positions, g.in_ch)
    filt = row_filter(plan[f["weight"] :], g).reshape(g.out_ch, g.rows, g.kernel, g.in_ch)
    biases, mults, shifts = row_constants_read(plan[f["constants"] :], g.out_ch)
    bias, quant = torch.from_numpy(biases), (torch.from_numpy(mults), torch.from_numpy(shifts))
    window = ([g.row_stride, g.stride], [g.row_pad, g.pad], [1, g.dilation])
    out = _conv_call(f, x, torch.from_numpy(filt.copy()), bias, quant, window, isa)
    assert tuple(out.shape) == (1, g.out_ch, g.out_rows, g.positions), out.shape
    _store(memory, f["output"], out, nchw=True)


def _conv_helium(plan: bytes, f: dict[str, int], memory: DelegateMemory, isa: str) -> None:
    """cmx_conv_helium_s8 as the convolution it computes: its filter read back from its layout, its
    multipliers and shifts from its constants, its bias from their kernel sums."""
    _, kh, kw, c = _dims(f, "filter")
    oc = f["output_c"]
    filt = fc_filter(plan[f["weight"] :], oc, kh * kw * c, FC_GROUP[isa])
    sums, mults, shifts = helium_constants_read(plan[f["constants"] :], oc)
    weight = torch.from_numpy(filt.reshape(oc, kh, kw, c).copy())
    bias = torch.from_numpy(bias_from_sums(sums, filt, f["input_offset"]))
    _image_conv(f, memory, weight, bias, (torch.from_numpy(mults), torch.from_numpy(shifts)), isa)


def _linear(
    plan: bytes, f: dict[str, int], memory: DelegateMemory, isa: str, own: bool = False, int4: bool = False
) -> None:
    """arm_fully_connected_s8, cmx_fully_connected_s8 (own) with its weights read back from its layout,
    arm_fully_connected_s4 (int4) with its weights unpacked, or cmx_fully_connected_s4 (both) with its
    weights read back from its layout."""
    batches, features = f["input_n"], f["input_c"]
    outputs = f["output_c"]
    x = torch.from_numpy(int8(memory, f["input"], batches * features).reshape(batches, features))
    blob = plan[f["weight"] :]
    weight = (
        torch.from_numpy(
            (
                fc_s4_filter(blob, outputs, features) if int4 else fc_filter(blob, outputs, features, FC_GROUP[isa])
            ).copy()
        )
        if own
        else _weights(plan, f["weight"], (outputs, features), int4)
    )
    bias = _constant(plan, f["bias"], outputs, np.int32, (outputs,))
    # arm_fully_connected_s4 reads the bias alone (a kernel sum given would be ignored there)
    kernel_sum = None if int4 else _constant(plan, f["kernel_sum"], outputs, np.int32, (outputs,))
    args = [
        x,
        weight,
        bias,
        kernel_sum,
        f["input_offset"],
        f["filter_offset"],
        f["output_offset"],
        [f["multiplier"]],
        [f["shift"]],
        f["act_max"],
        f["act_min"],
    ]
    out = compute("cortex_m::quantized_linear", _op("quantized_linear"), args, {}, isa)
    assert isinstance(out, torch.Tensor)
    _store(memory, f["output"], out, nchw=False)


def _elementwise(f: dict[str, int], memory: DelegateMemory) -> tuple[torch.Tensor, torch.Tensor]:
    """input1 (all `count` elements) and input2 (`block` of them, repeated along input1 when it is
    a channel broadcast) in shapes the cortex_m ops accept: channels last, the block as channels."""
    count, block = f["count"], f["block"]
    a, b = int8(memory, f["input1"], count), int8(memory, f["input2"], block)
    if block == count:
        return torch.from_numpy(a), torch.from_numpy(b)
    big = torch.from_numpy(a.reshape(1, count // block, 1, block)).permute(0, 3, 1, 2)
    return big, torch.from_numpy(b).reshape(1, block, 1, 1)


def _store_elementwise(memory: DelegateMemory, f: dict[str, int], out: torch.Tensor) -> None:
    _store(memory, f["output"], out if out.dim() != 4 else out.permute(0, 2, 3, 1), nchw=False)


def _add(plan: bytes, f: dict[str, int], memory: DelegateMemory, isa: str) -> None:
    a, b = _elementwise(f, memory)
    args = [
        a,
        -f["input1_offset"],
        f["input1_multiplier"],
        f["input1_shift"],
        b,
        -f["input2_offset"],
        f["input2_multiplier"],
        f["input2_shift"],
        f["output_offset"],
        f["output_multiplier"],
        f["output_shift"],
        f["act_min"],
        f["act_max"],
    ]
    out = compute("cortex_m::quantized_add", _op("quantized_add"), args, {}, isa)
    assert isinstance(out, torch.Tensor)
    _store_elementwise(memory, f, out)


def _mul(plan: bytes, f: dict[str, int], memory: DelegateMemory, isa: str) -> None:
    a, b = _elementwise(f, memory)
    args = [
        a,
        -f["input1_offset"],
        b,
        -f["input2_offset"],
        f["output_offset"],
        f["output_multiplier"],
        f["output_shift"],
    ]
    out = compute("cortex_m::quantized_mul", _op("quantized_mul"), args, {}, isa)
    assert isinstance(out, torch.Tensor)
    _store_elementwise(memory, f, out)


def _pool(plan: bytes, f: dict[str, int], memory: DelegateMemory, isa: str, average: bool) -> None:
    n, h, w, c = _dims(f, "input")
    _, kh, kw, _ = _dims(f, "filter")
    _, oh, ow, _ = _dims(f, "output")
    x = _nhwc(memory, f["input"], n, h, w, c)
    stride, padding = [f["stride_h"], f["stride_w"]], [f["pad_h"], f["pad_w"]]
    floor_h = (h + 2 * f["pad_h"] - kh) // f["stride_h"] + 1
    ceil_mode = oh != floor_h or ow != (w + 2 * f["pad_w"] - kw) // f["stride_w"] + 1
    if average:
        name = "cortex_m::quantized_avg_pool2d"
        args: list[Any] = [x, [kh, kw], stride, padding, ceil_mode, 0, 0, 0, torch.empty(0, dtype=torch.int8)]
    else:
        name = "cortex_m::quantized_max_pool2d"
        args = [x, [kh, kw], stride, padding, [1, 1], ceil_mode, 0, 0, f["act_min"], f["act_max"]]
    out = compute(name, _op(name.split("::")[1]), args, {}, isa)
    assert isinstance(out, torch.Tensor) and tuple(out.shape) == (n, c, oh, ow), (name, getattr(out, "shape", out))
    _store(memory, f["output"], out, nchw=True)


def _softmax(plan: bytes, f: dict[str, int], memory: DelegateMemory, isa: str) -> None:
    rows, size = f["rows"], f["row_size"]
    x = torch.from_numpy(int8(memory, f["input"], rows * size).reshape(rows, size))
    out: object
    if f["ranges"] != NONE:
        ranges = np.frombuffer(plan, "<i4", 2 * f["mask_rows"], f["ranges"]).tolist()
        out = masked_softmax_s8(x, ranges, f["multiplier"], f["shift"], f["diff_min"])
    else:
        args = [x, -1, 0, -128, f["multiplier"], f["shift"], f["diff_min"]]
        out = compute("cortex_m::softmax", _op("softmax"), args, {}, isa)
    assert isinstance(out, torch.Tensor)
    _store(memory, f["output"], out, nchw=False)


def _copy(plan: bytes, f: dict[str, int], memory: DelegateMemory, isa: str) -> None:
    memory.view(f["output"], f["nbytes"])[:] = bytes(memory.view(f["input"], f["nbytes"]))


def _copy_region(plan: bytes, f: dict[str, int], memory: DelegateMemory, isa: str) -> None:
    rows, run = f["rows"], f["row_bytes"]
    if not rows:
        return
    src = memory.view(f["input"], f["input_at"] + (rows - 1) * f["input_stride"] + run)[f["input_at"] :]
    dst = memory.view(f["output"], f["output_at"] + (rows - 1) * f["output_stride"] + run)[f["output_at"] :]
    for r in range(rows):
        dst[r * f["output_stride"] : r * f["output_stride"] + run] = bytes(
            src[r * f["input_stride"] : r * f["input_stride"] + run]
        )


def _transpose(plan: bytes, f: dict[str, int], memory: DelegateMemory, isa: str) -> None:
    b, r, c = f["batches"], f["rows"], f["cols"]
    put(memory, f["output"], int8(memory, f["input"], b * r * c).reshape(b, r, c).transpose(0, 2, 1))


RUN: dict[str, Callable[[bytes, dict[str, int], DelegateMemory, str], None]] = {
    "conv": _conv,
    "conv_general": _conv,
    "conv_row": _conv_row,
    "conv_helium": _conv_helium,
    "depthwise_conv": _conv,
    "depthwise_3x3": _conv,
    "linear": _linear,
    "fully_connected": lambda p, f, m, isa: _linear(p, f, m, isa, own=True),
    "conv_s4": lambda p, f, m, isa: _conv(p, f, m, isa, int4=True),
    "depthwise_s4": lambda p, f, m, isa: _conv(p, f, m, isa, int4=True),
    "linear_s4": lambda p, f, m, isa: _linear(p, f, m, isa, int4=True),
    "fully_connected_s4": lambda p, f, m, isa: _linear(p, f, m, isa, own=True, int4=True),
    "add": _add,
    "mul": _mul,
    "avg_pool": lambda p, f, m, isa: _pool(p, f, m, isa, average=True),
    "max_pool": lambda p, f, m, isa: _pool(p, f, m, isa, average=False),
    "softmax": _softmax,
    "copy": _copy,
    "copy_region": _copy_region,
    "transpose": _transpose,
    **host_own.RUN,
    **host_s16.RUN,
}


def run(plan: bytes, args: Sequence[memoryview], isa: str) -> None:
    """Run a packed plan on the delegate's arguments (inputs, working memory, outputs: writable
    byte views in the runtime's layout), in place, as the runtime's execute does."""
    head = read_header(plan)
    if len(args) != int(head["n_inputs"]) + 1 + int(head["n_outputs"]):
        raise ValueError(
            f"the plan takes {head['n_inputs']} inputs and {head['n_outputs']} outputs, "
            f"the call passes {len(args)} arguments"
        )
    memory = DelegateMemory(args, int(head["n_inputs"]))
    for kind, fields in read_layers(plan):
        RUN[kind](plan, fields, memory, isa)
