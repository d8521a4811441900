"""Partial overlap (overlap.py, work_memory.py) against layer-by-layer execution, on the host.

A layer is walked as the kernels walk it (blocks of output positions; copy-in, direct, or a few
channels at a time), with its output `lead` bytes below its input in one memory, and every input
byte read is checked not to have been overwritten yet: exactly what layer-by-layer execution, with
disjoint buffers, guarantees. Random shapes, strides, paddings and blocks; one byte less than the
lead must break some case, so the bound is not loose. The kernels themselves are checked on the
target (tests/device/, bench/conformance.py)."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from cmx_gen.lower.delegate import own_kernels
from cmx_gen.lower.delegate.kernel_choice import DEPTHWISE_BAND
from cmx_gen.lower.delegate.kernel_facts import define
from cmx_gen.lower.delegate.overlap import Walk, band_blocks, conv_row_blocks, flat_blocks, image_reads, row_blocks
from cmx_gen.lower.delegate.work_memory import ALIGN, Buffer, place

DEPTHWISE_GROUP_BAND = define("cmx_nn_layout.h", "CMX_DW_GROUP_BAND")  # the grouped path's band


def _field(p: int, geo: dict[str, int], channels: slice | None = None) -> np.ndarray:
    """The input bytes output position p reads (NHWC), all channels or `channels`."""
    c, h, w, k, s, pad, ow = (geo[x] for x in ("c", "h", "w", "k", "s", "pad", "ow"))
    oy, ox = divmod(p, ow)
    ys = [y for y in range(oy * s - pad, oy * s - pad + k) if 0 <= y < h]
    xs = [x for x in range(ox * s - pad, ox * s - pad + k) if 0 <= x < w]
    ch = np.arange(c)[channels] if channels is not None else np.arange(c)
    return np.array([(y * w + x) * c + i for y in ys for x in xs for i in ch], dtype=np.int64)


def _clean_walk(walk: Walk, geo: dict[str, int], gap: int) -> bool:
    """Walks the layer with its output `gap` bytes below its input; True if no read saw a byte the
    walk had already written."""
    oc = walk.out_bytes
    in_bytes = geo["h"] * geo["w"] * geo["c"]
    base = max(gap, 0)  # input at `base`, output at base - gap
    written = np.zeros(base + in_bytes + len(walk.first_read) * oc + abs(gap) + 8, dtype=bool)

    def read_ok(idx: np.ndarray) -> bool:
        return not written[base + idx].any()

    def write(p: int, channels: slice | None = None) -> None:
        lo, hi = (p * oc, (p + 1) * oc) if channels is None else (p * oc + channels.start, p * oc + channels.stop)
        written[base - gap + lo : base - gap + hi] = True

    for start, end in walk.blocks:
        positions = range(start, end)
        if walk.step:
            for p in positions:
                for c0 in range(0, oc, walk.step):
                    group = slice(c0, min(c0 + walk.step, oc))
                    if not read_ok(_field(p, geo, group)):
                        return False
                    write(p, group)
        elif walk.copy_in:
            if not all(read_ok(_field(p, geo)) for p in positions):
                return False
            for p in positions:
                write(p)
        else:  # direct: the block's writes may come before its last reads
            for p in positions:
                write(p)
            if not all(read_ok(_field(p, geo)) for p in positions):
                return False
    return True


def _random_layer(rng: random.Random) -> tuple[Walk, dict[str, int]]:
    k = rng.choice([1, 3, 5])
    s = rng.choice([1, 2])
    pad = rng.randint(0, k // 2)
    h, w = rng.randint(k, 12), rng.randint(k, 12)
    oh, ow = (h + 2 * pad - k) // s + 1, (w + 2 * pad - k) // s + 1
    kind = rng.choice(["copy_in_flat", "copy_in_rows", "direct_flat", "direct_rows", "depthwise"])
    step = rng.choice([4, 8]) if kind == "depthwise" else 0  # cmx_depthwise_3x3_s8: DSP four, Helium eight
    c = rng.choice([4, 8, 12, 16] if step == 4 else [8, 16, 24]) if kind == "depthwise" else rng.randint(1, 24)
    oc = c if kind == "depthwise" else rng.randint(1, 24)
    geo = {"c": c, "h": h, "w": w, "k": k, "s": s, "pad": pad, "ow": ow}
    reads = image_reads((1, c, h, w), (1, oc, oh, ow), (s, s), (pad, pad))
    block = rng.choice([1, 2, 4, 6])
    blocks = {
        "copy_in_flat": flat_blocks(oh * ow, block),
        "copy_in_rows": row_blocks(oh, ow, block),
        "direct_flat": flat_blocks(oh * ow, block),
        "direct_rows": row_blocks(oh, ow, block),
        "depthwise": flat_blocks(oh * ow, 1),
    }[kind]
    return Walk(blocks, oc, reads, copy_in=kind.startswith("copy_in"), step=step), geo


def test_lead_is_safe_and_tight_over_random_layers() -> None:
    rng = random.Random(32)
    tight = 0
    for _ in range(400):
        walk, geo = _random_layer(rng)
        lead = walk.lead()
        in_bytes = geo["h"] * geo["w"] * geo["c"]
        gap = max(lead, -in_bytes)
        assert _clean_walk(walk, geo, gap), (walk.blocks[:3], geo, lead)
        assert _clean_walk(walk, geo, -(-gap // ALIGN) * ALIGN)  # the planner's 16-byte rounding: lower still
        if lead > -in_bytes and not _clean_walk(walk, geo, gap - 1):
            tight += 1
    assert tight > 300  # one byte higher breaks nearly every layer whose lead bounds it


def _check_placement(buffers: list[Buffer], offsets: dict[str, int]) -> None:
    for a in buffers:
        assert offsets[a.key] % ALIGN == 0 and offsets[a.key] >= 0
        for b in buffers:
            if a.key >= b.key or not a.nbytes or not b.nbytes or a.first > b.last or b.first > a.last:
                continue
            apart = offsets[a.key] >= offsets[b.key] + b.nbytes or offsets[b.key] >= offsets[a.key] + a.nbytes
            writes_over = [(x, y) for x, y in ((a, b), (b, a)) if y.key in x.shares and x.first == y.last]
            assert apart or any(offsets[x.key] <= offsets[y.key] - x.lead for x, y in writes_over), (a, b)


@pytest.mark.parametrize("seed", range(40))
def test_placement_never_overlaps_live_buffers_except_behind_the_read_front(seed: int) -> None:
    rng = random.Random(seed)
    buffers: list[Buffer] = []
    for layer in range(rng.randint(3, 14)):
        last = layer + rng.choice([1, 1, 1, 2, 3])
        dying = [b for b in buffers if b.last == layer and not b.key.endswith(":scratch")]
        shares = tuple(b.key for b in dying[:1]) if rng.random() < 0.8 else ()
        lead = rng.randint(-64, 700) if shares else 0
        buffers.append(Buffer(f"t{layer}", rng.randint(1, 40) * 64, layer, last, shares, lead))
        if rng.random() < 0.5:
            buffers.append(Buffer(f"t{layer}:scratch", rng.randint(1, 20) * 32, layer, layer))
    work = place(buffers)
    _check_placement(buffers, work.offsets)
    assert work.nbytes <= work.layer_by_layer
    assert max(work.offsets[b.key] + b.nbytes for b in buffers) <= work.nbytes


def test_a_chain_of_in_place_layers_needs_one_tensor_and_its_leads() -> None:
    """DS-CNN's shape: four 3x3 depthwise (lead 448) + pointwise (lead 0) pairs over 8,000 bytes."""
    buffers = [Buffer("t0", 8000, 0, 1)]
    for i in range(1, 9):
        buffers.append(Buffer(f"t{i}", 8000, i, i + 1, (f"t{i - 1}",), 448 if i % 2 else 0))
    work = place(buffers)
    assert work.layer_by_layer == 16000
    assert work.nbytes == 8000 + 4 * 448
    assert set(work.shared) == {f"t{i}" for i in range(1, 9)}
    assert place(buffers, overlap=False).nbytes == 16000


