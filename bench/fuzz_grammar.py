"""The grammar of bench/fuzz_models.py: random models of the layers cmx-gen takes, drawn as a list of
blocks and written as the Python file a user would bring (so a failure's shrunk model is a test as
it stands).

A block is drawn once (its kind and choices) and rendered against the image it gets: its channels,
height and width decide the shapes, and a block that cannot apply to that image (a pool of a 1x1
image, a token attention of an odd channel count) renders as nothing. Removing blocks therefore
always leaves a valid model, which is what shrinking does."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

ACTIVATIONS = {
    "relu": "nn.ReLU()",
    "relu6": "nn.ReLU6()",
    "hardtanh": "nn.Hardtanh(-0.5, 0.5)",
    "sigmoid": "nn.Sigmoid()",
    "tanh": "nn.Tanh()",
    "hardswish": "nn.Hardswish()",
    "hardsigmoid": "nn.Hardsigmoid()",
    "leaky_relu": "nn.LeakyReLU(0.1)",
    "gelu": "nn.GELU()",
}
KINDS = ("conv", "depthwise", "act", "bn", "pool", "up", "branch", "tokens", "permute")
WEIGHTS = (6, 3, 4, 1, 2, 1, 3, 2, 1)


@dataclass(frozen=True)
class Block:
    kind: str
    choice: dict[str, Any]
    inner: tuple[Block, ...] = ()


@dataclass(frozen=True)
class Spec:
    """A drawn model: the input image and the blocks; `head`: global pool and a linear at the end."""

    channels: int
    height: int
    width: int
    blocks: tuple[Block, ...]
    head: bool


def draw(rng: random.Random, depth: int = 0) -> Spec:
    """A model of 2-7 blocks on a small image."""
    blocks = tuple(_block(rng, depth) for _ in range(rng.randint(2, 7)))
    return Spec(rng.choice((1, 3, 4, 8)), rng.choice((8, 12, 16)), rng.choice((8, 12, 16)), blocks, rng.random() < 0.4)


def _block(rng: random.Random, depth: int) -> Block:
    kind = rng.choices(KINDS, WEIGHTS)[0]
    if kind == "branch" and depth > 0:
        kind = "conv"
    choice: dict[str, Any] = {}
    inner: tuple[Block, ...] = ()
    if kind == "conv":
        choice = dict(
            out=rng.choice((0.5, 1, 2)),
            k=rng.choice((1, 3, 3, 5)),
            stride=rng.choice((1, 1, 2)),
            dilation=rng.choice((1, 1, 2)),
            groups=rng.choice((1, 1, 2, 4)),
            bias=rng.random() < 0.8,
        )
    elif kind == "depthwise":
        choice = dict(mult=rng.choice((1, 1, 2)), k=rng.choice((3, 5)), stride=rng.choice((1, 2)))
    elif kind == "act":
        choice = dict(name=rng.choice(sorted(ACTIVATIONS)))
    elif kind == "pool":
        choice = dict(op=rng.choice(("max", "avg")), k=rng.choice((2, 3)))
    elif kind == "branch":
        choice = dict(op=rng.choice(("add", "mul", "cat", "cat")), width=rng.choice((0.5, 1)))
        inner = tuple(_block(rng, depth + 1) for _ in range(rng.randint(1, 3)))
        inner = tuple(b for b in inner if b.kind in ("conv", "depthwise", "act", "bn")) or (
            Block("act", {"name": "relu"}),
        )
    elif kind == "tokens":
        choice = dict(linear=rng.random() < 0.7, norm=rng.random() < 0.5, attention=rng.random() < 0.4)
        choice.update(
            recurrent=rng.choice(("", "", "GRU", "LSTM")), both_ways=rng.random() < 0.5, layers=rng.randint(1, 2)
        )
    elif kind == "permute":
        choice = dict(order=rng.choice(((0, 1, 3, 2), (0, 2, 1, 3))))
    return Block(kind, choice, inner)


@dataclass
class _Writer:
    """The model file's __init__ and forward lines, and the image's shape as the blocks change it."""

    c: int
    h: int
    w: int
    init: list[str] = field(default_factory=list)
    forward: list[str] = field(default_factory=list)
    count: int = 0

    def layer(self, text: str) -> str:
        name = f"l{self.count}"
        self.count += 1
        self.init.append(f"self.{name} = {text}")
        return f"self.{name}"


def _conv_out(size: int, k: int, stride: int, dilation: int, pad: int) -> int:
    return (size + 2 * pad - dilation * (k - 1) - 1) // stride + 1


def _render(block: Block, out: _Writer, x: str = "x") -> None:
    """Writes `x = f(x)` for the block, or nothing where it does not apply to the image."""
    ch = block.choice
    if block.kind == "conv":
        groups = ch["groups"] if out.c % ch["groups"] == 0 else 1
        oc = max(groups, int(out.c * ch["out"]) // groups * groups) if groups > 1 else max(1, int(out.c * ch["out"]))
        pad = ch["k"] // 2 * ch["dilation"]
        oh, ow = (_conv_out(s, ch["k"], ch["stride"], ch["dilation"], pad) for s in (out.h, out.w))
        if oh < 1 or ow < 1:
            return
        # a stride-1 odd kernel without bias written padding="same" as Keras ports write it (the same
        # function as the numeric padding: a seed's model computes what it did before)
        padding = '"same"' if ch["stride"] == 1 and ch["k"] % 2 and not ch["bias"] else pad
        conv = out.layer(
            f"nn.Conv2d({out.c}, {oc}, {ch['k']}, stride={ch['stride']}, padding={padding}, "
            f"dilation={ch['dilation']}, groups={groups}, bias={ch['bias']})"
        )
        out.forward.append(f"{x} = {conv}({x})")
        out.c, out.h, out.w = oc, oh, ow
    elif block.kind == "depthwise":
        pad = ch["k"] // 2
        oh, ow = (_conv_out(s, ch["k"], ch["stride"], 1, pad) for s in (out.h, out.w))
        oc = out.c * ch["mult"]
        conv = out.layer(f"nn.Conv2d({out.c}, {oc}, {ch['k']}, stride={ch['stride']}, padding={pad}, groups={out.c})")
        out.forward.append(f"{x} = {conv}({x})")
        out.c, out.h, out.w = oc, oh, ow
    elif block.kind == "act":
        out.forward.append(f"{x} = {out.layer(ACTIVATIONS[ch['name']])}({x})")
    elif block.kind == "bn":
        out.forward.append(f"{x} = {out.layer(f'nn.BatchNorm2d({out.c})')}({x})")
    elif block.kind == "pool":
        if out.h < ch["k"] or out.w < ch["k"]:
            return
        pool = out.layer(f"nn.{'MaxPool2d' if ch['op'] == 'max' else 'AvgPool2d'}({ch['k']})")
        out.forward.append(f"{x} = {pool}({x})")
        out.h, out.w = out.h // ch["k"], out.w // ch["k"]
    elif block.kind == "up":
        if out.h * out.w * out.c > 4096:
            return
        out.forward.append(f"{x} = {out.layer('nn.Upsample(scale_factor=2)')}({x})")
        out.h, out.w = out.h * 2, out.w * 2
    elif block.kind == "branch":
        _branch(block, out, x)
    elif block.kind == "tokens":
        _tokens(block, out, x)
    elif block.kind == "permute":
        order = ch["order"]
        out.forward.append(f"{x} = {x}.permute{order}")
        shape = [1, out.c, out.h, out.w]
        out.c, out.h, out.w = (shape[d] for d in order[1:])


def _branch(block: Block, out: _Writer, x: str) -> None:
    """b = inner(x) at the image's size, then x combined with b (add, mul, or a channel cat)."""
    op = block.choice["op"]
    branch = _Writer(out.c, out.h, out.w, out.init, [], out.count)
    for inner in block.inner:
        if inner.kind == "conv":
            inner = Block("conv", {**inner.choice, "stride": 1, "out": 1 if op != "cat" else block.choice["width"]})
        elif inner.kind == "depthwise":
            inner = Block(
                "depthwise", {**inner.choice, "stride": 1, "mult": 1 if op != "cat" else inner.choice["mult"]}
            )
        _render(inner, branch, "b")
    out.count = branch.count
    if (branch.h, branch.w) != (out.h, out.w) or (op != "cat" and branch.c != out.c):
        return
    out.forward.append(f"b = {x}")
    out.forward += branch.forward
    if op == "cat":
        out.forward.append(f"{x} = torch.cat([{x}, b], dim=1)")
        out.c += branch.c
    else:
        out.forward.append(f"{x} = {x} {'+' if op == 'add' else '*'} b")


