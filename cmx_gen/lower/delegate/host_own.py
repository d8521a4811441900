"""cmx-gen's own layer kinds run on the host from their plan integers (host_run.py runs the rest):
layer norm, mean, table, batch matmul and the recurrent layers, each with the host model the lowering's
reference uses (layer_models.py), so a .pte given without its lowering has a bit-exact reference too."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from cmx_gen.lower.delegate.host_memory import DelegateMemory, int8, int16, plan_values, put
from cmx_gen.lower.host_models import layer_models, s16_models


def _layer_norm(plan: bytes, f: dict[str, int], memory: DelegateMemory, isa: str) -> None:
    """cmx_layer_norm_s8 from the plan's integers (layer_models.layer_norm_s8, the reference's model)."""
    rows, channels = f["rows"], f["channels"]
    x = int8(memory, f["input"], rows * channels).reshape(rows, channels)
    eps_term = (f["eps_hi"] << 32) | (f["eps_lo"] & 0xFFFFFFFF)
    gains = np.frombuffer(plan, dtype="<i4", count=channels, offset=f["gains"]).astype(np.int64)
    biases = np.frombuffer(plan, dtype="<i4", count=channels, offset=f["biases"]).astype(np.int64)
    put(
        memory,
        f["output"],
        layer_models.layer_norm_s8(x, f["input_offset"], f["output_offset"], eps_term, gains, biases),
    )


def _mean(plan: bytes, f: dict[str, int], memory: DelegateMemory, isa: str) -> None:
    outer, count, inner = f["outer"], f["count"], f["inner"]
    x = int8(memory, f["input"], outer * count * inner)
    names = ("multiplier", "shift", "input_offset", "output_offset")
    put(memory, f["output"], layer_models.mean_s8(x, outer, count, inner, *(f[n] for n in names)))


def _linear_per_channel(plan: bytes, f: dict[str, int], memory: DelegateMemory, isa: str) -> None:
    """arm_fully_connected_per_channel_s8 (linear_per_channel.quantized_linear_pc's arithmetic): with a
    kernel sum (the Helium path) the input offset is in it, in place of the bias."""
    from cmx_gen.lower.delegate.plan import NONE
    from cmx_gen.lower.linear_per_channel import quantized_linear_pc

    batches, features, outputs = f["input_n"], f["input_c"], f["output_c"]
    x = torch.from_numpy(int8(memory, f["input"], batches * features).reshape(batches, features))
    weight = torch.from_numpy(plan_values(plan, f["weight"], outputs * features, "i1").reshape(outputs, features))

    def words(at: int) -> torch.Tensor:
        return torch.from_numpy(plan_values(plan, at, outputs, "<i4"))

    summed = f["kernel_sum"] != NONE
    bias = words(f["kernel_sum"]) if summed else None if f["bias"] == NONE else words(f["bias"])
    mults, shifts = words(f["multipliers"]).tolist(), words(f["shifts"]).tolist()
    offsets = (0 if summed else f["input_offset"], f["output_offset"])
    out = quantized_linear_pc(x, weight, bias, *offsets, mults, shifts, f["act_min"], f["act_max"])
    put(memory, f["output"], out.numpy())


def _lut(plan: bytes, f: dict[str, int], memory: DelegateMemory, isa: str) -> None:
    """cmx_lut_s8: each output the table's entry at its input + 128."""
    table = np.frombuffer(plan, dtype=np.int8, count=256, offset=f["table"])
    put(memory, f["output"], table[int8(memory, f["input"], f["count"]).astype(np.int64) + 128])


def _bmm(plan: bytes, f: dict[str, int], memory: DelegateMemory, isa: str) -> None:
    """arm_batch_matmul_s8 (layer_models.bmm_s8) on b as [batch][cols][inner]; the transposition the
    kernel makes in its scratch when b is [batch][inner][cols] is done here in place of it."""
    batches, rows, inner, cols = f["batches"], f["rows"], f["inner"], f["cols"]
    a = int8(memory, f["input1"], batches * rows * inner).reshape(batches, rows, inner)
    b = int8(memory, f["input2"], batches * inner * cols)
    b_t = b.reshape(batches, cols, inner) if f["transposed"] else b.reshape(batches, inner, cols).transpose(0, 2, 1)
    names = ("input2_offset", "output_offset", "multiplier", "shift")
    out = layer_models.bmm_s8(a, f["input1_offset"], b_t, *(f[n] for n in names))
    put(memory, f["output"], out)


def _gates(
    plan: bytes, f: dict[str, int], names: tuple[str, ...], activations: dict[str, str], bias: str = "<i4"
) -> dict[str, Any]:
    """A recurrent layer's gates read back from the plan (own_layers._gate_fields wrote them); `bias`:
    the effective biases' type (int64 for the s16 LSTM)."""
    from cmx_gen.lower.ops.lstm import Gate

    inputs, hidden = f["input_size"], f["hidden_size"]

    def weights(at: int, columns: int) -> NDArray[np.int8]:
        return np.frombuffer(plan, dtype=np.int8, count=hidden * columns, offset=at).reshape(hidden, columns).copy()

    def biases(at: int) -> NDArray[np.signedinteger[Any]]:
        return np.frombuffer(plan, dtype=bias, count=hidden, offset=at).astype(np.dtype(bias).newbyteorder("="))

    return {
        name: Gate(
            input_multiplier=f[f"{name}_input_multiplier"],
            input_shift=f[f"{name}_input_shift"],
            input_weights=weights(f[f"{name}_input_weights"], inputs),
            input_effective_bias=biases(f[f"{name}_input_bias"]),
            hidden_multiplier=f[f"{name}_hidden_multiplier"],
            hidden_shift=f[f"{name}_hidden_shift"],
            hidden_weights=weights(f[f"{name}_hidden_weights"], hidden),
            hidden_effective_bias=biases(f[f"{name}_hidden_bias"]),
            activation=activations[name],
        )
        for name in names
    }


def _sequence(f: dict[str, int], memory: DelegateMemory, wide: bool) -> tuple[NDArray[np.signedinteger[Any]], bool]:
    """A recurrent layer's input (int8; int16 where `wide`) as it lies ([batch, time, input], or time
    first) and its order."""
    shape = (f["batch_size"], f["time_steps"]) if not f["time_major"] else (f["time_steps"], f["batch_size"])
    count = shape[0] * shape[1] * f["input_size"]
    values = (int16 if wide else int8)(memory, f["input"], count)
    return values.reshape(*shape, f["input_size"]), not f["time_major"]


def _recurrent(
    plan: bytes,
    f: dict[str, int],
    memory: DelegateMemory,
    quant: Any,
    scalars: Any,
    gates: Any,
    model: Any,
    acts: Any,
    wide: bool = False,
) -> None:
    """A recurrent layer: its quantization (`quant`, LstmQuant or GruQuant) rebuilt from the record's
    `scalars` and `gates`, its sequence run by the host `model` (layer_models, s16_models), backwards
    where the record says `reverse`; `wide`: int16 activations and int64 effective biases."""
    made = quant(
        input_size=f["input_size"],
        hidden_size=f["hidden_size"],
        **{name: f[name] for name in scalars},
        gates=_gates(plan, f, gates, acts, "<i8" if wide else "<i4"),
    )
    x, batch_first = _sequence(f, memory, wide)
    put(memory, f["output"], model(x, made, batch_first, bool(f["reverse"])), "<i2" if wide else "i1")


def _lstm(plan: bytes, f: dict[str, int], memory: DelegateMemory, isa: str, wide: bool = False) -> None:
    """arm_lstm_unidirectional_s8 (layer_models.lstm_s8) or, `wide`, arm_lstm_unidirectional_s16
    (s16_models.lstm_s16) from the plan's integers."""
    from cmx_gen.lower.delegate.own_layers import LSTM_ACTIVATIONS
    from cmx_gen.lower.delegate.plan_fields import LSTM_GATES, LSTM_SCALARS
    from cmx_gen.lower.ops.lstm import LstmQuant

    kinds = {code: name for name, code in LSTM_ACTIVATIONS.items()}
    acts = {gate: kinds[f[f"{gate}_activation"]] for gate in LSTM_GATES}
    model = s16_models.lstm_s16 if wide else layer_models.lstm_s8
    _recurrent(plan, f, memory, LstmQuant, LSTM_SCALARS, LSTM_GATES, model, acts, wide)


def _gru(plan: bytes, f: dict[str, int], memory: DelegateMemory, isa: str) -> None:
    """cmx_gru_s8 from the plan's integers (layer_models.gru_s8)."""
    from cmx_gen.lower.delegate.plan_fields import GRU_GATES, GRU_SCALARS
    from cmx_gen.lower.ops.gru import ACTIVATIONS, GruQuant

    _recurrent(plan, f, memory, GruQuant, GRU_SCALARS, GRU_GATES, layer_models.gru_s8, ACTIVATIONS)


RUN: dict[str, Callable[[bytes, dict[str, int], DelegateMemory, str], None]] = {
    "layer_norm": _layer_norm,
    "mean": _mean,
    "lut": _lut,
    "bmm": _bmm,
    "lstm": _lstm,
    "linear_per_channel": _linear_per_channel,
    "lstm_s16": lambda plan, f, memory, isa: _lstm(plan, f, memory, isa, wide=True),
    "gru": _gru,
}
