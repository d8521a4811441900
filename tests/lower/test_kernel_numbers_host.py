"""The numbers the plan computes for cmx-gen's kernels, held to the kernels' own C over random shapes:
the DSP depthwise and the Helium convolution's scratch and the Helium channel constants' layout,
cmx_conv_row_s8's row bytes, scratch and weight layout, cmx_fully_connected_s8's weight layout (kernel_choice.py, own_kernels.py). A plan whose scratch
is short of the kernel's makes the kernel refuse the call; a layout off by one value gives wrong
numbers. The constants themselves are read from the C (kernel_facts.py). Compiled for the build
machine with ARM_MATH_DSP (kernels/tests/numbers_host.c): only the size functions and the packers
run, so the DSP code's intrinsics are compiled but never called. Needs CMSIS_NN_PATH (headers) and cc."""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import host_binary

from cmx_gen.lower.delegate import kernel_choice, own_kernels

CASES = 400
# The DSP code's intrinsics are declared only for Arm: on the build machine they are implicit
# functions, never called, and dropped with their sections.
_FLAGS = (
    "-DARM_MATH_DSP",
    "-Wno-implicit-function-declaration",
    "-ffunction-sections",
    "-Wl,--gc-sections",
)


@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> Path:
    sources = [
        "kernels/tests/numbers_host.c",
        "kernels/nn/cmx_depthwise_3x3_s8.c",
        "kernels/nn/cmx_depthwise_3x3_walk.c",
        "kernels/nn/cmx_depthwise_3x3_planar.c",
        "kernels/nn/cmx_depthwise_3x3_grouped.c",
        "kernels/nn/cmx_conv_row_s8.c",
        "kernels/nn/cmx_conv_helium_s8.c",
        "kernels/nn/cmx_fully_connected_s8.c",
        "kernels/nn/cmx_fully_connected_s4.c",
    ]
    return host_binary(tmp_path_factory, "numbers_host", sources, "cmx-gen's kernels", _FLAGS)


def _ask(harness: Path, folder: Path, blob: bytes) -> bytes:
    case = folder / "cases.bin"
    case.write_bytes(blob)
    return subprocess.run([str(harness), str(case)], check=True, capture_output=True).stdout


def _words(*values: int) -> bytes:
    return struct.pack(f"<{len(values)}i", *values)


def test_depthwise_and_helium_scratch_equal_the_kernels(harness, tmp_path):
    rng = np.random.default_rng(5501)
    depthwise, helium = [], []
    for _ in range(CASES):
        ch, oh, ow = int(rng.integers(1, 97)), int(rng.integers(1, 40)), int(rng.integers(1, 80))
        stride = [int(rng.integers(1, 3)), int(rng.integers(1, 3))] if rng.random() < 0.5 else [1, 1]
        depthwise.append((ch, oh, ow, stride))
        kh, kw = int(rng.choice([1, 1, 3, 5])), int(rng.choice([1, 1, 3, 7]))
        padding = [int(rng.integers(0, 2)), int(rng.integers(0, 2))]
        helium.append((int(rng.integers(1, 130)), kh, kw, stride, padding))
    blob = b"".join(_words(ord("D"), ch, oh, ow, *s) for ch, oh, ow, s in depthwise)
    blob += b"".join(_words(ord("H"), c, kh, kw, *s, *p) for c, kh, kw, s, p in helium)
    answers = struct.unpack(f"<{2 * CASES}i", _ask(harness, tmp_path, blob))
    for (ch, oh, ow, stride), c_bytes in zip(depthwise, answers[:CASES], strict=True):
        assert kernel_choice.dsp_depthwise_scratch(ch, oh, ow, stride) == c_bytes, (ch, oh, ow, stride)
    for (c, kh, kw, stride, padding), c_bytes in zip(helium, answers[CASES:], strict=True):
        assert kernel_choice.helium_scratch(c, kh, kw, stride, padding) == c_bytes, (c, kh, kw, stride, padding)
    assert any(answers[:CASES]) and any(answers[CASES:]), "the cases reach the paths that take scratch"


