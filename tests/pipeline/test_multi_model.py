"""Several models in one firmware (issue 21), without the SDK: the project file and the command
line, the placement of both arena layouts, the app's folders and handles, and regen: one model's
weights change only that model's files, a model taken out of the project takes its files along,
and the user's application is never touched. The firmware side is test_multi_model_firmware.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import SMALL, run_cli
from toy_models.weighted import weighted_model

from cmx_gen.app import project as project_mod
from cmx_gen.app.project_file import dumps as project_toml
from cmx_gen.common.errors import FitError
from cmx_gen.fit.boards import load_board
from cmx_gen.fit.memory import place, plan
from cmx_gen.pipeline.generate import generate
from cmx_gen.program.report import load_json


def project_file(folder: Path, models: dict[str, str], rtos: str = "baremetal", separate: bool = False) -> Path:
    """A cmx.toml with one [[model]] table per model."""
    tables = "".join(f'[[model]]\nname = "{name}"\nsource = "{source}"\n\n' for name, source in models.items())
    text = (
        tables + f'[target]\nboard = "mps3-an547"\nrtos = "{rtos}"\n\n[output]\ndir = "app"\n\n'
        f"[options]\nseparate_arenas = {str(separate).lower()}\n"
    )
    path = folder / "cmx.toml"
    path.write_text(text)
    return path


def test_project_file_reads_and_writes_model_tables(tmp_path):
    path = project_file(tmp_path, {"conv": f"{SMALL}:ConvNet", "res": f"{SMALL}:Pooled"}, separate=True)
    project = project_mod.load(path)
    assert project.several and project.separate_arenas
    assert [e.model_name() for e in project.models] == ["conv", "res"]
    again = tmp_path / "again"
    again.mkdir()
    (again / "cmx.toml").write_text(project_toml(project, again))
    assert project_mod.load(again / "cmx.toml").models == project.models


@pytest.mark.parametrize(
    "tables, says",
    [
        ('[[model]]\nsource = "m.py:A"\n[[model]]\nname = "b"\nsource = "m.py:B"\n', "has no name"),
        (
            '[[model]]\nname = "a"\nsource = "m.py:A"\n[[model]]\nname = "a"\nsource = "m.py:B"\n',
            "two [[model]] tables are named 'a'",
        ),
        ('[[model]]\nname = "a"\nsource = "m.py:A"\nsoruce = "x"\n', "unknown key(s) soruce"),
        ('[[model]]\nname = "a-b"\nsource = "m.py:A"\n', "is not a C identifier"),
    ],
)
def test_bad_model_tables_are_one_line(tmp_path, capsys, tables, says):
    (tmp_path / "cmx.toml").write_text(tables + '[target]\nboard = "mps3-an547"\n')
    assert run_cli("create", "--config", tmp_path / "cmx.toml", "-o", tmp_path / "app") == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_per_model_option_with_several_models_is_refused(tmp_path, capsys):
    code = run_cli(
        "create",
        f"a={SMALL}:ConvNet",
        f"b={SMALL}:Pooled",
        "--io",
        "int8",
        "--board",
        "mps3-an547",
        "-o",
        tmp_path / "app",
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "--io is a per-model option" in err and "[[model]]" in err


@pytest.fixture(scope="module")
def two_app(tmp_path_factory):
    """conv + res from the command line: NAME=MODEL each."""
    app = tmp_path_factory.mktemp("two") / "app"
    assert run_cli("create", f"conv={SMALL}:ConvNet", f"res={SMALL}:Pooled", "--board", "mps3-an547", "-o", app) == 0
    return app


def test_one_app_holds_each_model_and_one_kernel_library(two_app):
    model = two_app / "model"
    for name in ("conv", "res"):
        for file in ("model.pte", "model_pte.S", "cmx_model.h", "cmx_model_io.c", "report.json"):
            assert (model / name / file).is_file(), f"{name}/{file}"
        # each model's program and reference carry its name: they link into one image
        assert f"cmx_{name}_pte:" in (model / name / "model_pte.S").read_text()
        assert f"#define CMX_REFERENCE_INPUTS cmx_{name}_inputs" in (model / name / "cmx_model.h").read_text()
    handles = (model / "cmx_models.h").read_text()
    assert "extern cmx_model cmx_model_conv;" in handles and "extern cmx_model cmx_model_res;" in handles
    assert "#define CMX_NUM_MODELS 2" in handles and "#define CMX_SHARED_ARENA 1" in handles
    # one registration for the union of the operators, each kernel once
    ops = (model / "cmx_ops.cmake").read_text()
    union = set()
    for name in ("conv", "res"):
        union |= {op["name"] for op in json.loads((model / name / "report.json").read_text())["operators"]}
    registered = (model / "cmx_kernels.cpp").read_text()
    for op in union - {op for op in union if op.startswith("cmx::")}:  # kernels; cmx:: rows are backend layers
        assert registered.count(f'"{op}"') == 1, op
    assert registered.count("cmx_register_backend();") == 1, "cmx-gen's backend is registered once for both"
    layers = re.search(r"set\(CMX_BACKEND_LAYERS (.*)\)", ops).group(1)
    assert '"fully_connected"' in layers and '"max_pool"' in layers  # conv's linear, both models' max pool
    toml = project_mod.load(two_app)
    assert [e.model_name() for e in toml.models] == ["conv", "res"] and not toml.separate_arenas


def test_shared_arena_is_the_largest_model_and_separate_the_sum():
    board = load_board("mps3-an547")
    from cmx_gen.model import source as model_source
    from cmx_gen.pipeline.lower import produce

    reports = {}
    for name in ("ConvNet", "Pooled", "Plain"):
        source = model_source.load(f"{SMALL}:{name}")
        reports[name] = produce(source, board.core.lower_target).artifacts.report
    singles = {name: plan(report, board) for name, report in reports.items()}
    shared = place(reports, board, "shared")
    separate = place(reports, board, "separate")
    planned = {name: sum(p.planned_buffer_sizes) for name, p in singles.items()}
    assert sum(shared.planned_buffer_sizes) == max(planned.values())
    assert sum(separate.planned_buffer_sizes) == sum(planned.values())
    assert shared.temp_pool_bytes == max(p.temp_pool_bytes for p in singles.values())
    assert separate.temp_pool_bytes == sum(p.temp_pool_bytes for p in singles.values())
    for placement in (shared, separate):  # each model keeps its own method pool: its state
        assert placement.method_pool_bytes == sum(p.method_pool_bytes for p in singles.values())
    assert shared.other_layout_arena_bytes == separate.arena_bytes
    assert separate.other_layout_arena_bytes == shared.arena_bytes
    text = shared.to_text()
    assert "arena layout: shared" in text and "separate would be" in text
    # the kernels the programs share are counted once
    assert shared.code_bytes < sum(p.code_bytes for p in singles.values())


def test_sharing_the_arena_fits_where_separate_arenas_are_refused_with_the_shortfall():
    """Five 56 KiB-activation models on an nRF52840 (256 KiB RAM): one after another they need one
    arena; at the same time five, which do not fit, and the refusal names region and bytes."""
    from cmx_gen.model import source as model_source
    from cmx_gen.pipeline.lower import produce

    board = load_board("nrf52840dk")
    source = model_source.load(f"{SMALL}:WideConv", input_shape="1,3,40,40", random_calibration=True)
    report = produce(source, board.core.lower_target).artifacts.report
    reports = {f"m{i}": report for i in range(5)}
    shared = place(reports, board, "shared")
    assert sum(shared.planned_buffer_sizes) == sum(plan(report, board).planned_buffer_sizes)
    with pytest.raises(FitError) as err:
        place(reports, board, "separate")
    assert "sram0" in str(err.value) and "short by" in str(err.value) and "drop separate_arenas" in err.value.hint
    assert err.value.shortfalls[0].short_bytes > 0


def test_regen_after_one_model_changed_touches_only_its_files(tmp_path):
    first = weighted_model(tmp_path / "first", seed=1)
    second = weighted_model(tmp_path / "second", seed=2)
    config = project_file(tmp_path, {"first": first, "second": second})
    assert run_cli("create", "--config", config) == 0
    app = tmp_path / "app"
    user = app / "user" / "main.c"
    user.write_text(user.read_text() + "\n/* my product code */\n")
    before = {p.relative_to(app).as_posix(): p.read_bytes() for p in app.rglob("*") if p.is_file()}

    weighted_model(tmp_path / "second", seed=3)  # retrained
    project = project_mod.load(app)
    done = generate(project, app)
    changed = sorted(done.render.updated)
    assert changed and all(rel.startswith("model/second/") or rel == "model/placement.json" for rel in changed), changed
    assert any(rel == "model/second/model.pte" for rel in changed)
    after = {p.relative_to(app).as_posix(): p.read_bytes() for p in app.rglob("*") if p.is_file()}
    unchanged = [
        rel
        for rel in before
        if rel.startswith("model/first/") or rel in ("model/cmx_kernels.cpp", "model/cmx_models.h")
    ]
    assert unchanged and all(before[rel] == after[rel] for rel in unchanged)
    assert after["user/main.c"].endswith(b"/* my product code */\n")

    # a model taken out of the project: its files go, the user's application stays
    third = weighted_model(tmp_path / "third", seed=4)
    project_file(app.parent, {"first": first, "second": second, "third": third})
    assert run_cli("create", "--config", app.parent / "cmx.toml") == 0
    assert (app / "model" / "third" / "model.pte").is_file()
    text = (app / "cmx.toml").read_text()
    start = text.index('[[model]]\nname = "third"')
    (app / "cmx.toml").write_text(text[:start] + text[text.index("[target]") :])
    done = generate(project_mod.load(app), app)
    assert not (app / "model" / "third").exists() or not any((app / "model" / "third").iterdir())
    assert any(rel.startswith("model/third/") for rel in done.render.removed)
    assert "cmx_model_third" not in (app / "model" / "cmx_models.h").read_text()
    assert (app / "user" / "main.c").read_bytes().endswith(b"/* my product code */\n")
    assert load_json(app / "model" / "first" / "report.json").pte.bytes > 0


def test_zephyr_app_of_two_models_passes_the_offline_checks(tmp_path, capsys):
    """Rendered with every model's handle, its Twister scenario waits for each model's PASS line and
    the summary, and `cmx-gen validate` (Twister schema and harness, west, Kconfig, devicetree, the
    stand-in compile of every model's files) is green."""
    import yaml

    app = tmp_path / "app"
    assert (
        run_cli(
            "create",
            f"conv={SMALL}:ConvNet",
            f"pool={SMALL}:Pooled",
            "--board",
            "mps3-an547",
            "--rtos",
            "zephyr",
            "-o",
            app,
        )
        == 0
    )
    sample = yaml.safe_load((app / "sample.yaml").read_text())
    regex = sample["common"]["harness_config"]["regex"]
    assert sample["common"]["harness_config"]["type"] == "multi_line" and len(regex) == 3
    assert regex[0].endswith("model=conv$") and regex[1].endswith("model=pool$") and "models=" in regex[2]
    assert not any(name.endswith(".profile") for name in sample["tests"])
    main = (app / "src" / "main.c").read_text()
    assert "CMX_MODEL_LIST" in main and "digits" not in main
    capsys.readouterr()
    assert run_cli("validate", app) == 0
    out = capsys.readouterr().out
    assert "FAIL" not in out and "cmx_model_instance.cpp (conv)" in out and "model/pool/model_pte.S" in out


def test_the_html_page_has_a_section_per_model(two_app, tmp_path, capsys):
    """The page of an app of several models: the app's memory map and last run once, then each model's
    facts, operators and per-layer error in a section of its own (element ids kept unique)."""
    page = two_app / "report.html"
    assert page.is_file(), "create writes the page for an app of several models too"
    assert run_cli("report", two_app, "-o", tmp_path / "two.html") == 0
    text = (tmp_path / "two.html").read_text()
    assert 'id="memory-map"' in text and text.count('id="result-line"') == 1
    for name in ("conv", "res"):
        assert f'<h2 id="model-{name}">Model <code>{name}</code></h2>' in text
        assert f'id="operators-{name}"' in text and f'id="worst-layers-{name}"' in text
    ids = re.findall(r'id="([^"]+)"', text)
    assert len(ids) == len(set(ids)), "element ids repeat"
    assert run_cli("report", two_app / "model" / "res", "-o", tmp_path / "res.html") == 0
    assert "<svg" in (tmp_path / "res.html").read_text()


def test_a_data_run_on_an_app_of_several_names_the_model(two_app, tmp_path, capsys):
    """--data on an app of several models needs --model (the data set is one model's); a model the app
    does not hold is named. Each one line, exit 2."""
    data = tmp_path / "x.npz"
    np.savez(data, input=np.zeros((2, 3, 8, 8), np.float32))
    capsys.readouterr()
    assert run_cli("run", two_app, "--data", data) == 2
    err = capsys.readouterr().err
    assert "has 2 models (conv, res)" in err and "--model conv" in err
    assert run_cli("run", two_app, "--data", data, "--model", "nope") == 2
    assert "has no model 'nope'" in capsys.readouterr().err
