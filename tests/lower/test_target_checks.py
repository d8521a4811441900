"""target_checks on the program to_executorch emitted: the dim orders ExecuTorch serializes are derived
again from the kernels when the program is delegated, so a rule that passed before can fail there
(declaring a one-channel image contiguous passed every host check and stopped on QEMU)."""

from __future__ import annotations

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from cmx_gen.common.errors import ExportError
from cmx_gen.lower import target_checks


def _graph(strides: tuple[int, ...]) -> torch.fx.GraphModule:
    """x -> aten.hardtanh, x a [1, 1, 8, 16] int8 tensor with these strides."""
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    y = graph.call_function(torch.ops.aten.hardtanh.default, (x,))
    graph.output(y)
    with FakeTensorMode():
        value = torch.empty_strided((1, 1, 8, 16), strides, dtype=torch.int8)
    x.meta["val"] = y.meta["val"] = value
    return torch.fx.GraphModule(torch.nn.Module(), graph)


def test_a_one_channel_image_serialized_channels_last_is_refused():
    with pytest.raises(
        ExportError, match=r"aten::hardtanh .*as serialized: a tensor \[1, 1, 8, 16\] has dim order \[0, 2, 1, 3\]"
    ):
        target_checks.check_serialized(_graph((128, 1, 16, 1)))


def test_the_same_image_serialized_contiguous_passes():
    target_checks.check_serialized(_graph((128, 128, 16, 1)))
