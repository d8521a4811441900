"""The on-target trace: every instruction's output on the target against the host's value.

A firmware built with CMX_TRACE streams `cmx-gen: trace <instruction> <offset> <hex>` as each
instruction completes (its output bytes, read from planned memory in the program's dim order);
`model/trace_reference.bin` holds what the kernel-exact host interpreter computed for the same
input (model_files.trace_reference). The first instruction that differs is where a FAIL starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cmx_gen.common.errors import RunError
from cmx_gen.device.runners.base import parse_hex_lines
from cmx_gen.program.report import DelegatedLayer, Instruction

ROUNDING_ULPS = 16  # a float output this close to the host's differs by its libm, not by what it computes


@dataclass
class Difference:
    index: int
    op: str
    module: str
    source: str
    max_err: float  # int outputs: in LSB (integer steps); float outputs: in the output's unit
    unit: str  # "LSB" or "abs"
    elements: int  # elements that differ
    numel: int
    missing: bool = False  # the target printed no output for it (it stopped before)
    ulps: float = 0.0  # float outputs: the largest difference in last places of the output's largest value

    @property
    def rounding(self) -> bool:
        """A float difference of a few last places: another libm's expf, not another computation."""
        return self.unit == "abs" and not self.missing and self.ulps <= ROUNDING_ULPS

    def describe(self) -> str:
        where = ", ".join(part for part in (self.module, self.source) if part)
        at = f"instruction #{self.index} {self.op}" + (f" ({where})" if where else "")
        if self.missing:
            return f"{at}: the target printed no output for it"
        err = f"{self.max_err:g} LSB" if self.unit == "LSB" else f"{self.max_err:.6g} (abs, {self.ulps:g} ulp)"
        return f"{at}: max abs err {err} on {self.elements}/{self.numel} elements"


def device_outputs(output: str) -> dict[int, bytes]:
    """Each traced instruction's output bytes as the target printed them."""
    return parse_hex_lines(output, "trace")


def expected_outputs(
    instructions: list[Instruction], reference: bytes, layers: list[DelegatedLayer] | None = None
) -> tuple[dict[int, bytes], dict[int, bytes]]:
    """Split trace_reference.bin by the traced instructions' sizes, then the traced backend
    layers' (by debug id), in order."""
    expected: dict[int, bytes] = {}
    at = 0
    for row in instructions:
        if row.traced:
            assert row.output is not None
            expected[row.index] = reference[at : at + row.output.nbytes]
            at += row.output.nbytes
    expected_layers: dict[int, bytes] = {}
    for layer in layers or ():
        if layer.traced:
            expected_layers[layer.debug] = reference[at : at + layer.nbytes]
            at += layer.nbytes
    if at != len(reference):
        raise RunError(
            f"trace_reference.bin holds {len(reference)} bytes, report.json's instructions {at}",
            "regenerate the app with `cmx-gen regen APP`",
        )
    return expected, expected_layers


def _difference(common: dict, dtype: np.dtype, want_bytes: bytes, got_bytes: bytes | None) -> Difference | None:
    want = np.frombuffer(want_bytes, dtype=dtype)
    common = dict(common, unit="abs" if dtype.kind == "f" else "LSB", numel=int(want.size))
    if got_bytes is None or len(got_bytes) != len(want_bytes):
        return Difference(**common, max_err=0.0, elements=0, missing=True)
    got = np.frombuffer(got_bytes, dtype=dtype)
    delta = np.abs(got.astype(np.float64) - want.astype(np.float64))
    delta[np.isnan(delta)] = np.inf
    if delta.size and delta.max() > 0:
        # in last places of the output's largest value: near-zero elements have no useful ulp of their own
        ulps = float(delta.max() / np.spacing(np.abs(want).astype(dtype).max())) if dtype.kind == "f" else 0.0
        return Difference(**common, max_err=float(delta.max()), elements=int((delta > 0).sum()), ulps=ulps)
    return None


def compare(
    instructions: list[Instruction], reference: bytes, output: str, layers: list[DelegatedLayer] | None = None
) -> tuple[list[Difference], int]:
    """(differences in execution order, number of outputs compared). A delegate call of cmx-gen's
    backend is compared layer by layer (`trace_layer` lines), in the order the layers ran."""
    expected, expected_layers = expected_outputs(instructions, reference, layers)
    device = device_outputs(output)
    device_layers = parse_hex_lines(output, "trace_layer")
    differences: list[Difference] = []
    calls = 0
    for row in instructions:
        if row.op == "<DelegateCall>":
            for layer in (layer for layer in layers or () if layer.delegate == calls and layer.traced):
                common = dict(index=row.index, op=f"cmx {layer.op}", module=layer.module, source=layer.source)
                found = _difference(
                    common, np.dtype(layer.dtype), expected_layers[layer.debug], device_layers.get(layer.debug)
                )
                if found:
                    differences.append(found)
            calls += 1
        if row.index not in expected:
            continue
        assert row.output is not None
        common = dict(index=row.index, op=row.op, module=row.module, source=row.source)
        found = _difference(common, np.dtype(row.output.dtype), expected[row.index], device.get(row.index))
        if found:
            differences.append(found)
    return differences, len(expected) + len(expected_layers)


def summary(differences: list[Difference], compared: int, layers: int = 0) -> str:
    """One line: all matched, or the first difference; `layers`: how many of the compared outputs
    are layers inside cmx-gen's backend."""
    if not differences:
        if layers:
            return (
                f"trace: all {compared} traced outputs ({compared - layers} instructions, {layers} backend layers) "
                "match the host bit for bit"
            )
        return f"trace: all {compared} traced instructions match the host bit for bit"
    first = first_difference(differences)
    more = f"; {len(differences) - 1} other instruction(s) differ too" if len(differences) > 1 else ""
    if first is None:
        return f"trace: only float rounding differs (the target's libm), first at {differences[0].describe()}{more}"
    rounded = differences.index(first)
    before = f" (before it {rounded} float output(s) differ by float rounding only)" if rounded else ""
    return f"trace: first difference at {first.describe()}{before}{more}"


def first_difference(differences: list[Difference]) -> Difference | None:
    """The first difference that is more than float rounding; None when there is none."""
    return next((d for d in differences if not d.rounding), None)


def read_reference(app: Path) -> bytes:
    path = app / "model" / "trace_reference.bin"
    if not path.is_file():
        raise RunError(f"{path} not found: the app predates --trace", f"regenerate it with `cmx-gen regen {app}`")
    return path.read_bytes()