def _kernel_1x1_clean(c: int, oc: int, positions: int, chunk: int, gap: int) -> bool:
    """cmx_conv_row_s8 on a 1x1 layer, as its C loop runs (kernels/nn/cmx_conv_row_s8.c): each
    chunk of positions is widened (read) and then its outputs written, output `gap` bytes below
    the input; True if no read saw a written byte."""
    base = max(gap, 0)
    written = np.zeros(base + positions * max(c, oc) + abs(gap) + 8, dtype=bool)
    for x0 in range(0, positions, chunk):
        n = min(chunk, positions - x0)
        if written[base + x0 * c : base + (x0 + n) * c].any():
            return False
        written[base - gap + x0 * oc : base - gap + (x0 + n) * oc] = True
    return True


def test_a_1x1_conv_row_lead_follows_the_kernels_chunks_across_image_rows() -> None:
    """A 1x1 layer is one row of H * W positions to cmx_conv_row_s8: its chunks cross image rows.
    MobileNetV2's expansions (16 -> 96 channels over 12 x 12) broke on the M4 when the lead was
    taken from per-image-row blocks (287 of 13,824 values wrong)."""
    rng = random.Random(37)
    stale = 0
    for _ in range(300):
        h, w, c, oc = rng.randint(1, 12), rng.randint(1, 12), rng.randint(1, 24), rng.randint(1, 96)
        chunk = rng.randrange(2, 42, 2)
        geometry = own_kernels.row_geometry(
            torch.empty(1, c, h, w), torch.empty(oc, 1, 1, c), torch.empty(1, oc, h, w), (1, 1), (0, 0), (1, 1)
        )
        assert geometry is not None and geometry.positions == h * w
        reads = image_reads((1, c, h, w), (1, oc, h, w), (1, 1), (0, 0))
        lead = Walk(conv_row_blocks(geometry, chunk), oc, reads, copy_in=True).lead()
        gap = -(-max(lead, -h * w * c) // ALIGN) * ALIGN
        assert _kernel_1x1_clean(c, oc, h * w, chunk, gap), (h, w, c, oc, chunk, lead)
        old = Walk(row_blocks(h, w, chunk), oc, reads, copy_in=True).lead()
        stale += not _kernel_1x1_clean(c, oc, h * w, chunk, max(old, -h * w * c))
    assert stale > 10, "per-image-row blocks must be shown to fail on some of these layers"


def _conv_helium_clean(geo: dict[str, int], oc: int, gap: int) -> bool:
    """cmx_conv_helium_s8 as its C loop runs (kernels/nn/cmx_conv_helium_s8.c), output `gap` bytes
    below the input: a position whose field lies inside the input, kernel rows of whole 16-byte groups,
    is read in place again for every block of four output channels, each block written after its
    reads; any other field is copied into the scratch once, then all its outputs written."""
    c, h, w, k, s, pad, ow = (geo[x] for x in ("c", "h", "w", "k", "s", "pad", "ow"))
    oh = (h + 2 * pad - k) // s + 1
    base = max(gap, 0)
    written = np.zeros(base + h * w * c + oh * ow * oc + abs(gap) + 8, dtype=bool)
    for p in range(oh * ow):
        oy, ox = divmod(p, ow)
        field = _field(p, geo)
        inside = 0 <= oy * s - pad and oy * s - pad + k <= h and 0 <= ox * s - pad and ox * s - pad + k <= w
        in_place = (k == 1 and s == 1 and pad == 0) or (inside and (k * c) % 16 == 0)
        for c0 in range(0, oc, 4) if in_place else [0]:
            if written[base + field].any():
                return False
            stop = min(c0 + 4, oc) if in_place else oc
            written[base - gap + p * oc + c0 : base - gap + p * oc + stop] = True
    return True


def test_a_conv_helium_lead_follows_its_fields_read_in_place() -> None:
    """cmx_conv_helium_s8 reads a field inside the input in place (ResNet's 3x3 layers over 16k
    channels): its walk is direct. Walked as copy-in (every field copied first), ResNet-8 on the M55
    wrote an output over a field still to be read (max_abs_err=5 on QEMU)."""
    rng = random.Random(41)
    stale = 0
    for _ in range(300):
        k, s = rng.choice([1, 3]), rng.choice([1, 2])
        pad = rng.randint(0, k // 2)
        h, w, c, oc = rng.randint(k, 10), rng.randint(k, 10), rng.choice([3, 16, 32]), rng.randint(1, 40)
        oh, ow = (h + 2 * pad - k) // s + 1, (w + 2 * pad - k) // s + 1
        geo = {"c": c, "h": h, "w": w, "k": k, "s": s, "pad": pad, "ow": ow}
        reads = image_reads((1, c, h, w), (1, oc, oh, ow), (s, s), (pad, pad))
        lead = Walk(flat_blocks(oh * ow, 1), oc, reads, copy_in=False).lead()  # overlap.py's conv_helium walk
        gap = -(-max(lead, -h * w * c) // ALIGN) * ALIGN
        assert _conv_helium_clean(geo, oc, gap), (geo, oc, lead)
        old = Walk(flat_blocks(oh * ow, 1), oc, reads, copy_in=True).lead()
        stale += not _conv_helium_clean(geo, oc, max(old, -h * w * c))
    assert stale > 10, "the copy-in walk must be shown to fail on some of these layers"


def _planar_clean(c: int, h: int, w: int, gap: int) -> bool:
    """cmx_depthwise_3x3_s8's planar path as its C loop runs (stride 1, padding 1), output `gap`
    bytes below the input: for each band of output rows, for each channel, that channel's input
    rows of the band copied into the plane (read), then its outputs of the band written."""
    base = max(gap, 0)
    written = np.zeros(base + 2 * h * w * c + abs(gap) + 8, dtype=bool)
    for oy0 in range(0, h, DEPTHWISE_BAND):
        band = min(DEPTHWISE_BAND, h - oy0)
        rows = [y for y in range(oy0 - 1, oy0 + band + 1) if 0 <= y < h]
        for ch in range(c):
            reads = np.array([(y * w + x) * c + ch for y in rows for x in range(w)], dtype=np.int64)
            if written[base + reads].any():
                return False
            outs = np.array([((oy0 + r) * w + x) * c + ch for r in range(band) for x in range(w)], dtype=np.int64)
            written[base - gap + outs] = True
    return True


def test_a_planar_depthwise_lead_follows_its_bands() -> None:
    """The planar path writes a band's every channel before it reads the next channel's rows of the
    band: one direct block a band (overlap.band_blocks). The four-channel walk's lead, a pixel at a
    time, is shown to break it."""
    rng = random.Random(43)
    stale = 0
    for _ in range(200):
        h, w, c = rng.randint(1, 20), rng.randint(8, 20), rng.choice([1, 4, 8, 12])
        reads = image_reads((1, c, h, w), (1, c, h, w), (1, 1), (1, 1))
        lead = Walk(band_blocks(1, h, w), c, reads, copy_in=False).lead()
        gap = -(-max(lead, -h * w * c) // ALIGN) * ALIGN
        assert _planar_clean(c, h, w, gap), (h, w, c, lead)
        old = Walk(flat_blocks(h * w, 1), c, reads, copy_in=False, step=4).lead()
        stale += not _planar_clean(c, h, w, max(old, -h * w * c))
    assert stale > 10, "the four-channel walk must be shown to fail on some of these layers"


def _grouped_clean(c: int, h: int, w: int, s: int, pad: int, gap: int) -> bool:
    """cmx_depthwise_3x3_s8's grouped path as its C loop runs, output `gap` bytes below the input:
    for each band of output rows, for each four channels, those channels' input rows of the band
    widened into the scratch (read), then their outputs of the band written."""
    oh, ow = (h + 2 * pad - 3) // s + 1, (w + 2 * pad - 3) // s + 1
    base = max(gap, 0)
    written = np.zeros(base + 2 * h * w * c + abs(gap) + 8, dtype=bool)
    for oy0 in range(0, oh, DEPTHWISE_GROUP_BAND):
        band = min(DEPTHWISE_GROUP_BAND, oh - oy0)
        top = oy0 * s - pad
        rows = [y for y in range(top, top + (band - 1) * s + 3) if 0 <= y < h]
        for g in range(0, c, 4):
            chans = range(g, g + 4)
            reads = np.array([(y * w + x) * c + ch for y in rows for x in range(w) for ch in chans], dtype=np.int64)
            if written[base + reads].any():
                return False
            outs = [((oy0 + r) * ow + x) * c + ch for r in range(band) for x in range(ow) for ch in chans]
            written[base - gap + np.array(outs, dtype=np.int64)] = True
    return True


def test_a_grouped_depthwise_lead_follows_its_bands() -> None:
    """The grouped path (stride 2, or rows of 4 to 7 outputs; four channels at a time) writes a band's
    every channel before it reads the next four channels' rows of the band: one direct block a band,
    as the planar path (overlap.band_blocks). The four-channel walk's lead is shown to break it."""
    rng = random.Random(44)
    stale = 0
    for _ in range(200):
        s, pad, c = rng.choice([1, 2]), rng.randint(0, 1), rng.choice([4, 8, 12, 16])
        h, w = rng.randint(3, 24), rng.randint(3, 20)
        oh, ow = (h + 2 * pad - 3) // s + 1, (w + 2 * pad - 3) // s + 1
        reads = image_reads((1, c, h, w), (1, c, oh, ow), (s, s), (pad, pad))
        lead = Walk(band_blocks(1, oh, ow, DEPTHWISE_GROUP_BAND), c, reads, copy_in=False).lead()
        gap = -(-max(lead, -h * w * c) // ALIGN) * ALIGN
        assert _grouped_clean(c, h, w, s, pad, gap), (h, w, c, s, pad, lead)
        old = Walk(flat_blocks(oh * ow, 1), c, reads, copy_in=False, step=4).lead()
        stale += not _grouped_clean(c, h, w, s, pad, max(old, -h * w * c))
    assert stale > 10, "the four-channel walk must be shown to fail on some of these layers"
