"""int8 model I/O (`--io int8`): the program takes and returns int8 tensors.

A sensor pipeline that already has int8 samples should not pay for a float input buffer and a
quantize kernel (and a dequantize at the end). ExecuTorch's own `quantize_input`/`quantize_output`
remove the boundary quantize/dequantize from the edge program before the cortex_m passes run; their
parameters are what the caller quantizes with and dequantizes by (`real = scale * (q - zero_point)`):
report.json `inputs[i].quant` / `outputs[i].quant` with `at: "io"`, and `cmx_model.h`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import torch

from cmx_gen.common.errors import ExportError


@dataclass(frozen=True)
class QParams:
    scale: float
    zero_point: int
    qmin: int
    qmax: int


@dataclass
class IoQuant:
    inputs: list[QParams]
    outputs: list[QParams]


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _qparams(args: tuple[Any, ...], where: str = "") -> QParams:
    scale, zero_point, qmin, qmax = args[0], args[1], args[2], args[3]
    if where and len(args) > 4 and args[4] != torch.int8:
        raise ExportError(
            f"--io int8: {where} is {str(args[4]).removeprefix('torch.')} (its layer runs 16-bit activations)",
            "drop --io int8, or keep that layer at int8 (--precision-for PART=int8)",
        )
    return QParams(float(scale), int(zero_point), int(qmin), int(qmax))


def strip_boundaries(edge_program: Any) -> IoQuant:
    """Make every input and output of the edge program int8; one-line error when one is not
    quantized at the boundary (a float input that feeds a float op, a float output)."""
    from executorch.exir.passes.quantize_io_pass import quantize_input, quantize_output

    n_in = len(edge_program.graph_signature.user_inputs)
    n_out = len(edge_program.graph_signature.user_outputs)
    inputs, outputs = [], []
    for i in range(n_in):
        try:
            made = quantize_input(edge_program, i)
        except (ValueError, AssertionError) as exc:
            raise ExportError(
                f"--io int8: input {i} cannot be int8: it is not quantized as it enters the model ({_first_line(exc)})",
                "every input must go straight into quantized ops (drop --io int8 for float inputs)",
            ) from exc
        inputs.append(_qparams(made, f"input {i}"))
    from torch.export.graph_signature import OutputKind, TensorArgument

    user_specs = [spec for spec in edge_program.graph_signature.output_specs if spec.kind == OutputKind.USER_OUTPUT]
    for i in range(n_out):
        try:
            made = quantize_output(edge_program, i)
        except (ValueError, AssertionError) as exc:
            from cmx_gen.lower.fx_nodes import op_name

            producer = edge_program.graph.output_node().args[0][i]
            raise ExportError(
                f"--io int8: output {i} cannot be int8: it is not dequantized from an int8 result "
                f"(it comes from {op_name(producer) or producer})",
                "every output must come from a quantized op (drop --io int8 for float outputs)",
            ) from exc
        outputs.append(_qparams(made, f"output {i}"))
        # quantize_output rewires the graph's output only: the signature must name the new node too.
        user_specs[i].arg = TensorArgument(name=edge_program.graph.output_node().args[0][i].name)
    return IoQuant(inputs, outputs)


def _is_op(node: Any, name: str) -> bool:
    """`node` calls the op `name` in any namespace (`quantize_per_tensor` is not `dequantize_per_tensor`)."""
    target = getattr(node, "target", None)
    return (
        getattr(node, "op", "") == "call_function"
        and re.search(rf"(^|[.:]){name}([.]|$)", str(getattr(target, "__name__", target))) is not None
    )


def drop_output_requantize(program: Any, io: IoQuant) -> IoQuant:
    """The I/O quantization after the cortex_m passes, with every int8 output that was only
    requantized from another int8 returned as that int8 (a softmax's fixed 1/256 scale into the
    observer's). The pair is two kernels at run time and in flash, clips to the observer's range
    and rounds twice; the caller gets the first int8's scale and zero point instead, in report.json
    and cmx_model.h. Edits the lowered graph, which no one has read yet."""
    from torch.export.graph_signature import OutputKind, TensorArgument

    graph = program.graph_module.graph
    output = graph.output_node()
    values = list(output.args[0])
    user_specs = [spec for spec in program.graph_signature.output_specs if spec.kind == OutputKind.USER_OUTPUT]
    outputs = list(io.outputs)
    for i, node in enumerate(values[: len(outputs)]):
        if not (_is_op(node, "quantize_per_tensor") and len(node.users) == 1):
            continue
        dequantize = node.args[0]
        if not (_is_op(dequantize, "dequantize_per_tensor") and len(dequantize.users) == 1):
            continue
        values[i] = dequantize.args[0]
        outputs[i] = _qparams(tuple(dequantize.args[1:5]))
        user_specs[i].arg = TensorArgument(name=values[i].name)
    if outputs == io.outputs:
        return io
    output.args = (tuple(values), *output.args[1:])
    graph.eliminate_dead_code()
    program.graph_module.recompile()
    return IoQuant(list(io.inputs), outputs)


def quantize(tensor: torch.Tensor, q: QParams) -> torch.Tensor:
    """What the caller feeds: quantized_decomposed.quantize_per_tensor's arithmetic, kept in the
    tensor's memory format (channels-last inputs stay channels-last)."""
    out: torch.Tensor = torch.ops.quantized_decomposed.quantize_per_tensor(
        tensor, q.scale, q.zero_point, q.qmin, q.qmax, torch.int8
    )
    return (
        out.contiguous(memory_format=torch.channels_last)
        if tensor.dim() == 4 and tensor.is_contiguous(memory_format=torch.channels_last) and not tensor.is_contiguous()
        else out
    )


def dequantize(tensor: torch.Tensor, q: QParams) -> torch.Tensor:
    return (tensor.to(torch.float32) - q.zero_point) * q.scale


def quantize_inputs(inputs: tuple[torch.Tensor, ...], io: IoQuant) -> tuple[torch.Tensor, ...]:
    return tuple(quantize(x, q) for x, q in zip(inputs, io.inputs))


def dequantize_outputs(outputs: tuple[torch.Tensor, ...], io: IoQuant) -> tuple[torch.Tensor, ...]:
    return tuple(dequantize(y, q) for y, q in zip(outputs, io.outputs))
