"""cmx_gru_s8 (kernels/nn/) against its host model (layer_models.gru_s8), byte for byte, over 200
random GRUs: sizes, batch- and time-major layouts, zero points and weight ranges. Compiled for the
build machine with CMSIS-NN's plain C path (kernels/tests/gru_host.c); the target's DSP and MVE
paths of the same CMSIS-NN blocks are held by the firmware tests' PASS. Needs CMSIS_NN_PATH and cc."""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import host_binary

from cmx_gen.lower.delegate.plan_fields import GRU_SCALARS
from cmx_gen.lower.host_models import layer_models
from cmx_gen.lower.ops import gru

CASES = 200


@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> Path:
    sources = [
        "kernels/tests/gru_host.c",
        "kernels/nn/cmx_gru_s8.c",
        "nn:NNSupportFunctions/arm_nn_vec_mat_mul_result_acc_s8_s16.c",
        "nn:ActivationFunctions/arm_nn_activation_s16.c",
        "nn:NNSupportFunctions/arm_nntables.c",
    ]
    return host_binary(tmp_path_factory, "gru_host", sources, "cmx_gru_s8")


def _case(rng: np.random.Generator) -> tuple[bytes, np.ndarray, gru.GruQuant, bool, bool]:
    inputs, hidden, steps, batch = (
        int(rng.integers(1, 24)),
        int(rng.integers(1, 40)),
        int(rng.integers(1, 12)),
        int(rng.integers(1, 4)),
    )
    spread = float(rng.choice([0.05, 0.3, 1.5]))
    w = [
        torch.from_numpy(rng.normal(0, spread, shape))
        for shape in ((3 * hidden, inputs), (3 * hidden, hidden), (3 * hidden,), (3 * hidden,))
    ]
    x_q = (float(rng.uniform(0.002, 0.05)), int(rng.integers(-128, 128)))
    h_q = (float(rng.uniform(0.004, 0.02)), int(rng.integers(-20, 21)))
    quant = gru.quantize((w[0], w[1], w[2], w[3]), x_q, h_q)
    batch_first = bool(rng.integers(0, 2))
    x = rng.integers(-128, 128, (batch, steps, inputs) if batch_first else (steps, batch, inputs)).astype(np.int8)
    reverse = bool(rng.integers(0, 2))
    words = struct.pack("<6i", 0 if batch_first else 1, batch, steps, inputs, hidden, int(reverse))
    words += struct.pack("<8i", *(getattr(quant, name) for name in GRU_SCALARS))
    for name in gru.GATES:
        g = quant.gates[name]
        words += struct.pack("<2i", g.input_multiplier, g.input_shift) + g.input_weights.tobytes()
        words += g.input_effective_bias.astype("<i4").tobytes()
        words += struct.pack("<2i", g.hidden_multiplier, g.hidden_shift) + g.hidden_weights.tobytes()
        words += g.hidden_effective_bias.astype("<i4").tobytes()
    return words + x.tobytes(), x, quant, batch_first, reverse


def test_cmx_gru_s8_equals_its_host_model(harness, tmp_path):
    rng = np.random.default_rng(34)
    for index in range(CASES):
        blob, x, quant, batch_first, reverse = _case(rng)
        case = tmp_path / "case.bin"
        case.write_bytes(blob)
        got = subprocess.run([str(harness), str(case)], check=True, capture_output=True).stdout
        want = layer_models.gru_s8(x, quant, batch_first, reverse)
        assert got == want.tobytes(), f"case {index}: shape {x.shape}, batch_first={batch_first}, reverse={reverse}"