def _tokens(block: Block, out: _Writer, x: str) -> None:
    """The image as h*w tokens of c features (flatten, transpose), a linear, a LayerNorm, an
    nn.MultiheadAttention with its residual or an nn.GRU / nn.LSTM over them (c features out, half
    each way when bidirectional), and back to an image by reshape."""
    ch, c = block.choice, out.c
    if out.h * out.w > 256:
        return
    out.forward.append(f"t = {x}.flatten(2).transpose(1, 2)")
    if ch["norm"]:
        out.forward.append(f"t = {out.layer(f'nn.LayerNorm({c})')}(t)")
    if ch["attention"] and c % 2 == 0 and c >= 4:
        mha = out.layer(f"nn.MultiheadAttention({c}, 2, batch_first=True)")
        out.forward.append(f"t = t + {mha}(t, t, t, need_weights=False)[0]")
    if ch.get("recurrent") and (c % 2 == 0 or not ch["both_ways"]):
        hidden, both = (c // 2, ", bidirectional=True") if ch["both_ways"] else (c, "")
        rnn = out.layer(f"nn.{ch['recurrent']}({c}, {hidden}, num_layers={ch['layers']}, batch_first=True{both})")
        out.forward.append(f"t = {rnn}(t)[0]")
    if ch["linear"]:
        out.forward.append(f"t = {out.layer(f'nn.Linear({c}, {c})')}(t)")
    out.forward.append(f"{x} = t.transpose(1, 2).reshape(1, {c}, {out.h}, {out.w})")


def source(spec: Spec, name: str = "Fuzzed") -> str:
    """The model file: the class, example_inputs() and calibration_data() (seeded)."""
    out = _Writer(spec.channels, spec.height, spec.width)
    for block in spec.blocks:
        _render(block, out)
    if spec.head:
        out.forward.append("x = x.mean((2, 3))")
        out.forward.append(f"x = {out.layer(f'nn.Linear({out.c}, 5)')}(x)")
    init = "\n".join(f"        {line}" for line in out.init) or "        pass"
    forward = "\n".join(f"        {line}" for line in out.forward)
    shape = f"1, {spec.channels}, {spec.height}, {spec.width}"
    return f"""import torch
from torch import nn


class {name}(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
{init}

    def forward(self, x):
{forward}
        return x


def example_inputs():
    return (torch.randn({shape}, generator=torch.Generator().manual_seed(0)),)


def calibration_data():
    g = torch.Generator().manual_seed(1)
    return [(torch.randn({shape}, generator=g),) for _ in range(8)]
"""


def without(spec: Spec, path: tuple[int, ...]) -> Spec:
    """The spec with the block at `path` removed (path: index, or index then inner index)."""
    blocks = list(spec.blocks)
    if len(path) == 1:
        del blocks[path[0]]
    else:
        outer = blocks[path[0]]
        blocks[path[0]] = Block(outer.kind, outer.choice, tuple(b for i, b in enumerate(outer.inner) if i != path[1]))
    return Spec(spec.channels, spec.height, spec.width, tuple(blocks), spec.head)


def paths(spec: Spec) -> list[tuple[int, ...]]:
    """Every removable block, outer ones first."""
    outer = [(i,) for i in range(len(spec.blocks))]
    return outer + [(i, j) for i, b in enumerate(spec.blocks) for j in range(len(b.inner))]
