"""When the plan runs cmx-gen's own kernels (lower/delegate/own_kernels.py) and the layouts it gives
them; real lowering for cortex-m4 (DSP) and cortex-m55 (MVE). That the kernels equal CMSIS-NN on the
target is tests/device/test_kernel_suite.py (SDK); that a plan with them equals the lowering
reference runs here, on the host."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from cmx_gen.lower.delegate import kernel_numbers, own_kernels
from cmx_gen.program import pte


def test_row_weights_read_back_for_any_shape():
    rng = random.Random(3)
    for _ in range(300):
        oc, kernel, ch, dilation = rng.randint(1, 17), rng.randint(1, 9), rng.randint(1, 12), rng.choice([1, 2, 4])
        rows = 1 if dilation > 1 else rng.randint(1, 5)
        wide = 0 if dilation > 1 else rng.randint(0, 1)
        g = own_kernels.RowGeometry(10, 20, ch, oc, kernel, 1, 0, dilation, rows, 4, 8, 1, 0, wide)
        filt = np.array([[rng.randint(-128, 127) for _ in range(g.cols)] for _ in range(oc)], dtype=np.int8)
        blob = kernel_numbers.row_weights(filt, g)
        assert len(blob) == oc * g.row_bytes * (2 if wide else 1)
        assert np.array_equal(kernel_numbers.row_filter(blob, g), filt)


def test_row_weights_are_laid_out_as_the_kernel_reads_them():
    """Channel pair (0, 1): group 0 of row 0 as (w0, w2, w1, w3), then group 0 of row 1, then group 1...;
    an odd last row on its own; rows padded with zeros to four."""
    filt = np.arange(3 * 6, dtype=np.int8).reshape(3, 6)
    g = own_kernels.RowGeometry(10, 12, 3, 3, 2, 1, 0)
    blob = list(np.frombuffer(kernel_numbers.row_weights(filt, g), dtype=np.int8))
    assert blob[:16] == [0, 2, 1, 3, 6, 8, 7, 9, 4, 0, 5, 0, 10, 0, 11, 0]
    assert blob[16:] == [12, 14, 13, 15, 16, 0, 17, 0]
    # dilated: each tap's three channels padded to four
    dilated = own_kernels.RowGeometry(10, 12, 3, 3, 2, 1, 0, 2)
    blob = list(np.frombuffer(kernel_numbers.row_weights(filt, dilated), dtype=np.int8))
    assert blob[16:] == [12, 14, 13, 0, 15, 17, 16, 0]


def test_a_2d_field_is_laid_out_column_by_column():
    """2 kernel rows x 2 kernel columns x 1 channel, filter row (r0c0, r0c1, r1c0, r1c1): the kernel
    widens a chunk column by column, so the field reads (r0c0, r1c0, r0c1, r1c1)."""
    filt = np.array([[1, 2, 3, 4]], dtype=np.int8)
    g = own_kernels.RowGeometry(4, 5, 1, 1, 2, 1, 0, 1, 2, 4, 5, 1, 0)
    assert list(np.frombuffer(kernel_numbers.row_weights(filt, g), dtype=np.int8)) == [1, 2, 3, 4]  # (w0, w2, w1, w3)
    wide = own_kernels.RowGeometry(4, 5, 1, 1, 2, 1, 0, 1, 2, 4, 5, 1, 0, 1)
    assert list(np.frombuffer(kernel_numbers.row_weights(filt, wide), dtype="<i2")) == [1, 3, 2, 4]  # int16 in order


def test_an_odd_column_at_an_odd_stride_takes_a_zero_so_every_column_starts_on_a_word():
    """3 kernel rows x 2 columns x 1 channel, filter row (r0c0, r0c1, r1c0, r1c1, r2c0, r2c1): at stride 1
    each widened column is (r0, r1, r2, 0) (cmx_conv_row_s8_column, an RGB stem's 9 values at stride 1
    likewise), at stride 2 the columns stay three values (two positions apart: already on a word)."""
    filt = np.array([[1, 2, 3, 4, 5, 6]], dtype=np.int8)
    g = own_kernels.RowGeometry(4, 5, 1, 1, 2, 1, 0, 1, 3, 3, 5, 1, 0)
    assert g.row_bytes == 8  # two columns of (r0, r1, r2, 0)
    assert list(np.frombuffer(kernel_numbers.row_weights(filt, g), dtype=np.int8)) == [1, 5, 3, 0, 2, 6, 4, 0]
    strided = own_kernels.RowGeometry(2, 5, 1, 1, 2, 2, 0, 1, 3, 2, 5, 2, 0)
    assert strided.row_bytes == 8  # two columns of three values, padded to 8
    assert list(np.frombuffer(kernel_numbers.row_weights(filt, strided), dtype=np.int8)) == [1, 5, 3, 2, 4, 0, 6, 0]
    for geometry in (g, strided):
        assert np.array_equal(kernel_numbers.row_filter(kernel_numbers.row_weights(filt, geometry), geometry), filt)


def _geometry(x, w, out, stride=(1, 1), padding=(0, 0), dilation=(1, 1)):
    return own_kernels.row_geometry(torch.empty(x), torch.empty(w), torch.empty(out), stride, padding, dilation)


def test_which_convolutions_read_as_a_row():
    one_d = _geometry((1, 8, 1, 64), (16, 1, 5, 8), (1, 16, 1, 30), stride=(1, 2), padding=(0, 1))
    assert one_d == own_kernels.RowGeometry(30, 64, 8, 16, 5, 2, 1)
    pointwise = _geometry((1, 64, 25, 5), (64, 1, 1, 64), (1, 64, 25, 5))
    assert pointwise == own_kernels.RowGeometry(125, 125, 64, 64, 1, 1, 0, wide=1)  # >= 100 positions: int16
    assert _geometry((2, 5, 3, 3), (1, 1, 1, 5), (2, 1, 3, 3)) == own_kernels.RowGeometry(18, 18, 5, 1, 1, 1, 0)
    assert _geometry((2, 8, 1, 64), (16, 1, 5, 8), (2, 16, 1, 60)) is None  # each image's ends are padded
    three = _geometry((1, 8, 9, 9), (8, 3, 3, 8), (1, 8, 5, 5), stride=(2, 2), padding=(1, 1))
    assert three == own_kernels.RowGeometry(5, 9, 8, 8, 3, 2, 1, 1, 3, 5, 9, 2, 1)  # 2-D: a row at a time
    assert _geometry((1, 8, 9, 9), (8, 1, 1, 8), (1, 8, 5, 5), stride=(2, 2)).rows == 1  # strided 1x1: 2-D
    assert _geometry((2, 8, 9, 9), (8, 3, 3, 8), (2, 8, 7, 7)) is None  # each image's edges are padded
    assert _geometry((1, 8, 9, 9), (8, 3, 3, 8), (1, 8, 5, 5), dilation=(2, 2)) is None
    assert _geometry((1, 8, 1, 64), (16, 1, 3, 8), (1, 16, 1, 60), dilation=(1, 2)).dilation == 2
    assert _geometry((1, 3, 1, 64), (16, 1, 3, 3), (1, 16, 1, 60), dilation=(1, 3)) is None  # 3 x 3 odd
    assert _geometry((1, 8, 1, 64), (16, 1, 3, 4), (1, 16, 1, 62)) is None  # grouped


def test_a_chunk_fits_cmsis_nn_scratch_or_the_budget():
    g = own_kernels.RowGeometry(60, 62, 16, 16, 3, 1, 0)
    chunk = g.chunk(192)
    assert chunk % 2 == 0 and g.scratch_bytes(chunk) <= own_kernels.ROW_SCRATCH_BUDGET
    assert g.scratch_bytes(chunk + 2) > own_kernels.ROW_SCRATCH_BUDGET
    wide = own_kernels.RowGeometry(125, 125, 64, 64, 1, 1, 0)
    assert wide.chunk(0, narrow=True) == 2  # at least two positions, whatever it takes
    # a 1x1 layer whose positions run three at a time: 6 of them (two triples) in ROW_SCRATCH_BUDGET_TRIPLES
    assert wide.chunk(0) == 6 and wide.scratch_bytes(6) <= own_kernels.ROW_SCRATCH_BUDGET_TRIPLES
    assert own_kernels.RowGeometry(9, 9, 256, 16, 1, 1, 0).chunk(0) == 6
    assert own_kernels.RowGeometry(3, 3, 64, 16, 1, 1, 0).chunk(0) == 4  # all of its positions, even
    assert own_kernels.RowGeometry(9, 9, 1024, 16, 1, 1, 0).chunk(0) == 2  # 6 x 1024 values would not fit
    assert own_kernels.RowGeometry(125, 125, 24, 64, 1, 1, 0).chunk(0) == 10  # 24 values: ROW_SCRATCH_BUDGET, as before


def test_dsp_plans_run_own_kernels_and_mve_plans_do_not(lowered_dir):
    m4 = pte.backend_layers(
        (
            lowered_dir("Conv1dNet", "--input-shape", "1,8,64", "--random-calibration", target="cortex-m4")
            / "model.pte"
        ).read_bytes()
    )
    m55 = pte.backend_layers(
        (lowered_dir("Conv1dNet", "--input-shape", "1,8,64", "--random-calibration") / "model.pte").read_bytes()
    )
    assert m4.count("conv_row") == 2 and "conv" not in m4, m4
    assert m55.count("conv_helium") == 2 and "conv_row" not in m55, m55
    # the two layout changes run inside the plan: one delegate call for the whole int8 program
    assert m4.count("transpose") == 2 and m55.count("transpose") == 2


@pytest.mark.parametrize("target, isa", [("cortex-m4", "DSP"), ("cortex-m55", "MVE")])
def test_a_plan_with_own_kernels_is_the_lowering_reference(lowered_dir, target, isa):
    from cmx_gen.program import plan_reference

    out = lowered_dir("Conv1dNet", "--input-shape", "1,8,64", "--random-calibration", target=target)
    reference = np.load(out / "reference.npz")
    got = plan_reference.reference((out / "model.pte").read_bytes(), [reference["input_0"]], isa)
    assert np.array_equal(got[0], reference["output_0"])


@pytest.mark.parametrize("model", ["ConvNet", "Conv1dNet"])
def test_helium_plans_run_convolutions_on_cmx_conv_helium_and_equal_the_reference(lowered_dir, model):
    """On the M55 every convolution of ConvNet (3x3 with padding, 1x1) and Conv1dNet (1-D, k5 and k3)
    runs cmx_conv_helium_s8, on the M4 none does; the plan, run from its bytes (the filter read back
    from its layout, the multipliers, shifts and bias from its constants), is the lowering's reference."""
    from cmx_gen.program import plan_reference

    args = ("--input-shape", "1,8,64") if model == "Conv1dNet" else ()
    out = lowered_dir(model, *args, "--random-calibration")
    data = (out / "model.pte").read_bytes()
    kinds = pte.backend_layers(data)
    assert kinds.count("conv_helium") == 2 and "conv" not in kinds, kinds
    m4 = pte.backend_layers(
        (lowered_dir(model, *args, "--random-calibration", target="cortex-m4") / "model.pte").read_bytes()
    )
    assert "conv_helium" not in m4, m4
    reference = np.load(out / "reference.npz")
    got = plan_reference.reference(data, [reference["input_0"]], "MVE")
    assert np.array_equal(got[0], reference["output_0"])


