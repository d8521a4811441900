"""Budget and placement decisions on real board files, from synthetic lowering reports (plain data)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from reports import big_fallback_report, make_report, report_data  # noqa: F401

from cmx_gen.cli import main as cli
from cmx_gen.common.errors import FitError, ModelSourceError, Shortfall, TargetError
from cmx_gen.fit.boards import load_board
from cmx_gen.fit.budget import METHOD_POOL_MARGIN, budget, kernel_sizes
from cmx_gen.fit.memory import Placement, plan
from cmx_gen.pipeline.check import check_report
from cmx_gen.program.report import Report, load_json

KiB = 1024
DIGITS = Path(__file__).resolve().parents[2] / "samples" / "digits" / "model.py:DigitsCNN"
MiB = 1024 * 1024
SIZES = kernel_sizes()
STACK, HEAP = SIZES["stack_bytes"], SIZES["heap_bytes"]


def method_pool(n):
    """What the firmware allocates for an exact method-allocator need of n bytes (margin, 16-aligned)."""
    return (int(n * (1 + METHOD_POOL_MARGIN)) + 15) // 16 * 16


def static_ram(isa):
    return SIZES["isa"][isa]["runtime"]["ram"]


def test_budget_counts_each_kernel_once_and_defaults_unknown_ops():
    ops = [
        {"name": "cortex_m::quantized_conv2d.out", "count": 5, "class": "cmsis_nn"},
        {"name": "cortex_m::quantized_conv2d.out", "count": 1, "class": "cmsis_nn"},
        {"name": "aten::never_heard_of.out", "count": 1, "class": "fallback"},
    ]
    b = budget(make_report(ops=ops))
    table = SIZES["isa"]["MVE"]
    assert [c.name for c in b.code] == ["runtime", "cortex_m::quantized_conv2d", "aten::never_heard_of"]
    assert b.code_bytes == (
        table["runtime"]["code"]
        + table["ops"]["cortex_m::quantized_conv2d"]["code"]
        + table["defaults"]["fallback"]["code"]
    )
    assert b.code[2].source == "default:fallback"
    assert b.code_estimated  # an unknown op costs an estimated class default


def test_pools_are_aligned():
    b = budget(make_report(planned=(1001, 17), method=11553, temp=250))
    assert b.planned_buffer_sizes == [1008, 32]
    assert (b.method_pool_bytes, b.temp_pool_bytes) == (method_pool(11553), 256)
    assert b.method_pool_bytes >= 11553 and b.method_pool_bytes % 16 == 0


def test_model_in_flash_read_in_place():
    p = plan(make_report(isa="DSP", core="cortex-m7"), load_board("nucleo-h743zi"))
    assert (p.pte_region, p.pte_in_place, p.code_region) == ("flash0", True, "flash0")
    assert p.arena_region == "dtcm"  # fastest RAM first
    assert p.data_region == "sram0"
    flash = p.use("flash0")
    assert flash.items == {"code": p.code_bytes, "model.pte": 60 * KiB}
    assert flash.used == p.code_bytes + 60 * KiB


def test_model_in_itcm_on_corstone300_when_small():
    p = plan(make_report(), load_board("mps3-an547"))
    assert (p.pte_region, p.pte_in_place, p.arena_region, p.data_region) == ("itcm", True, "dtcm", "dtcm")


@pytest.mark.parametrize("board_id", ["mps3-an547", "corstone300-fvp"])
def test_model_too_big_for_flash_goes_to_ddr(board_id):
    report = make_report(pte=3 * MiB)  # ITCM (the boot "flash") is 512 KiB
    p = plan(report, load_board(board_id))
    assert p.code_region == "itcm"
    assert (p.pte_region, p.pte_in_place) == ("ddr", False)
    assert p.use("ddr").items["model.pte"] == 3 * MiB
    assert "model.pte" not in p.use("itcm").items


def test_activations_too_big_for_dtcm_go_to_sram():
    # nucleo-h743zi: DTCM 128 KiB, AXI SRAM 512 KiB (also holding .data/.bss, stack, heap)
    p = plan(make_report(isa="DSP", core="cortex-m7", planned=(150 * KiB, 40 * KiB)), load_board("nucleo-h743zi"))
    assert p.arena_region == "sram0"
    assert p.use("dtcm").used == 0
    assert p.use("sram0").items["planned buffers"] == 190 * KiB
    # Corstone-300: DTCM 512 KiB shared with .data/stack/heap; 600 KiB of activations go to the internal SRAM.
    p = plan(make_report(planned=(600 * KiB,)), load_board("mps3-an547"))
    assert p.arena_region == "isram"


def test_arena_that_fits_dtcm_only_without_static_data_moves_on():
    # 512 KiB DTCM minus .data/.bss, stack and heap leaves less than 480 KiB: the arena must not squeeze in.
    room = 512 * KiB - static_ram("MVE") - STACK - HEAP
    largest = (room - method_pool(8 * KiB) - 256) // 16 * 16  # pools are 16-byte aligned
    p = plan(make_report(planned=(largest + 1,), method=8 * KiB, temp=256), load_board("mps3-an547"))
    assert p.arena_region == "isram"
    p = plan(make_report(planned=(largest,), method=8 * KiB, temp=256), load_board("mps3-an547"))
    assert p.arena_region == "dtcm" and 0 <= p.use("dtcm").free < 16


def test_no_fit_anywhere_is_refused_with_the_shortfall():
    board = load_board("nrf52840dk")  # one 256 KiB SRAM
    report = make_report(isa="DSP", core="cortex-m4", planned=(300 * KiB,))
    need = 300 * KiB + method_pool(8 * KiB) + 256 + static_ram("DSP") + STACK + HEAP
    with pytest.raises(FitError) as info:
        plan(report, board)
    err = info.value
    assert err.exit_code == 3
    assert err.shortfalls == [
        Shortfall(
            region="sram0",
            kind="sram",
            size=256 * KiB,
            need=need,
            short_bytes=need - 256 * KiB,
            items=err.shortfalls[0].items,
        )
    ]
    assert f"short by {need - 256 * KiB:,} bytes" in err.problem and "'sram0'" in err.problem
    # Lists DSP boards from the database where it fits, never boards with another ISA.
    assert "nucleo-h743zi" in err.fits_on and "mps2-an386" in err.fits_on
    assert "mps3-an547" not in err.fits_on and "nrf52840dk" not in err.fits_on
    assert err.hint.startswith("it fits on: ")


def test_too_big_for_every_board():
    with pytest.raises(FitError) as info:
        plan(make_report(pte=300 * MiB), load_board("mps3-an547"))
    assert info.value.fits_on == []
    assert "no MVE board in the database fits it" in info.value.hint
    assert "region 'ddr'" in info.value.problem


@pytest.mark.parametrize(
    "isa,core,board_id",
    [
        ("MVE", "cortex-m55", "nucleo-h743zi"),  # Helium program on a DSP core
        ("DSP", "cortex-m4", "mps3-an547"),  # DSP program on an M55: corrupts memory upstream
        ("SCALAR", "cortex-m3", "mps2-an386"),  # exact match required
        ("DSP", "cortex-m33", "mps2-an385"),
        ("DSP", "cortex-m33", "mps2-an521"),  # AN521 CPU0: Cortex-M33 without DSP/FPU (NOCP fault in QEMU)
    ],
)
def test_isa_mismatch_is_refused(isa, core, board_id):
    with pytest.raises(TargetError) as info:
        plan(make_report(isa=isa, core=core), load_board(board_id))
    board = load_board(board_id)
    assert f"lowered for {core} ({isa})" in info.value.problem
    assert f"--target {board.core.lower_target}" in info.value.hint
    if board_id == "mps2-an521":
        assert "--target cortex-m3" in info.value.hint


def test_not_a_report(tmp_path):
    """A report is checked once, when it is read (report.load_json / Report.of)."""
    with pytest.raises(ModelSourceError, match="not a cmx-gen lowering report"):
        Report.of({"schema": "other"})
    broken = report_data()
    del broken["memory"]["temp_allocator_bytes"]
    (tmp_path / "report.json").write_text(json.dumps(broken))
    with pytest.raises(ModelSourceError, match=r"report.json lacks memory.temp_allocator_bytes"):
        load_json(tmp_path / "report.json")
    broken["memory"]["temp_allocator_bytes"] = "many"
    with pytest.raises(ModelSourceError, match=r"has a bad memory.temp_allocator_bytes"):
        Report.of(broken)


def test_placement_dict_and_text():
    p = check_report(make_report(pte=3 * MiB), "corstone300-fvp")
    d = json.loads(json.dumps(p.to_dict()))
    assert Placement.from_dict(d) == p, "an app's placement.json reads back as the placement it was made from"
    for key in (
        "board_id",
        "pte_region",
        "pte_in_place",
        "code_region",
        "data_region",
        "arena_region",
        "stack_bytes",
        "heap_bytes",
        "method_pool_bytes",
        "planned_buffer_sizes",
        "temp_pool_bytes",
        "uses",
    ):
        assert key in d
    assert {u["region"] for u in d["uses"]} == {"itcm", "dtcm", "isram", "sram", "ddr"}
    assert all(u["used"] <= u["size"] for u in d["uses"])
    text = p.to_text()
    assert "model.pte (3.00 MiB) -> ddr: loaded there at load time" in text
    assert "region" in text.splitlines()[0] and "use %" in text.splitlines()[0]


# ----------------------------------------------------------------- CLI


def write_report(tmp_path, report):
    (tmp_path / "report.json").write_text(json.dumps(report.to_dict()))
    return tmp_path


def test_cli_check_fits(tmp_path, capsys):
    folder = write_report(tmp_path, make_report())
    assert cli.main(["check", str(folder), "--board", "mps3-an547"]) == 0
    out = capsys.readouterr().out
    assert "fits: yes" in out and "itcm" in out
    assert cli.main(["check", str(folder / "report.json"), "--board", "mps3-an547", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["fits"] is True and data["pte_region"] == "itcm"


def test_cli_check_refuses(tmp_path, capsys):
    folder = write_report(tmp_path, make_report(isa="DSP", core="cortex-m4", planned=(300 * KiB,)))
    assert cli.main(["check", str(folder), "--board", "nrf52840dk"]) == 3
    captured = capsys.readouterr()
    assert "** OVER **" in captured.out  # the region table is printed before the refusal
    assert "does not fit nrf52840dk" in captured.err and "it fits on:" in captured.err
    assert cli.main(["check", str(folder), "--board", "nrf52840dk", "--json"]) == 3
    data = json.loads(capsys.readouterr().out)
    assert data["fits"] is False and data["shortfalls"][0]["region"] == "sram0"
    # ISA mismatch exits non-zero too
    assert cli.main(["check", str(folder), "--board", "mps3-an547"]) == 2
    assert "lowered for cortex-m4 (DSP)" in capsys.readouterr().err


def test_cli_check_needs_a_report(tmp_path, capsys):
    assert cli.main(["check", str(tmp_path), "--board", "mps3-an547"]) == 2
    assert "has no report.json" in capsys.readouterr().err


# ----------------------------------------------------------------- a real lowered program


def test_real_lowered_model_fits_corstone300(lowered_dir):
    folder = lowered_dir("ConvNet")
    report = load_json(folder / "report.json")
    p = check_report(report, "mps3-an547")
    assert p.pte_region == "itcm" and p.pte_in_place
    assert p.planned_buffer_sizes == [(s + 15) // 16 * 16 for s in report.memory.planned_buffer_sizes]
    with pytest.raises(TargetError):
        check_report(report, "nucleo-h743zi")


# ----------------------------------------------------------------- the estimate against a real link


@pytest.mark.firmware
@pytest.mark.skipif(
    not os.environ.get("EXECUTORCH_ROOT") or not os.environ.get("CMSIS_NN_PATH"),
    reason="needs EXECUTORCH_ROOT and CMSIS_NN_PATH (ExecuTorch + CMSIS-NN sources) to link an app: not run",
)
@pytest.mark.parametrize("board_id", ["mps3-an547", "mps2-an386"])
def test_flash_estimate_within_15_percent_of_the_linked_app(tmp_path, monkeypatch, board_id):
    from cmx_gen.app import project
    from cmx_gen.app.kinds.baremetal import build
    from cmx_gen.pipeline.generate import generate

    monkeypatch.setenv("CMX_GEN_CACHE", str(tmp_path / "cache"))
    app = tmp_path / "app"
    done = generate(project.Project.single(model=str(DIGITS), board=board_id, rtos="baremetal", output=str(app)), app)
    placement = done.placement
    built = build.build(app, jobs=2)
    boot = placement.code_region
    linked = next(r for r in built.regions if r.name.lower() == boot.lower())
    estimate = placement.use(boot).used  # code (runtime + kernels) + model.pte, in place
    assert placement.pte_region == boot
    assert linked.sections.get(".cmx_model", 0) >= placement.pte_bytes
    assert abs(estimate - linked.used) <= 0.15 * linked.used, (estimate, linked.used, linked.sections)
    assert estimate >= 0.95 * linked.used, "the estimate should not be optimistic"


def test_reference_data_is_placed_with_the_program():
    """The firmware embeds the reference input and expected output beside the .pte."""
    report = make_report(
        inputs=[{"shape": [1, 3, 96, 96], "dtype": "float32", "dim_order": [0, 2, 3, 1], "quant": None}],
        outputs=[{"shape": [1, 2], "dtype": "float32", "dim_order": [0, 1], "quant": None}],
    )
    assert budget(report).reference_bytes == 3 * 96 * 96 * 4 + 16
    placement = plan(report, load_board("mps3-an547"))
    assert placement.use(placement.pte_region).items["reference data"] == 3 * 96 * 96 * 4 + 16


def test_code_too_big_for_itcm_runs_from_sram_with_vectors_in_itcm():
    """Issue 11: 575 KiB of fp32 fallback code does not fit the 512 KiB ITCM, but Corstone-300 has
    executable SRAM and DDR the loader writes: place the code there, keep the vector table at boot."""
    report = big_fallback_report(575 * KiB)
    p = plan(report, load_board("mps3-an547"))
    assert p.code_region == "isram" and p.code_bytes > 512 * KiB
    assert p.use("isram").items["code"] == p.code_bytes
    assert p.use("itcm").items["vector table"] > 0 and "code" not in p.use("itcm").items
    assert p.pte_region == "itcm", "the boot region, freed of code, holds the program"


def test_code_never_goes_to_non_executable_or_non_loadable_ram():
    # nucleo-h743zi: 2 MiB flash boots; its SRAMs are not written at flash time.
    report = big_fallback_report(3 * MiB, "DSP", "cortex-m7")
    with pytest.raises(FitError) as err:
        plan(report, load_board("nucleo-h743zi"))
    assert "flash" in err.value.problem
