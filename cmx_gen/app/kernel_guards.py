"""Guards in a slot app's kernel registration: a program from a model slot is input, and the
registration ExecuTorch's codegen writes trusts it. `EValue::to<T>()` aborts on an argument of
another type, and some kernels check their arguments with ET_CHECK (an abort) instead of failing the
call. In a slot app each registered kernel first checks every argument's type and the conditions
cmx_gen/data/kernel_guards.yaml lists for it, and fails the call (the method's execute returns the
error, cmx_init() refuses the slot) rather than stop the firmware."""

from __future__ import annotations

import functools
import re

import yaml

from cmx_gen.common.paths import DATA_DIR

GUARDS_FILE = DATA_DIR / "kernel_guards.yaml"

# The EValue tag test for each C++ type the registration converts an argument to (`x.to<T>()`).
_TAG_TESTS = {
    "torch::executor::Tensor": "isTensor",
    "double": "isDouble",
    "int64_t": "isInt",
    "bool": "isBool",
    "torch::executor::ScalarType": "isInt",
    "torch::executor::Scalar": "isScalar",
    "torch::executor::IntArrayRef": "isIntList",
    "torch::executor::ArrayRef<int64_t>": "isIntList",
    "torch::executor::TensorList": "isTensorList",
}
_ARG = re.compile(r"EValue& (\w+) = \*stack\[(\d+)\];")
_CONVERSION = re.compile(r"(\w+)_base = (\w+)\.to<(.+?)>\(\);")
_CALL = re.compile(r"^([ \t]*)internal::EventTracerProfileOpScope", re.M)
_FAIL = "{ context.fail(::executorch::runtime::Error::InvalidArgument); return; }"


@functools.lru_cache(maxsize=1)
def _guards() -> dict[str, dict]:
    return yaml.safe_load(GUARDS_FILE.read_text()) or {}


def digest() -> str:
    """What the guards are: part of the registration's cache key."""
    import hashlib

    return hashlib.sha256(GUARDS_FILE.read_bytes() + repr(sorted(_TAG_TESTS.items())).encode()).hexdigest()[:16]


def guarded(op: str, body: str) -> str:
    """The registration body of `op` with its argument checks before the kernel is called."""
    args = dict(_ARG.findall(body))
    tests = []
    for name, source, cpp_type in _CONVERSION.findall(body):
        if name != source or name not in args:
            continue
        tag = _TAG_TESTS.get(cpp_type.replace(" &", "").replace("const ", "").strip())
        if tag is None:
            raise ValueError(f"kernel guard: no EValue tag test for argument {name} of {op} ({cpp_type})")
        tests.append(f"{name}.{tag}()")
    conditions = _guards().get(op, {}).get("require", [])
    lines = []
    if tests:
        lines.append(f"if (!({' && '.join(tests)})) {_FAIL}")
    lines += [f"if (!({c})) {_FAIL}" for c in conditions]
    if not lines:
        return body
    # The type checks before the first conversion (to<T>() aborts), the conditions before the call.
    value_lines = lines
    first = _CONVERSION.search(body)
    if tests and first is not None:
        line_start = body.rfind("\n", 0, first.start()) + 1
        indent = body[line_start : line_start + len(body[line_start:]) - len(body[line_start:].lstrip())]
        note = f"{indent}// a slot app: the program is input (cmx_gen/app/kernel_guards.py)\n"
        body = body[:line_start] + note + f"{indent}{lines[0]}\n" + body[line_start:]
        value_lines = lines[1:]
    if value_lines:
        call = _CALL.search(body)
        if call is None:
            raise ValueError(f"kernel guard: no kernel call found in the registration of {op}")
        pad = call.group(1)
        text = "".join(f"{pad}{line}\n" for line in value_lines)
        body = body[: call.start()] + text + body[call.start() :]
    return body