def test_helium_constants_read_back_and_are_laid_out_as_the_kernel_reads_them():
    for rows in (1, 4, 7, 64):
        sums, mults, shifts = (np.arange(rows, dtype=np.int32) + base for base in (1000, 2000, 3000))
        blob = kernel_numbers.helium_constants(sums, mults, shifts)
        assert len(blob) == 12 * rows
        back = kernel_numbers.helium_constants_read(blob, rows)
        assert all(np.array_equal(a, b) for a, b in zip(back, (sums, mults, shifts)))
    words = list(np.frombuffer(kernel_numbers.helium_constants(*(np.arange(5) + b for b in (0, 10, 20))), dtype="<i4"))
    assert words == [0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23, 4, 14, 24]  # a block of four, then row 4 alone


def test_kernel_sums_wrap_as_int32_and_give_the_bias_back():
    rng = np.random.default_rng(7)
    filt = rng.integers(-128, 128, size=(9, 37), dtype=np.int8)
    bias = rng.integers(-(1 << 31), 1 << 31, size=9, dtype=np.int64).astype(np.int32)
    for offset in (-127, 0, 5, 128):
        sums = own_kernels.kernel_sums(filt, bias, offset)
        expect = (filt.astype(np.int64).sum(axis=1) * offset + bias).astype(np.int32)  # numpy wraps int64 -> int32
        assert sums.dtype == np.dtype("<i4") and np.array_equal(sums, expect)
        assert np.array_equal(own_kernels.bias_from_sums(sums, filt, offset), bias)
    assert np.array_equal(
        own_kernels.kernel_sums(filt, None, 3), (filt.astype(np.int64).sum(axis=1) * 3).astype(np.int32)
    )


