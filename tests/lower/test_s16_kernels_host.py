"""CMSIS-NN's arm_softmax_s16, arm_batch_matmul_s16 (with cmx_transpose_s16 laying b out) and
arm_nn_activation_s16 against their host models (host_models/s16_models.py, layer_models.activation_s16), byte
for byte, over random cases: compiled for the build machine
with CMSIS-NN's plain C path (kernels/tests/s16_host.c); the DSP and Helium paths are the firmware tests'.
Needs CMSIS_NN_PATH and cc."""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import host_binary

from cmx_gen.lower.host_models import layer_models, s16_models

CASES = 200


@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> Path:
    sources = [
        "kernels/tests/s16_host.c",
        "kernels/nn/cmx_transpose_s16.c",
        "nn:SoftmaxFunctions/arm_softmax_s16.c",
        "nn:FullyConnectedFunctions/arm_batch_matmul_s16.c",
        "nn:NNSupportFunctions/arm_nn_vec_mat_mult_t_s16_s16.c",
        "nn:ActivationFunctions/arm_nn_activation_s16.c",
        "nn:NNSupportFunctions/arm_nntables.c",
    ]
    return host_binary(tmp_path_factory, "s16_host", sources, "the s16 kernels")


def _run(harness: Path, tmp_path: Path, blob: bytes) -> bytes:
    case = tmp_path / "case.bin"
    case.write_bytes(blob)
    return subprocess.run([str(harness), str(case)], check=True, capture_output=True).stdout


def test_arm_softmax_s16_equals_its_host_model(harness, tmp_path):
    rng = np.random.default_rng(52)
    blob, want = b"", b""
    for _ in range(CASES):
        rows, row = int(rng.integers(1, 6)), int(rng.integers(1, 70))
        scale = float(10 ** rng.uniform(-5, -2.5))  # from a tenth of a unit to 30 across the int16 range
        mult, shift = s16_models.softmax_s16_multiplier(scale)
        x = rng.integers(-32767, 32768, (rows, row)).astype(np.int16)
        if rng.integers(0, 4) == 0:
            x[:] = x[:, :1]  # equal values: the sum at its smallest headroom
        tables = s16_models.EXP_TABLE.astype("<i2").tobytes() + s16_models.ONE_BY_ONE_TABLE.astype("<i2").tobytes()
        blob += struct.pack("<5i", 1, rows, row, mult, shift) + tables + x.astype("<i2").tobytes()
        want += s16_models.softmax_s16(x, mult, shift).astype("<i2").tobytes()
    assert _run(harness, tmp_path, blob) == want


def test_arm_batch_matmul_s16_equals_its_host_model(harness, tmp_path):
    rng = np.random.default_rng(53)
    blob, want = b"", b""
    for _ in range(CASES):
        batches, rows, inner, cols = (int(v) for v in rng.integers(1, [4, 12, 40, 12]))
        mult, shift = int(rng.integers(1 << 30, (1 << 31) - 1)), int(rng.integers(-20, 1))
        a = rng.integers(-32767, 32768, (batches, rows, inner)).astype(np.int16)
        b = rng.integers(-32767, 32768, (batches, inner, cols)).astype(np.int16)
        blob += struct.pack("<7i", 2, batches, rows, inner, cols, mult, shift)
        blob += a.astype("<i2").tobytes() + b.astype("<i2").tobytes()
        want += s16_models.bmm_s16(a, b.transpose(0, 2, 1), mult, shift).astype("<i2").tobytes()
    assert _run(harness, tmp_path, blob) == want


def test_arm_nn_activation_s16_equals_its_host_model_at_every_left_shift(harness, tmp_path):
    rng = np.random.default_rng(54)
    blob, want = b"", b""
    for left_shift in range(-15, 15):
        for tanh in (0, 1):
            x = np.concatenate([rng.integers(-32768, 32768, 300), [-32768, -1, 0, 1, 32767]]).astype(np.int16)
            blob += struct.pack("<4i", 3, len(x), left_shift, tanh) + x.astype("<i2").tobytes()
            kind = "tanh" if tanh else "sigmoid"
            want += layer_models.activation_s16(x, left_shift, kind).astype("<i2").tobytes()
    assert _run(harness, tmp_path, blob) == want
