"""The plan checked before it runs (kernels/backend/cmx_plan_check.c) and the backend's layer loop
(cmx_plan_run.h), built for the host with AddressSanitizer and UndefinedBehaviorSanitizer over
CMSIS-NN's C path and cmx-gen's portable kernels (tests/lower/plan_run_host.cpp): every plan cmx-gen
makes for these models passes; mutated plans (bit flips, fields at their limits, records swapped, cut
short) are refused or run with every byte read and written inside the plan, the working memory and
the arguments, and a mutation that changed nothing gives the original outputs. The DSP and Helium
kernels are not built for the host: their plans are checked on QEMU (the firmware tests).
Needs CMSIS_NN_PATH and a host C/C++ compiler."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import ROOT, run_cli

from cmx_gen.lower.delegate import layer_kinds
from cmx_gen.lower.delegate import plan as plan_mod
from cmx_gen.program.pte import delegate_plans, read

# Plain-C models lowered for the Cortex-M3 (CMSIS-NN's C path): between them every layer kind the
# host build runs but the DSP and Helium ones.
MODELS = (
    "samples/digits/model.py:DigitsCNN",
    "tests/toy_models/user_models.py:SpectrogramNormKws",
    "tests/toy_models/user_models.py:BiGruKeywordSpotter",
    "tests/toy_models/user_models.py:BiLstmTagger",
    "tests/toy_models/attention_models.py:EncoderPreNorm",
    "tests/toy_models/int4_models.py:Int4Net",  # lowered with --weights int4: the s4 kinds
    "tests/toy_models/int16_models.py:Int16Net",  # lowered with --precision int16: the s16 kinds
    "tests/toy_models/int16_models.py:Int16Residual",  # ... add_s16 and the s16 pools
)
WEIGHTS = {
    "tests/toy_models/int4_models.py:Int4Net": ("--weights", "int4"),
    "tests/toy_models/int16_models.py:Int16Net": ("--precision", "int16"),
    "tests/toy_models/int16_models.py:Int16Residual": ("--precision", "int16"),
}
# Every kind with a kernel of its own but the DSP- and Helium-only ones, from the kinds' records (a new kind
# is fuzzed without touching this file)
DSP_OR_HELIUM_ONLY = ("conv_row", "conv_helium")
KINDS = tuple(k.macro for k in layer_kinds.kinds().values() if not k.always and k.name not in DSP_OR_HELIUM_ONLY)
MUTATIONS = 2500  # per plan: 10 plans, 25,000 in all


@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> Path:
    nn, cc, cxx = os.environ.get("CMSIS_NN_PATH"), shutil.which("gcc"), shutil.which("g++")
    if not nn or not cc or not cxx:
        pytest.skip("the plan check was not built for the host: needs CMSIS_NN_PATH, gcc and g++")
    out = tmp_path_factory.mktemp("plan_run_host")
    flags = ["-O1", "-g", "-fwrapv", "-fsanitize=address,undefined", "-fno-sanitize=shift-base"]
    flags += ["-fno-sanitize-recover=all", f"-I{nn}/Include", f"-I{ROOT}/kernels/nn", f"-I{ROOT}/kernels/backend"]
    flags += [f"-I{ROOT}/tests"]  # host_fuzz.h
    flags += ["-include", str(ROOT / "tests" / "lower" / "acle_host.h"), *(f"-DCMX_BACKEND_{k}" for k in KINDS)]
    skip = ("_f16", "_f32", "_flt", "cmx_conv_row", "cmx_conv_helium")  # float, DSP and Helium only
    sources = [p for p in sorted(Path(nn, "Source").glob("*/*.c")) if "Bindings" not in str(p)]
    sources += sorted((ROOT / "kernels" / "nn").glob("*.c")) + [ROOT / "kernels" / "backend" / "cmx_plan_check.c"]
    sources = [p for p in sources if not any(s in p.name for s in skip)]

    def compile_one(i_src: tuple[int, Path]) -> Path:
        obj = out / f"{i_src[0]}.o"
        subprocess.run([cc, *flags, "-c", str(i_src[1]), "-o", str(obj)], check=True, capture_output=True)
        return obj

    with ThreadPoolExecutor(max_workers=2) as pool:
        objects = list(pool.map(compile_one, enumerate(sources)))
    main = out / "main.o"
    subprocess.run(
        [cxx, *flags, "-std=c++17", "-c", str(ROOT / "tests" / "lower" / "plan_run_host.cpp"), "-o", str(main)],
        check=True,
        capture_output=True,
    )
    binary = out / "plan_run_host"
    subprocess.run([cxx, "-fsanitize=address,undefined", *map(str, objects), str(main), "-o", str(binary)], check=True)
    return binary


@pytest.fixture(scope="module")
def plans(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("m3_plans")
    found: dict[str, Path] = {}
    for spec in MODELS:
        name = spec.rpartition(":")[2]
        assert run_cli("lower", ROOT / spec, "--target", "cortex-m3", "-o", out / name, *WEIGHTS.get(spec, ())) == 0
        for i, blob in enumerate(delegate_plans(read(next((out / name).glob("*.pte")).read_bytes()))):
            found[f"{name}_{i}"] = out / f"{name}_{i}.plan"
            found[f"{name}_{i}"].write_bytes(blob)
    return found


def _run(harness: Path, *args) -> str:
    done = subprocess.run([str(harness), *map(str, args)], capture_output=True, text=True)
    assert done.returncode == 0 and "Sanitizer" not in done.stderr and "runtime error" not in done.stderr, (
        done.stdout + done.stderr[-3000:]
    )
    return done.stdout.strip()


def test_every_plan_cmx_gen_makes_passes_the_check(harness, plans):
    kinds = {kind for path in plans.values() for kind, _ in plan_mod.read_layers(path.read_bytes())}
    assert {"conv", "depthwise_conv", "linear", "lstm", "gru", "layer_norm", "bmm", "softmax", "lut"} <= kinds
    assert {"conv_s4", "depthwise_s4", "linear_s4"} <= kinds
    assert {"conv_s16", "depthwise_s16", "linear_s16", "add_s16", "avg_pool_s16", "max_pool_s16"} <= kinds
    for name, path in plans.items():
        assert _run(harness, "check", path) == "check=0 why=ok", name


def test_a_record_past_the_working_memory_is_refused_by_name(harness, plans, tmp_path):
    blob = bytearray(plans["DigitsCNN_0"].read_bytes())
    at = 8 + plan_mod.CORE_BYTES + 12  # work_bytes
    struct.pack_into("<I", blob, at, 16)
    (tmp_path / "small.plan").write_bytes(bytes(blob))
    verdict = _run(harness, "check", tmp_path / "small.plan")
    assert verdict.startswith("check=2 ") and "past the working memory" in verdict, verdict


def test_mutated_plans_are_refused_or_run_inside_their_memory(harness, plans):
    totals: dict[str, int] = {}
    for seed, (name, path) in enumerate(sorted(plans.items()), 54):
        line = _run(harness, "fuzz", path, seed, MUTATIONS)
        counts = {k: int(v) for k, v in (item.split("=") for item in line.split())}
        assert counts["unchanged_differ"] == 0, (name, line)
        assert counts["refused"] + counts["unchanged_ran"] + counts["changed_ran"] == MUTATIONS, (name, line)
        for key, value in counts.items():
            totals[key] = totals.get(key, 0) + value
        print(f"\n{name}: {line}")
    print(f"\nall: {totals}")
    assert totals["mutations"] >= 10000 and totals["refused"] > 0 and totals["changed_ran"] > 0
