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

from cmx_gen.common.errors import RenderError
from cmx_gen.common.paths import DATA_DIR

GUARDS_FILE = DATA_DIR / "kernel_guards.yaml"

# The EValue tag test for each C++ type the registration converts an argument to (`x.to<T>()`,
# `x.toOptional<T>()`), and for the list conversions (`x.toIntList()`, ...).
_TAG_TESTS = {
    "torch::executor::Tensor": "isTensor",
    "double": "isDouble",
    "int64_t": "isInt",
    "bool": "isBool",
    "torch::executor::ScalarType": "isInt",
    "torch::executor::Scalar": "isScalar",
    "torch::executor::ArrayRef<int64_t>": "isIntList",
    "torch::executor::IntArrayRef": "isIntList",
    "torch::executor::TensorList": "isTensorList",
}
_LIST_TESTS = {
    "toIntList": "isIntList",
    "toTensorList": "isTensorList",
    "toBoolList": "isBoolList",
    "toDoubleList": "isDoubleList",
    "toListOptionalTensor": "isListOptionalTensor",
}
_ARG = re.compile(r"EValue& (\w+) = \*stack\[(\d+)\];")
_CONVERSION = re.compile(r"(\w+)_base = (\w+)\.to<(.+?)>\(\);")
_OPTIONAL = re.compile(r"(\w+)_opt_out = (\w+)\.toOptional<(.+?)>\(\);")
_LIST = re.compile(r"(\w+)_list_out = (\w+)\.(to\w+)\(\);")
_ANY_CONVERSION = re.compile(r"= (\w+)\.to\w*(<.+?>)?\(\);")
_CALL = re.compile(r"^([ \t]*)internal::EventTracerProfileOpScope", re.M)
_FAIL = "{ context.fail(::executorch::runtime::Error::InvalidArgument); return; }"


@functools.lru_cache(maxsize=1)
def _guards() -> dict[str, dict]:
    return yaml.safe_load(GUARDS_FILE.read_text()) or {}


def digest() -> str:
    """What the guards are: part of the registration's cache key."""
    import hashlib

    tables = repr((sorted(_TAG_TESTS.items()), sorted(_LIST_TESTS.items())))
    return hashlib.sha256(GUARDS_FILE.read_bytes() + tables.encode()).hexdigest()[:16]


def guarded(op: str, body: str) -> str:
    """The registration body of `op` with its argument checks before the kernel is called."""
    args = dict(_ARG.findall(body))

    def tag(name: str, of: str) -> str:
        test = _TAG_TESTS.get(of.strip()) or _LIST_TESTS.get(of.strip())
        if test is None:
            raise RenderError(
                f"a slot app cannot check argument {name} of {op} ({of}) before the kernel runs",
                f'keep placement = "linked" for this model, or add the type to {__name__}',
            )
        return f"{name}.{test}()"

    found = [(n, tag(n, t)) for n, src, t in _CONVERSION.findall(body) if n == src and n in args]
    found += [(n, f"({n}.isNone() || {tag(n, t)})") for n, src, t in _OPTIONAL.findall(body) if n == src and n in args]
    found += [(n, tag(n, conv)) for n, src, conv in _LIST.findall(body) if n == src and n in args]
    unchecked = {m.group(1) for m in _ANY_CONVERSION.finditer(body)} - {n for n, _ in found}
    if unchecked:
        raise RenderError(
            f"a slot app cannot check argument(s) {', '.join(sorted(unchecked))} of {op} before the kernel runs",
            f'keep placement = "linked" for this model, or teach {__name__} their conversion',
        )
    tests = [test for _, test in found]
    conditions = _guards().get(op, {}).get("require", [])
    lines = []
    if tests:
        lines.append(f"if (!({' && '.join(tests)})) {_FAIL}")
    lines += [f"if (!({c})) {_FAIL}" for c in conditions]
    if not lines:
        return body
    # The type checks before the first conversion (to<T>() aborts), the conditions before the call.
    value_lines = lines
    first = _ANY_CONVERSION.search(body)
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
