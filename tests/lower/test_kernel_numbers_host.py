"""The scratch the plan asks of kernels/nn/cmx_nn_layout.c (on integers, through kernel_numbers.py) held to
what the kernels themselves ask at run time (their size functions on CMSIS-NN's structs) over random
shapes: the DSP depthwise's and the Helium convolution's. A plan whose scratch is short of the kernel's
makes the kernel refuse the call. Compiled for the build machine with ARM_MATH_DSP
(kernels/tests/numbers_host.c): only the size functions run, so the DSP code's intrinsics are compiled but
never called. Needs CMSIS_NN_PATH (headers) and cc."""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import host_binary

from cmx_gen.lower.delegate import kernel_numbers, own_kernels

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
        "kernels/nn/cmx_nn_layout.c",
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
        assert kernel_numbers.dw_band_scratch_bytes(ch, oh, ow, tuple(stride)) == c_bytes, (ch, oh, ow, stride)
    for (c, kh, kw, stride, padding), c_bytes in zip(helium, answers[CASES:], strict=True):
        asked = kernel_numbers.helium_field_bytes(c, (kh, kw), tuple(stride), tuple(padding))
        assert asked == c_bytes, (c, kh, kw, stride, padding)
    assert any(answers[:CASES]) and any(answers[CASES:]), "the cases reach the paths that take scratch"


def test_the_plan_reads_only_plain_defines_of_the_kernels():
    """A constant that differs by core is two plain names in C; the conditional name itself, or one
    written twice, is refused rather than read as whichever came last."""
    from cmx_gen.lower.delegate.kernel_facts import define

    assert define("cmx_nn_layout.h", "CMX_FC_GROUP_MVE") == own_kernels.FC_GROUP["MVE"] == 16
    for source, name in (("cmx_nn_layout.h", "CMX_FC_GROUP"), ("cmx_fully_connected_s8.c", "CMX_FC_COLS")):
        with pytest.raises(LookupError, match=name):
            define(source, name)