def _geometry(rng: np.random.Generator) -> own_kernels.RowGeometry:
    """A random cmx_conv_row_params geometry of the kinds row_geometry makes: 1-D (dilated or not),
    1x1, or 2-D; int16 weights where not dilated."""
    in_ch, out_ch = int(rng.integers(1, 40)), int(rng.integers(1, 12))
    kind = rng.choice(["1d", "dilated", "1x1", "2d"])
    kernel = 1 if kind == "1x1" else int(rng.integers(1, 6))
    dilation = int(rng.integers(2, 4)) if kind == "dilated" else 1
    if dilation > 1 and dilation * in_ch % 2:
        in_ch += 1
    rows = int(rng.integers(1, 4)) if kind == "2d" else 1
    wide = int(rng.integers(0, 3)) if dilation == 1 else 0  # 2: int8 in the plan, widened into the scratch
    stride, pad = (1, 0) if kind == "1x1" else (int(rng.integers(1, 3)), int(rng.integers(0, 2)))
    return own_kernels.RowGeometry(
        int(rng.integers(1, 30)), int(rng.integers(8, 60)), in_ch, out_ch, kernel, stride, pad, dilation, rows,
        int(rng.integers(1, 4)) if rows > 1 else 1, int(rng.integers(3, 9)) if rows > 1 else 1, 1, 0, wide,
    )  # fmt: skip


def test_conv_row_numbers_and_weight_layout_equal_the_kernels(harness, tmp_path):
    rng = np.random.default_rng(5502)
    cases = []
    for _ in range(CASES):
        g = _geometry(rng)
        chunk = int(rng.integers(1, 9)) * 2
        filter_ohwi = rng.integers(-128, 128, (g.out_ch, g.rows, g.kernel, g.in_ch), dtype=np.int8)
        cases.append((g, chunk, filter_ohwi))
    blob = b"".join(
        _words(ord("R"), g.positions, g.in_positions, g.in_ch, g.out_ch, g.kernel, g.stride, g.pad, g.dilation,
               g.rows, g.out_rows, g.in_rows, g.row_stride, g.row_pad, g.wide, chunk) + f.tobytes()
        for g, chunk, f in cases
    )  # fmt: skip
    answer = _ask(harness, tmp_path, blob)
    at = 0
    for g, chunk, filter_ohwi in cases:
        row_bytes, scratch = struct.unpack_from("<2i", answer, at)
        packed = own_kernels.row_weights(filter_ohwi, g)
        assert (g.row_bytes, g.scratch_bytes(chunk)) == (row_bytes, scratch), g
        assert packed == answer[at + 8 : at + 8 + len(packed)], g
        at += 8 + len(packed)
    assert at == len(answer)


def test_fully_connected_weight_layout_equals_the_kernels(harness, tmp_path):
    rng = np.random.default_rng(5503)
    cases = [
        rng.integers(-128, 128, (int(rng.integers(1, 20)), int(rng.integers(1, 70))), dtype=np.int8)
        for _ in range(CASES)
    ]
    blob = b"".join(_words(ord("F"), *f.shape) + f.tobytes() for f in cases)
    answer = _ask(harness, tmp_path, blob)
    at = 0
    for filter_rc in cases:
        packed = own_kernels.fc_weights(filter_rc, "DSP")
        assert packed == answer[at : at + len(packed)], filter_rc.shape
        at += len(packed)
    assert at == len(answer)


def test_fully_connected_s4_weight_layout_equals_the_kernels(harness, tmp_path):
    rng = np.random.default_rng(5204)
    cases = [
        rng.integers(-8, 8, (int(rng.integers(1, 20)), int(rng.integers(1, 70))), dtype=np.int8) for _ in range(CASES)
    ]
    blob = b"".join(_words(ord("S"), *v.shape) + v.tobytes() for v in cases)
    answer = _ask(harness, tmp_path, blob)
    at = 0
    for values in cases:
        packed = own_kernels.fc_s4_weights(values)
        assert packed == answer[at : at + len(packed)], values.shape
        assert np.array_equal(own_kernels.fc_s4_filter(packed, *values.shape), values)
        at += len(packed)
    assert at == len(answer)


def test_the_plan_reads_only_plain_defines_of_the_kernels():
    """A constant that differs by core is two plain names in C; the conditional name itself, or one
    written twice, is refused rather than read as whichever came last."""
    from cmx_gen.lower.delegate.kernel_facts import define

    assert define("cmx_nn.h", "CMX_FC_GROUP_MVE") == own_kernels.FC_GROUP["MVE"] == 16
    for source, name in (("cmx_nn.h", "CMX_FC_GROUP"), ("cmx_fully_connected_s8.c", "CMX_FC_COLS")):
        with pytest.raises(LookupError, match=name):
            define(source, name)


def test_helium_constants_layout_equals_the_kernels(harness, tmp_path):
    rng = np.random.default_rng(5504)
    cases = [rng.integers(-(2**31), 2**31, (3, int(rng.integers(1, 40))), dtype=np.int32) for _ in range(CASES)]
    answer = _ask(harness, tmp_path, b"".join(_words(ord("C"), t.shape[1]) + t.astype("<i4").tobytes() for t in cases))
    at = 0
    for table in cases:
        packed = own_kernels.helium_constants(*table)
        assert packed == answer[at : at + len(packed)], table.shape
        at += len(packed)
    assert at == len(answer)
