"""cmx_layer_norm_s8, cmx_mean_s8, cmx_lut_s8 and cmx_narrow_s16_s8 (kernels/nn/) against their host models (layer_models.py,
host_own.py), byte for byte, over 200 random cases each: row counts, channel counts, offsets, epsilons,
gains, biases, requantization, tables. Compiled for the build machine (kernels/tests/own_host.c; integer C, so the target
computes the same); the firmware tests' PASS holds them on QEMU. Needs CMSIS_NN_PATH (headers) and cc."""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import host_binary

from cmx_gen.lower.host_models import layer_models, s16_models
from cmx_gen.lower.ops import own_ops

CASES = 200


@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> Path:
    sources = [
        "kernels/tests/own_host.c",
        "kernels/nn/cmx_layer_norm_s8.c",
        "kernels/nn/cmx_mean_s8.c",
        "kernels/nn/cmx_lut_s8.c",
        "kernels/nn/cmx_transpose_s8.c",
    ]
    return host_binary(tmp_path_factory, "own_host", sources, "cmx-gen's kernels")


def _run(harness: Path, folder: Path, blob: bytes) -> bytes:
    case = folder / "case.bin"
    case.write_bytes(blob)
    return subprocess.run([str(harness), str(case)], check=True, capture_output=True).stdout


def test_layer_norm_equals_its_host_model(harness, tmp_path):
    rng = np.random.default_rng(341)
    for index in range(CASES):
        rows, channels = int(rng.integers(1, 9)), int(rng.choice([1, 2, 3, 7, 16, 24, 64, 200, 768]))
        gamma = torch.from_numpy(rng.normal(1, float(rng.choice([0.01, 0.5, 3])), channels))
        beta = torch.from_numpy(rng.normal(0, 0.5, channels))
        x_q = (float(rng.uniform(0.002, 0.2)), int(rng.integers(-128, 128)))
        y_q = (float(rng.uniform(0.005, 0.1)), int(rng.integers(-30, 31)))
        eps = float(rng.choice([0.0, 1e-5, 1e-3, 0.1]))
        in_off, out_off, eps_term, gains, biases = own_ops.layer_norm_args(channels, gamma, beta, eps, x_q, y_q)
        x = rng.integers(-128, 128, (rows, channels)).astype(np.int8)
        if index % 10 == 0:
            x[:] = x[0, 0]  # a constant row: no variance
        blob = struct.pack("<5i", ord("L"), rows, channels, in_off, out_off)
        blob += struct.pack("<Q", eps_term) + gains.astype("<i4").tobytes() + biases.astype("<i4").tobytes()
        got = _run(harness, tmp_path, blob + x.tobytes())
        want = layer_models.layer_norm_s8(x, in_off, out_off, eps_term, gains, biases)
        assert got == want.tobytes(), f"case {index}: {rows} x {channels}, eps {eps}"


def test_mean_equals_its_host_model(harness, tmp_path):
    rng = np.random.default_rng(342)
    for index in range(CASES):
        outer, count, inner = (int(rng.integers(1, 6)), int(rng.integers(1, 100)), int(rng.integers(1, 20)))
        x_q = (float(rng.uniform(0.002, 0.2)), int(rng.integers(-128, 128)))
        y_q = (float(rng.uniform(0.002, 0.2)), int(rng.integers(-128, 128)))
        mult, shift = own_ops.mean_multiplier(count, x_q, y_q)
        x = rng.integers(-128, 128, (outer, count, inner)).astype(np.int8)
        blob = struct.pack("<8i", ord("M"), outer, count, inner, mult, shift, -x_q[1], y_q[1]) + x.tobytes()
        got = _run(harness, tmp_path, blob)
        want = layer_models.mean_s8(x, outer, count, inner, mult, shift, -x_q[1], y_q[1])
        assert got == want.tobytes(), f"case {index}: {outer} x {count} x {inner}"


def test_lut_equals_its_host_model(harness, tmp_path):
    """The table is indexed by the input + 128 (host_own._lut): every int8 value, at every count."""
    rng = np.random.default_rng(343)
    for index in range(CASES):
        count = int(rng.integers(1, 600)) if index else 256
        table = rng.integers(-128, 128, 256).astype(np.int8)
        x = np.arange(-128, 128, dtype=np.int8) if index == 0 else rng.integers(-128, 128, count).astype(np.int8)
        got = _run(harness, tmp_path, struct.pack("<2i", ord("T"), count) + table.tobytes() + x.tobytes())
        assert got == table[x.astype(np.int64) + 128].tobytes(), f"case {index}: {count} elements"


def test_lut_s16_equals_its_host_model(harness, tmp_path):
    """cmx_lut_s8_s16 (int8 in, int16 out: where an int8 layer meets an int16 one) as host_s16.lut reads it."""
    rng = np.random.default_rng(1616)
    for index in range(CASES):
        count = int(rng.integers(1, 600)) if index else 256
        table = rng.integers(-32767, 32768, 256).astype("<i2")
        x = np.arange(-128, 128, dtype=np.int8) if index == 0 else rng.integers(-128, 128, count).astype(np.int8)
        got = _run(harness, tmp_path, struct.pack("<2i", ord("U"), count) + table.tobytes() + x.tobytes())
        assert got == table[x.astype(np.int64) + 128].tobytes(), f"case {index}: {count} elements"


def test_narrow_s16_equals_its_host_model(harness, tmp_path):
    """cmx_narrow_s16_s8 (int16 in, int8 out: where an int16 layer meets an int8 one) as host_s16.narrow reads it,
    over the requantizations s16_ops makes (s16_models.narrowing: random scales and zero points, an output scale
    finer and coarser than the input's) and over guesses far off (the guess decides the time, not the value)."""
    rng = np.random.default_rng(1617)
    every = np.arange(-32768, 32768).astype("<i2")
    for index in range(CASES):
        ratio = float(np.exp(rng.uniform(np.log(0.3), np.log(3000))))  # int8 scale / int16 scale
        zero = int(rng.integers(-128, 128))
        out = np.clip(np.round(every.astype(np.float32) * np.float32(1 / ratio)) + zero, -128, 127).astype(np.int64)
        thresholds, lowest, mult, shift = s16_models.narrowing(out)
        if index % 7 == 3:
            mult = int(rng.integers(0, 32768))  # a wrong guess: the walk still lands on the step
        count = 65536 if index == 0 else int(rng.integers(1, 600))
        x = every if index == 0 else rng.integers(-32768, 32768, count).astype("<i2")
        blob = struct.pack("<6i", ord("N"), count, len(thresholds), lowest, mult, shift)
        blob += np.asarray(thresholds, dtype="<i2").tobytes() + x.tobytes()
        got = _run(harness, tmp_path, blob)
        assert got == s16_models.narrow_s16(x, thresholds, lowest).tobytes(), f"case {index}: ratio {ratio:.2f}"
        assert got == out[x.astype(np.int64) + 32768].astype(np.int8).tobytes(), f"case {index}: the staircase"


def test_arguments_outside_the_contract_are_refused(harness, tmp_path):
    """cmx_nn.h's @return: ARM_CMSIS_NN_ARG_ERROR (-1) for a size below 1, a negative epsilon, a missing
    table, gain or bias, instead of a run over nothing or a NULL read."""
    statuses = _run(harness, tmp_path, struct.pack("<i", ord("A"))).decode().split()
    assert statuses == ["-1"] * 12
