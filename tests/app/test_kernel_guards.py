"""A slot app's kernel registration checks every argument before a kernel reads it (the program is
input: EValue::to<T>() and some kernels abort on what they do not expect). The chain is run for real
by tests/app/test_slot_runtime_host.py; here, the registration ExecuTorch's codegen writes for the
operators cmx-gen's apps register, guarded."""

from __future__ import annotations

import re

import pytest

from cmx_gen.app import codegen, kernel_guards
from cmx_gen.common.errors import RenderError

OPS = [
    "cortex_m::quantize_per_tensor.out",
    "cortex_m::dequantize_per_tensor.out",
    "aten::add.out",
    "aten::cat.out",
    "aten::clamp.out",
    "aten::convolution.out",
    "aten::mean.out",
    "aten::_softmax.out",
    "aten::view_copy.out",
    "aten::permute_copy.out",
]


def _bodies(source: str) -> dict[str, str]:
    parts = re.split(r'Kernel\(\n\s*"([^"]+)",', source)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_every_argument_is_checked_before_it_is_read():
    bodies = _bodies(codegen.registration_source(OPS, guarded=True))
    assert set(bodies) == set(OPS)
    for op, body in bodies.items():
        args = re.findall(r"EValue& (\w+) = \*stack\[\d+\];", body)
        guard = next(line for line in body.splitlines() if ".is" in line and "context.fail" in line)
        first_read = min(m.start() for m in re.finditer(r"= \w+\.to\w*(<.+?>)?\(\);", body))
        assert body.index(guard) < first_read, op
        converted = {m.group(1) for m in re.finditer(r"= (\w+)\.to\w*(?:<.+?>)?\(\);", body)}
        assert converted and all(f"{name}.is" in guard for name in converted), (op, guard)
        assert set(converted) <= set(args)


def test_the_conditions_a_kernel_aborts_on_are_checked_before_the_call():
    bodies = _bodies(codegen.registration_source(OPS[:2], guarded=True))
    for op, body in bodies.items():
        call = body.index("cortex_m::native::")
        for condition in kernel_guards._guards()[op]["require"]:
            assert f"if (!({condition})) {{ context.fail(" in body[:call], (op, condition)


def test_a_linked_app_registers_as_before():
    plain = codegen.registration_source(OPS)
    assert "context.fail(::executorch::runtime::Error::InvalidArgument)" not in plain
    assert plain.count("Kernel(") == len(OPS)


def test_an_argument_of_a_type_it_cannot_check_is_refused_in_one_line():
    body = "EValue& x = *stack[0];\n    auto x_opt_out = x.toOptional<torch::executor::Foo>();\n"
    with pytest.raises(RenderError, match=r"cannot check argument x of aten::foo.out"):
        kernel_guards.guarded("aten::foo.out", body)
    body = "EValue& y = *stack[0];\n    auto y_thing = y.toSomethingNew();\n"
    with pytest.raises(RenderError, match=r"cannot check argument\(s\) y of aten::bar.out"):
        kernel_guards.guarded("aten::bar.out", body)
