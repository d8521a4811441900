"""Patch-based execution (lower/delegate/patches.py, patch_plan.py) against layer-by-layer execution.

Geometry: over random layer chains and grids, the patches of a stage's output tile it exactly, and
every output position of a patch reads, through the box and padding its record gets, the same input
values as in the whole layer. Plans: random small networks lowered for real (M55 and M4); every
stage prefix over several grids is built as a plan, and the plan run on the host (host_run.py, the
kernels' models, on the bytes the firmware reads) equals the unpatched plan's output, byte for byte,
on random inputs, with the program's input and output placed in the working memory as the program
places them."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch
from torch import nn

from cmx_gen.lower import lowering
from cmx_gen.lower.delegate import host_run, patches
from cmx_gen.lower.delegate.plan import read_header, read_io_offsets
from cmx_gen.lower.delegate.preprocess import build_plan, is_delegate_call
from cmx_gen.lower.facts import LowerOptions
from cmx_gen.lower.state import Delegated
from cmx_gen.model import source as model_source
from cmx_gen.model.export import export


def _reads_brute(win: patches.Window, o: int, d: int, size: int) -> list[int]:
    """The input indices output `o` reads along dimension d (-1: padding)."""
    return [
        i if 0 <= (i := o * win.stride[d] - win.pad[d] + k * win.dilation[d]) < size else -1
        for k in range(win.kernel[d])
    ]


@pytest.mark.parametrize("seed", range(200))
def test_a_patch_reads_what_the_whole_layer_reads(seed):
    rng = random.Random(seed)
    k = rng.choice([1, 3, 5])
    win = patches.Window(
        (k, rng.choice([1, 3])),
        (rng.choice([1, 2]), rng.choice([1, 2, 3])),
        (rng.randint(0, k // 2), rng.randint(0, 1)),
        (rng.choice([1, 2]), 1),
    )
    size = (rng.randint(k * 2, 40), rng.randint(4, 40))
    out = tuple(
        (size[d] + 2 * win.pad[d] - (win.kernel[d] - 1) * win.dilation[d] - 1) // win.stride[d] + 1 for d in (0, 1)
    )
    grid = (rng.randint(1, out[0]), rng.randint(1, out[1]))
    rows = [out[0] * i // grid[0] for i in range(grid[0] + 1)]
    cols = [out[1] * j // grid[1] for j in range(grid[1] + 1)]
    covered = np.zeros(out, dtype=int)
    for i in range(grid[0]):
        for j in range(grid[1]):
            box = patches.Box(rows[i], rows[i + 1], cols[j], cols[j + 1])
            covered[box.h0 : box.h1, box.w0 : box.w1] += 1
            read = win.reads(box, size)
            pads = win.pads(box)
            for d, (lo, hi, start, n) in enumerate(
                ((box.h0, box.h1, read.h0, read.rows), (box.w0, box.w1, read.w0, read.cols))
            ):
                for o in range(lo, hi):
                    # the kernel's view: local output o - lo reads local input (o - lo) * s - pad + k * dil
                    local = [
                        start + q if 0 <= (q := (o - lo) * win.stride[d] - pads[d] + t * win.dilation[d]) < n else -1
                        for t in range(win.kernel[d])
                    ]
                    assert local == _reads_brute(win, o, d, size[d]), (win, box, d, o)
    assert (covered == 1).all(), "the patches tile the output exactly once"


class _Block(nn.Module):
    """An inverted residual: expand 1x1, depthwise k x k, project 1x1, add."""

    def __init__(self, c: int, k: int) -> None:
        super().__init__()
        self.expand = nn.Conv2d(c, 2 * c, 1)
        self.dw = nn.Conv2d(2 * c, 2 * c, k, padding=k // 2, groups=2 * c)
        self.project = nn.Conv2d(2 * c, c, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.project(torch.relu(self.dw(torch.relu(self.expand(x)))))


class RandomNet(nn.Module):
    """A random stem, depthwise and residual layers, then a global pool (which ends any stage)."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        rng = random.Random(seed)
        torch.manual_seed(seed)
        c = rng.choice([4, 8, 12])
        k = rng.choice([3, 5])
        layers: list[nn.Module] = [
            nn.Conv2d(3, c, k, stride=rng.choice([1, 2]), padding=rng.randint(0, k // 2)),
            nn.ReLU(),
        ]
        for _ in range(rng.randint(2, 4)):
            kind = rng.choice(["dw", "conv", "block"])
            if kind == "dw":
                layers += [
                    nn.Conv2d(c, c, 3, stride=rng.choice([1, 2]), padding=rng.randint(0, 1), groups=c),
                    nn.ReLU(),
                ]
            elif kind == "conv":
                cout = rng.choice([4, 8, 16])
                kk = rng.choice([1, 3])
                layers += [
                    nn.Conv2d(
                        c,
                        cout,
                        kk,
                        stride=1,
                        padding=rng.randint(0, kk // 2),
                        dilation=rng.choice([1, 2]) if kk == 3 else 1,
                    ),
                    nn.ReLU(),
                ]
                c = cout
            else:
                layers.append(_Block(c, rng.choice([3, 5])))
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(c, 4)
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x).mean((2, 3)))


SEEDS = {1: "cortex-m55", 2: "cortex-m55", 3: "cortex-m55", 4: "cortex-m4", 5: "cortex-m4"}
for _seed in SEEDS:  # model_source loads a class by name: Net1 .. Net5
    globals()[f"Net{_seed}"] = type(
        f"Net{_seed}", (RandomNet,), {"__init__": lambda self, s=_seed: RandomNet.__init__(self, s)}
    )


def _subgraphs(result: lowering.LoweredModel) -> list:
    module = result.get(Delegated).manager.exported_program().graph_module
    return [getattr(module, n.args[0].target).original_module for n in module.graph.nodes if is_delegate_call(n)]


def _run(blob: bytes, image: bytes, isa: str, out_bytes: int) -> bytes:
    """The plan on the host with the program's placement: an input or output inside the working
    memory is a view of it (the layers write over it there)."""
    head = read_header(blob)
    work = bytearray(int(head["work_bytes"]))
    ins, outs = read_io_offsets(blob)
    assert len(ins) == 1
    sizes = [len(image)]
    views = []
    for offset, nbytes in zip(ins, sizes):
        view = memoryview(work)[offset : offset + nbytes] if offset >= 0 else memoryview(bytearray(nbytes))
        view[:] = image
        views.append(view)
    views.append(memoryview(work))
    results = []
    for offset in outs:
        view = memoryview(work)[offset : offset + out_bytes] if offset >= 0 else memoryview(bytearray(out_bytes))
        results.append(view)
        views.append(view)
    host_run.run(blob, views, isa)
    return b"".join(bytes(v) for v in results)


@pytest.mark.parametrize("seed, core", SEEDS.items())
def test_every_stage_and_grid_equals_layer_by_layer(seed, core):
    size = random.Random(seed).choice([16, 20, 23])
    source = model_source.load(f"{__file__}:Net{seed}", input_shape=f"1,3,{size},{size}", random_calibration=True)
    result = lowering.lower(export(source), core, LowerOptions(io="int8", memory="fast"))
    isa = "MVE" if core == "cortex-m55" else "DSP"
    (graph,) = _subgraphs(result)
    compute = tuple(
        n for n in graph.graph_module.graph.nodes if n.op == "call_function" and n.target.__name__ != "alloc"
    )
    user = set(graph.graph_signature.user_inputs)
    inputs = tuple(n for n in graph.graph_module.graph.nodes if n.op == "placeholder" and n.name in user)
    out_node = next(n for n in graph.graph_module.graph.nodes if n.op == "output")
    stages = patches.prefixes(compute, inputs, tuple(out_node.args[0]))
    assert stages, "a stem and its layers before the pool can be patched"
    whole = build_plan(graph, core, "fast").pack()
    rng = np.random.default_rng(seed)
    images = [rng.integers(-128, 128, size=3 * size * size, dtype=np.int8).tobytes() for _ in range(2)]
    (result_node,) = out_node.args[0]
    out_bytes = int(result_node.meta["val"].numel())
    expected = [_run(whole, image, isa, out_bytes) for image in images]
    grids = [(1, 2), (2, 1), (2, 2), (3, 3), (2, 5), (8, 8)]
    checked = 0
    for length, _ in stages:
        for grid in grids:
            try:
                blob = build_plan(graph, core, "fast", patch=(length, grid)).pack()
            except ValueError:
                continue  # a grid finer than the stage's output
            for image, want in zip(images, expected):
                assert _run(blob, image, isa, out_bytes) == want, f"first {length} layers over {grid}"
            checked += 1
    assert checked >= len(stages) * 3
