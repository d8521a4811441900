"""A `.bpte` (ExecuTorch's BundledProgram): the program and its own test case.

Users of ExecuTorch's flow (`aot_arm_compiler`, the Cortex-M notebooks) bundle the program with
inputs and the outputs they expect. cmx-gen's app then checks the firmware against those, as
upstream's BundleIO does: bit-exact where an output is an integer, within the tolerance below where
it is float. The first test case of `forward` is the one used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cmx_gen.common.dim_order import from_layout
from cmx_gen.common.errors import ModelSourceError

# Upstream's BundleIO verify_method_outputs(rtol=1e-5, atol=1e-8): the bundle carries no tolerance
# of its own, so its check is made with these.
RTOL = 1e-5
ATOL = 1e-8

# ExecuTorch ScalarType codes -> numpy (the ones a cortex_m program's I/O can have).
_DTYPES = {0: np.uint8, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.int64, 6: np.float32, 7: np.float64, 11: np.bool_}


@dataclass(frozen=True)
class Bundle:
    pte: bytes
    inputs: list[NDArray[Any]]  # logical (PyTorch) shape
    outputs: list[NDArray[Any]]

    def tolerance(self) -> float:
        """The largest difference BundleIO's check accepts on any output element: atol + rtol x |expected|."""
        floats = [np.abs(o.astype(np.float64)).max() for o in self.outputs if o.dtype.kind == "f" and o.size]
        return ATOL + RTOL * max(floats) if floats else 0.0


def _logical(tensor: object, where: str) -> NDArray[Any]:
    dtype = _DTYPES.get(int(tensor.scalar_type))  # type: ignore[attr-defined]
    if dtype is None:
        raise ModelSourceError(
            f"{where} has dtype code {tensor.scalar_type}, which cmx-gen cannot compare",  # type: ignore[attr-defined]
            "bundle float or integer tensors",
        )
    sizes = [int(s) for s in tensor.sizes]  # type: ignore[attr-defined]
    order = [int(d) for d in tensor.dim_order]  # type: ignore[attr-defined]
    return from_layout(np.frombuffer(bytes(tensor.data), dtype=dtype), sizes, order)  # type: ignore[attr-defined]


def read(data: bytes, where: str) -> Bundle:
    """The program and the first `forward` test case of a serialized BundledProgram."""
    from executorch.devtools.bundled_program.serialize import deserialize_from_flatbuffer_to_bundled_program

    try:
        bundled = deserialize_from_flatbuffer_to_bundled_program(data)
    except Exception as exc:  # flatc's JSON round trip raises whatever it meets
        raise ModelSourceError(
            f"{where} is not a bundled program (.bpte): {type(exc).__name__}",
            "write it with executorch.devtools.bundled_program.serialize.serialize_from_bundled_program_to_flatbuffer",
        ) from exc
    suite = next((s for s in bundled.method_test_suites if s.method_name == "forward"), None)
    if suite is None or not suite.test_cases:
        raise ModelSourceError(f"{where} has no test case for `forward`", "bundle at least one MethodTestCase")
    case = suite.test_cases[0]
    inputs = [_logical(v.val, f"{where} input {i}") for i, v in enumerate(case.inputs)]
    outputs = [_logical(v.val, f"{where} expected output {i}") for i, v in enumerate(case.expected_outputs)]
    return Bundle(bytes(bundled.program), inputs, outputs)
