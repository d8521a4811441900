"""One record per backend layer kind (issue 55): data/backend_layers.yaml is where a kind's code, the
function it calls and what it links are written, and the C dispatch lists and CMake link lists are
generated from it. These tests fail when the generated files are stale, when a kind lacks one of its
parts (fields, C record, check, run, host run, cycle figures, a kernel test), and show that a new
kind's record alone puts it into every dispatch."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

from cmx_gen.common.paths import DATA_DIR
from cmx_gen.lower.delegate import host_run, layer_kinds, plan, plan_fields

KERNELS = ROOT / "kernels"
RECORDS = tuple(layer_kinds.kinds().values())
# The kinds a core cannot run, so has no cycle figure for: Helium code on a DSP core; cmx_conv_row_s8
# (DSP code) is never chosen on a Helium core (its conv_helium is cheaper in cycles and RAM).
# ... nor depthwise_s4 on a Helium core (kernel_choice: GCC 12.2 miscompiles CMSIS-NN's Helium s4 depthwise).
NOT_ON = {"cortex-m4": {"conv_helium"}, "cortex-m55": {"conv_row", "depthwise_s4", "fully_connected_s4"}}
# The kinds a core practically never runs, so has no cycle figure for: arm_fully_connected_s8 on a Helium
# core (cmx_fully_connected_s8 takes any column count there, with symmetric weights).
UNPRICED = {"cortex-m4": set(), "cortex-m55": {"linear"}}


def test_generated_files_are_what_the_records_give():
    for relative, render in layer_kinds.GENERATED.items():
        assert (KERNELS / relative).read_text() == render(RECORDS), (
            f"kernels/{relative} is stale: run `python -m cmx_gen.lower.delegate.layer_kinds`"
        )


def _function(text: str, name: str) -> str:
    """The body of C function `name` in `text` (up to the next function at column 0)."""
    match = re.search(rf"^(?:static |inline )\w+ {name}\(.*?^}}", text, re.S | re.M)
    assert match, f"no {name}()"
    return match.group(0)


def test_every_kind_has_each_of_its_parts():
    run_h = (KERNELS / "backend" / "cmx_plan_run.h").read_text()
    check_c = (KERNELS / "backend" / "cmx_plan_check.c").read_text()
    records_h = (KERNELS / "backend" / "cmx_plan_records.h").read_text()
    folders = (KERNELS / "cmsis_nn_folders.cmake").read_text()
    kernel_tests = "".join(p.read_text() for p in sorted((KERNELS / "tests").glob("*.c")))
    cycles = yaml.safe_load((DATA_DIR / "kernel_cycles.yaml").read_text())
    for kind in RECORDS:
        k = kind.name
        assert k in plan_fields.FIELDS and k in host_run.RUN, k
        assert re.search(rf"\bcmx_layer_{k};", records_h), f"{k}: no C record in cmx_plan_records.h"
        assert kind.calls in _function(run_h, f"run_{k}"), f"{k}: run_{k} does not call {kind.calls}"
        _function(check_c, f"check_{k}")
        for source in kind.own:
            assert (KERNELS / "nn" / source).is_file(), f"{k}: kernels/nn/{source}"
        for op in kind.cmsis_nn:
            assert re.search(rf"set\(CMX_NN_{op} ", folders), f"{k}: {op} has no CMSIS-NN folders"
        if kind.whose == "cmx-gen":
            assert kind.calls in kernel_tests, f"{k}: {kind.calls} has no case in kernels/tests"
        for core, skip in NOT_ON.items():
            if k not in skip | UNPRICED[core]:
                assert k in cycles[core]["kinds"], f"{k}: no cycle figure for the {core}"


def test_a_new_kind_is_one_record(tmp_path, monkeypatch):
    """A scratch kind added to the records alone appears in the op codes, in the lists every C dispatch
    expands (only when the app's plans use it), in what CMake links and in the Python side's codes."""
    text = (DATA_DIR / "backend_layers.yaml").read_text()
    code = max(plan.OPS.values()) + 1  # the next free code
    text += (
        f"  scratch_demo: {{code: {code}, calls: cmx_scratch_demo_s8, from: cmx-gen, own: [cmx_scratch_demo_s8.c]}}\n"
    )
    records = layer_kinds.parse(text)
    assert {k.name: k.code for k in records} == {**plan.OPS, "scratch_demo": code}
    header = layer_kinds.c_header(records)
    assert f"CMX_OP_SCRATCH_DEMO = {code}," in header
    assert "set(CMX_OWN_LAYER_scratch_demo cmx_scratch_demo_s8.c)" in layer_kinds.cmake_lists(records)
    # its fields, in the one list plan.py packs, give its C record
    demo = plan_fields.Record("a demo", (plan_fields.ints("input", "output", "scratch", "scratch_bytes"),))
    monkeypatch.setitem(plan_fields.RECORDS, "scratch_demo", demo)
    assert "  int32_t input, output, scratch, scratch_bytes;\n} cmx_layer_scratch_demo;" in layer_kinds.c_records(
        records
    )
    gcc = shutil.which("gcc")
    if not gcc:
        pytest.skip("the expansion was not checked: no host gcc")
    (tmp_path / "cmx_plan_kinds.h").write_text(header)
    probe = tmp_path / "probe.c"
    probe.write_text('#include "cmx_plan_kinds.h"\n#define NAME(K, k) k;\nCMX_PLAN_KINDS_IN(NAME)\n')

    def expanded(*defines: str) -> list[str]:
        out = subprocess.run([gcc, "-E", "-P", *defines, str(probe)], capture_output=True, text=True, check=True)
        return re.findall(r"(\w+);", out.stdout.split("enum cmx_plan_op")[-1].split("};", 1)[-1])

    assert expanded() == ["copy", "copy_region"]  # the kinds with no kernel of their own
    assert expanded("-DCMX_BACKEND_SCRATCH_DEMO", "-DCMX_BACKEND_CONV") == [
        "conv",
        "copy",
        "copy_region",
        "scratch_demo",
    ]


@pytest.mark.parametrize(
    "extra, why",
    [
        ("  twin: {code: 1, calls: f, from: cmx-gen}\n", "share a code"),
        ("  odd: {code: 60, calls: f, from: vendor}\n", "from must be"),
        ("  big: {code: 64, calls: f, from: libc}\n", "outside 1..63"),
    ],
)
def test_a_bad_record_is_refused(extra: str, why: str):
    text = (DATA_DIR / "backend_layers.yaml").read_text() + extra
    with pytest.raises(ValueError, match=why):
        layer_kinds.parse(text)


def test_regenerating_writes_the_same_files(tmp_path: Path):
    (tmp_path / "backend").mkdir()
    written = layer_kinds.write(tmp_path)
    for path in written:
        assert path.read_text() == (KERNELS / path.relative_to(tmp_path)).read_text()


@pytest.mark.parametrize("cpu", ["cortex-m55", "cortex-m4"])
def test_the_plan_check_compiles_clean_for_each_kind_alone(cpu):
    """An app compiles the plan check with its plans' kinds only: each kind alone gets every declaration
    its check calls (an s4 kind's buffer-size function went undeclared, so GCC took an implicit one and
    compiled the Helium branch out) and no warning, as Zephyr's Twister (-Werror) would."""
    gcc, nn = shutil.which("arm-none-eabi-gcc"), os.environ.get("CMSIS_NN_PATH")
    if not gcc or not nn:
        pytest.skip("not compiled: needs arm-none-eabi-gcc and CMSIS_NN_PATH")
    flags = [f"-mcpu={cpu}", "-mthumb", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only"]
    flags += [f"-I{KERNELS / 'backend'}", f"-I{KERNELS / 'nn'}", f"-I{nn}/Include"]
    for kind in RECORDS:
        done = subprocess.run(
            [gcc, *flags, f"-DCMX_BACKEND_{kind.macro}", str(KERNELS / "backend" / "cmx_plan_check.c")],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, f"{kind.name}: {done.stderr[-800:]}"


def test_every_field_the_plan_check_reads_as_a_constant_is_rebased_as_one():
    # a constant's offset is written from the data section's start and moved to the plan's by _rebase;
    # a field the C check reads as a constant but missing from CONSTANT_FIELDS points into the records
    # (softmax_s16's tables read garbage so until they were added)
    check = (KERNELS / "backend" / "cmx_plan_check.c").read_text()
    read = set(re.findall(r"constant\(c, l->([a-z_0-9]+)", check))
    assert read and read <= plan.CONSTANT_FIELDS, read - plan.CONSTANT_FIELDS