def test_fc_weights_read_back_and_are_laid_out_as_the_kernel_reads_them():
    rng = np.random.default_rng(5)
    for isa in ("DSP", "MVE"):
        for rows, cols in [(1, 4), (4, 8), (7, 12), (128, 640), (13, 4), (9, 37)]:
            filt = rng.integers(-128, 128, size=(rows, cols), dtype=np.int8)
            blob = kernel_numbers.fc_weights(filt, own_kernels.FC_GROUP[isa])
            assert len(blob) == rows * -(-cols // own_kernels.FC_GROUP[isa]) * own_kernels.FC_GROUP[isa]
            assert np.array_equal(kernel_numbers.fc_filter(blob, rows, cols, own_kernels.FC_GROUP[isa]), filt)
    filt = np.arange(5 * 8, dtype=np.int8).reshape(5, 8)  # rows 0-3 a block, row 4 on its own
    blob = list(np.frombuffer(kernel_numbers.fc_weights(filt, own_kernels.FC_GROUP["DSP"]), dtype=np.int8))
    assert blob[:16] == [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27]
    assert blob[32:] == list(range(32, 40))
    mve = list(np.frombuffer(kernel_numbers.fc_weights(filt, own_kernels.FC_GROUP["MVE"]), dtype=np.int8))
    assert mve[:16] == list(range(8)) + [0] * 8 and mve[16:24] == list(range(8, 16))  # padded to 16
    assert own_kernels.fc_applies(640, 0, "DSP") and not own_kernels.fc_applies(10, 0, "DSP")
    assert own_kernels.fc_applies(10, 0, "MVE") and not own_kernels.fc_applies(8, 3, "MVE")
    assert not own_kernels.fc_applies(8, 0, "")  # a core with neither: CMSIS-NN's


def test_four_bit_weights_read_back_for_any_shape():
    """cmx_fully_connected_s4_weights' layout (two values a byte, offset by 8) read back through the C
    packer's own map of where each value went."""
    rng = np.random.default_rng(5505)
    for _ in range(60):
        values = rng.integers(-8, 8, (int(rng.integers(1, 20)), int(rng.integers(1, 70))), dtype=np.int8)
        packed = kernel_numbers.fc_s4_weights(values)
        assert len(packed) == values.shape[0] * -(-values.shape[1] // 8) * 4
        assert np.array_equal(kernel_numbers.fc_s4_filter(packed, *values.shape), values)


def test_the_plan_sizes_cmsis_nn_scratch_with_cmsis_nn():
    """arm_convolve_s8_get_buffer_size as CMSIS-NN computes it (the wheel's bindings): a 3x3 layer of 3
    channels reads 27 columns, on DSP two int16 im2col columns of 28, on Helium four of 32 int8."""
    from cmx_gen.lower.delegate import cmsis_sizes

    assert cmsis_sizes.convolve_s8("DSP", 3, (3, 3)) == 2 * 28 * 2
    assert cmsis_sizes.convolve_s8("MVE", 3, (3, 3)) == 4 * 32
    # arm_convolve_wrapper_s8: none for a 1x1 convolution at stride 1
    pointwise = cmsis_sizes.ConvShapes((1, 4, 4, 8), (8, 1, 1, 8), (1, 4, 4, 8), (0, 0), (1, 1), (1, 1))
    assert cmsis_sizes.convolve_wrapper("DSP", "s8", pointwise) == 0
