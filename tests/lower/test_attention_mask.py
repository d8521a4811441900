"""attention.allowed_keys: a constant attention mask as each score row's [lo, hi) keys, or None where
the backend's masked softmax cannot take it (the attention then stays on upstream's float path)."""

from __future__ import annotations

import torch

from cmx_gen.lower.host_models.kernel_models import masked_softmax_s8, softmax_s8
from cmx_gen.lower.rewrites.attention import allowed_keys

Q = torch.Size([1, 2, 4, 8])  # batch, heads, queries, head dim


def test_is_causal_is_torchs_top_left_triangle():
    assert allowed_keys(None, True, Q, 4) == [0, 1, 0, 2, 0, 3, 0, 4]
    assert allowed_keys(None, True, Q, 6) == [0, 1, 0, 2, 0, 3, 0, 4]  # more keys than queries: still top-left


def test_a_boolean_window_and_a_float_mask_of_zero_and_minus_infinity():
    i = torch.arange(4)
    window = (i[None, :] - i[:, None]).abs() <= 1
    assert allowed_keys(window, False, Q, 4) == [0, 2, 0, 3, 1, 4, 2, 4]
    additive = torch.zeros(4, 4).masked_fill(~window, float("-inf"))
    assert allowed_keys(additive, False, Q, 4) == allowed_keys(window, False, Q, 4)


def test_a_row_with_no_key_allowed_is_all_zero():
    mask = torch.ones(4, 4, dtype=torch.bool)
    mask[2] = False
    assert allowed_keys(mask, False, Q, 4)[4:6] == [0, 0]


def test_a_mask_per_head_gives_a_pair_per_row():
    mask = torch.ones(2, 4, 4, dtype=torch.bool)
    mask[1, :, 3] = False  # the second head never sees the last key
    assert allowed_keys(mask, False, Q, 4) == [0, 4] * 4 + [0, 3] * 4


def test_masks_the_backend_cannot_take():
    i = torch.arange(4)
    assert allowed_keys((i[None, :] - i[:, None]) % 2 == 0, False, Q, 4) is None  # no run of keys
    assert allowed_keys(torch.full((4, 4), -1.0), False, Q, 4) is None  # an additive bias, not a mask
    assert allowed_keys(torch.ones(3, 4, dtype=torch.bool), False, Q, 4) is None  # does not broadcast
    assert allowed_keys(None, False, Q, 4) is None


def test_the_masked_softmax_is_arm_softmax_s8_over_the_allowed_keys_alone():
    """Its host model: each row's allowed keys through softmax_s8 (arm_softmax_s8's model), -128 elsewhere."""
    g = torch.Generator().manual_seed(0)
    x = torch.randint(-128, 128, (6, 10), generator=g, dtype=torch.int8)
    ranges = [0, 10, 2, 7, 0, 0]
    out = masked_softmax_s8(x, ranges, 1_500_000_000, 22, -248)
    for r, (lo, hi) in enumerate([(0, 10), (2, 7), (0, 0)] * 2):
        row = out[r]
        if hi > lo:
            assert torch.equal(row[lo:hi], softmax_s8(x[r : r + 1, lo:hi], -1, 0, -128, 1_500_000_000, 22, -248)[0])
        assert bool((row[:lo] == -128).all()) and bool((row[hi:] == -128).all())
