"""One-channel int8 images handed to portable kernels in the default dim order (issue 53's fuzzer:
most of its refusals).

A [n, 1, h, w] tensor in channels-last memory holds the same bytes as a contiguous one, but ExecuTorch
derives its dim order from strides that tie, [0, 2, 1, 3], and the portable kernels refuse that order
(target_checks.py: execute error 0x12 on the target). A portable kernel reading such an int8 tensor
reads a layout copy of it into the default order instead, which cmx-gen's backend makes (a plain copy
of the same bytes: the copy is the dim order's, not the data's); the portable kernel's own output then
follows its input's order. Declaring the tensor itself contiguous does not last: the dim orders are
derived again from the kernels when the program is delegated and serialized (QEMU: execute error
0x12)."""

from __future__ import annotations

import torch

from cmx_gen.lower.delegate import layers
from cmx_gen.lower.delegate.emit import is_int8
from cmx_gen.lower.fx_nodes import call_like, op_name
from cmx_gen.lower.rewrites.image_layout import layout_copy

PLAIN = (0, 1, 2, 3)


def _plain(val: torch.Tensor) -> torch.Tensor:
    """A fake tensor like `val` with the default strides: `contiguous()` keeps a one-channel tensor's
    channels-last strides (it counts as contiguous already), whose tie ExecuTorch orders [0, 2, 1, 3]."""
    n, c, h, w = (int(d) for d in val.shape)
    with val.fake_mode:  # type: ignore[attr-defined]
        return torch.empty_strided((n, c, h, w), (c * h * w, h * w, w, 1), dtype=val.dtype)


def _is_plain(node: torch.fx.Node) -> bool:
    val = node.meta.get("val")
    return not isinstance(val, torch.Tensor) or val.dim() != 4 or tuple(int(d) for d in val.dim_order()) == PLAIN


def _portable(node: torch.fx.Node) -> bool:
    return node.op == "call_function" and op_name(node).startswith(("aten::", "dim_order_ops::"))


def copy_for_portable_readers(program: torch.export.ExportedProgram) -> None:
    """Each one-channel 4-D int8 tensor not in the default dim order that a portable kernel reads,
    read by its portable readers through one layout copy into the default order (where the backend
    takes the copy; else the program stays as it was and target_checks refuses it with its reason).
    A backend kernel reading the same image keeps reading the image (seed 7010, a concat beside a
    clamp: its FAIL was the concat's order, derived again from its inputs, concat.py)."""
    graph = program.graph_module.graph
    for node in list(graph.nodes):
        val = node.meta.get("val")
        if not is_int8(node) or _is_plain(node) or val.shape[1] != 1:
            continue
        if _portable(node):
            if all(_is_plain(x) for x in node.all_input_nodes if is_int8(x)):
                node.meta["val"] = _plain(val)  # as the kernel will write it: in its input's order
            continue
        readers = [user for user in node.users if _portable(user)]
        if not readers:
            continue
        with graph.inserting_after(node):
            plain = call_like(graph, layout_copy(), (node,), readers[0], {"dim_order": list(PLAIN)}, _plain(val))
        if not layers.supports(plain):
            graph.erase_node(plain)
            continue
        for user in readers:  # a backend reader beside them keeps reading the image itself
            user.replace_input_with(node, plain)
    graph.lint()
    program.graph_module.recompile()
