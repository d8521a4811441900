"""Structure the next engineer relies on: layers that import only downwards and never in a circle,
one `.pte` reader, no torch while rendering, commands that do not import each other."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "cmx_gen"

# The pipeline's layers, top to bottom: a module imports from its own layer or one below it. The
# entry points (`python -m cmx_gen`, the west extension) sit above everything.
LAYERS = [
    ["cmx_gen.__main__", "cmx_gen.west_command"],
    ["cmx_gen.cli"],  # arguments in, one line out
    ["cmx_gen.pipeline"],  # load -> lower -> fit -> render, and a data set's run
    ["cmx_gen.app"],  # the app folder, its rendering, and the app kinds (bare-metal, Zephyr)
    ["cmx_gen.device"],  # build tools, runners, flashers, what the firmware prints
    ["cmx_gen.fit"],  # boards and the placement of a program in their memory
    ["cmx_gen.program"],  # the .pte's facts, its report, its reference, the cache
    ["cmx_gen.lower"],  # quantize and lower; the bit-exact host reference
    ["cmx_gen.model"],  # model sources, export, input layout
    ["cmx_gen.common", "cmx_gen"],  # errors, paths, progress, cores; the package's version
]


def _module_name(path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Every cmx_gen module's cmx_gen imports (function-level and TYPE_CHECKING ones too: each is a
    dependency), resolved to modules: `from cmx_gen.lower.host_models import reference` is `cmx_gen.lower.host_models.reference`."""
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        deps = graph.setdefault(name, set())
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                deps.update(a.name for a in node.names if a.name in paths)
            elif (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.module.startswith("cmx_gen")
                and not node.level
            ):
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    deps.add(full if full in paths else node.module)
        deps.discard(name)
    return graph


def _layer(module: str) -> int:
    best = max(
        (prefix for layer in LAYERS for prefix in layer if module == prefix or module.startswith(prefix + ".")), key=len
    )
    return next(i for i, layer in enumerate(LAYERS) if best in layer)


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    return sorted(
        f"{a} imports {b}: {LAYERS[_layer(a)][0]} sits below {LAYERS[_layer(b)][0]}"
        for a, deps in graph.items()
        for b in deps
        if _layer(b) < _layer(a)
    )


def import_cycles(graph: dict[str, set[str]]) -> list[str]:
    """One line per circle (Tarjan's strongly connected components), the circle spelled out."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[str] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(" -> ".join(_circle(graph, set(component))))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def _circle(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """A shortest way round the component from its first module, back to it."""
    start = min(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for node in frontier:
            for dep in sorted(graph[node] & component):
                if dep == start:
                    return paths[node] + [start]
                if dep not in paths:
                    paths[dep] = paths[node] + [dep]
                    nxt.append(dep)
        frontier = nxt
    return sorted(component)


def test_every_module_belongs_to_a_layer():
    assert [
        m for m in import_graph() if not any(m == p or m.startswith(p + ".") for layer in LAYERS for p in layer)
    ] == []


def test_no_module_imports_a_layer_above_its_own():
    assert layer_violations(import_graph()) == []


def test_no_import_circles():
    assert import_cycles(import_graph()) == []


def test_the_import_checks_name_the_pair():
    """The checks above can fail, and say where: a made-up upward import and a circle."""
    graph = {
        "cmx_gen.lower.a": {"cmx_gen.app.render"},
        "cmx_gen.app.render": set(),
        "cmx_gen.fit.x": {"cmx_gen.fit.y"},
        "cmx_gen.fit.y": {"cmx_gen.fit.x"},
    }
    assert layer_violations(graph) == [
        "cmx_gen.lower.a imports cmx_gen.app.render: cmx_gen.lower sits below cmx_gen.app"
    ]
    assert import_cycles(graph) == ["cmx_gen.fit.x -> cmx_gen.fit.y -> cmx_gen.fit.x"]


def test_only_program_py_deserializes_a_pte():
    readers = sorted(
        p.relative_to(ROOT).as_posix() for p in PACKAGE.rglob("*.py") if "deserialize_pte_binary" in p.read_text()
    )
    assert readers == ["cmx_gen/program/pte.py"], readers


def test_rendering_does_not_import_torch():
    code = "import sys, cmx_gen.app.render, cmx_gen.app.model_files, cmx_gen.app.shared_files, cmx_gen.app.folder; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == "False"


def test_no_command_imports_another():
    offenders = []
    for path in (PACKAGE / "cli" / "commands").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("cmx_gen.cli.commands"):
                offenders.append(f"{path.name}: from {node.module} import ...")
    assert offenders == [], offenders


def test_a_new_core_is_one_entry_in_cores_yaml(monkeypatch):
    """No core name is spelled out in code: a core added to data/cores.yaml is known to the board
    schema, gets its gcc flags and runs the program of its ISA's target."""
    import copy

    from cmx_gen.common import targets
    from cmx_gen.fit.boards import Core

    data = copy.deepcopy(targets._cores_file())
    data["cores"]["cortex-m99"] = {"isa": "MVE", "optional": ["mve", "fpu"], "gcc_stand_in": "cortex-m55"}
    monkeypatch.setattr(targets, "_cores_file", lambda: data)
    core = Core(name="cortex-m99", fpu=None, dsp=True, mve=None, clock_hz=1)
    assert core.isa == "DSP" and core.lower_target == "cortex-m4"
    assert core.gcc_flags == ["-mcpu=cortex-m99+nomve+nofp", "-mfloat-abi=soft"]
    assert Core(name="cortex-m99", fpu="auto", dsp=True, mve="float", clock_hz=1).lower_target == "cortex-m55"


def test_core_facts_live_only_in_cores_yaml():
    import re

    spelled = []
    for path in PACKAGE.rglob("*.py"):
        for name in sorted(set(re.findall(r'"(cortex-m(?:0plus|0|3|4|7|23|33|35p|52|55|85))[+"]', path.read_text()))):
            spelled.append(f"{path.relative_to(ROOT)}: {name}")
    # defaults (`lower` targets M55 unless told) and a comment's example are choices, not core facts
    allowed = {"cmx_gen/cli/commands/lower.py: cortex-m55", "cmx_gen/app/kinds/zephyr/checks/compile.py: cortex-m55"}
    assert set(spelled) <= allowed, sorted(set(spelled) - allowed)


def test_a_third_app_kind_is_one_class(tmp_path, capsys):
    """An app kind is a template plus one AppKind subclass: registered, `create --rtos`, cmx.toml,
    `regen` and `build` all work with it, and nothing else changes."""
    import json

    from conftest import run_cli

    from cmx_gen.app.folder import AppFolder
    from cmx_gen.app.kinds import APP_KINDS, AppKind, Built, register

    template = tmp_path / "template"
    (template / "{{cookiecutter.app_dir}}").mkdir(parents=True)
    (template / "cookiecutter.json").write_text(
        json.dumps(
            {
                "app_name": "x",
                "app_dir": "app",
                "board": {},
                "placement": {},
                "model": {},
                "cmx_version": "0",
                "summary": "",
            }
        )
    )
    (template / "cmx_template.yaml").write_text("shared: []\nuser_owned: []\n")
    (template / "{{cookiecutter.app_dir}}" / "summary.txt").write_text(
        "{{ cookiecutter.app_name }} on {{ cookiecutter.board.id }}: {{ cookiecutter.summary }}\n"
    )

    class SummaryApp(AppKind):
        name = "summary"

        def template_dir(self):
            return template

        def context(self, ctx, report, placement, board):
            return {"summary": f"{len(report.instructions)} instructions, method pool {placement.method_pool_bytes} B"}

        def build(self, app, build_dir=None, clean=False, jobs=None, defines=None, diagnostic=None):
            out = app.path / "build" / "summary.txt"
            out.parent.mkdir(exist_ok=True)
            out.write_text((app.path / "summary.txt").read_text().upper())
            return Built(out, [f"built      {out}"])

    register(SummaryApp())
    try:
        app = tmp_path / "app"
        digits = ROOT / "samples" / "digits" / "model.py:DigitsCNN"
        assert run_cli("create", digits, "--board", "mps3-an547", "--rtos", "summary", "-o", app) == 0
        assert (app / "summary.txt").read_text() == "digits on mps3-an547: 3 instructions, method pool 656 B\n"
        assert (app / "model" / "model.pte").is_file() and AppFolder(app).kind == "summary"
        assert run_cli("regen", app) == 0
        capsys.readouterr()
        assert run_cli("build", app) == 0
        assert "built" in capsys.readouterr().out and (app / "build" / "summary.txt").read_text().startswith("DIGITS")
    finally:
        APP_KINDS.pop("summary")


def test_template_outputs_are_data_not_file_names():
    """Files made per item or under a condition are listed in cmx_template.yaml (for_each / when):
    no Jinja logic in template file names, so a Zephyr app is not limited to two board targets."""
    names = [p.name for p in (ROOT / "templates").rglob("*") if "{%" in p.name]
    assert names == [], names


def test_outputs_render_once_per_item_and_under_their_condition(tmp_path):
    from cmx_gen.app.render import TemplateOutput, _render_outputs

    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "t.j2").write_text("{{ t.name }} of {{ cookiecutter.app_name }}\n")
    outputs = [
        TemplateOutput.model_validate(
            {
                "template": "t.j2",
                "to": "boards/{{ t.name }}.conf",
                "for_each": "cookiecutter.targets",
                "as": "t",
                "when": "t.keep",
            }
        )
    ]
    cookie = {
        "app_name": "demo",
        "targets": [{"name": "a", "keep": True}, {"name": "b", "keep": False}, {"name": "c", "keep": True}],
    }
    stage = tmp_path / "stage"
    _render_outputs(tmp_path, outputs, cookie, stage)
    assert sorted(p.name for p in (stage / "boards").iterdir()) == ["a.conf", "c.conf"]
    assert (stage / "boards" / "c.conf").read_text() == "c of demo\n"


def test_the_runner_prints_the_result_line_defined_in_data():
    """data/result_line.yaml is the one definition: the C runner prints its fields in its order, the
    platforms name their counter with one of its keys, the diagnostic tags are its, and what cmx-gen
    parses and gives Twister is made from it."""
    import re

    from cmx_gen.device import result_line
    from cmx_gen.device.runners.base import parse_result_line

    runner = (ROOT / "templates/common/runner/cmx_runner.cpp").read_text()
    prefix, spec = result_line.prefix(), result_line.spec()
    verdict = re.search(r'line\.s\(pass && pools_ok \? "([^"]+)" : "([^"]+)"\)\.s\(" ([a-z_]+)="\)', runner)
    assert verdict and verdict.groups() == (f"{prefix}PASS", f"{prefix}FAIL", spec["fields"][0]["key"])
    pools = runner[runner.index("void print_pools(") : runner.index("void print_model(")]
    printed = re.findall(r'\.s\(" ([a-z_]+)="\)|(cmx_platform_counter_name)', pools)
    keys = ["<counter>" if counter else key for key, counter in printed]
    # every field after the verdict's in print_pools, but those printed after them: a bundle's
    # tolerance, the slot a model in slots ran from, then in an app of several models the model's name
    # or the summary's model count
    after = ["tol", "slot", "model", "models"]
    expected = [
        "<counter>" if "keys" in field else field["key"]
        for field in spec["fields"][1:]
        if field.get("key") not in after
    ]
    assert keys == expected and [field.get("key") for field in spec["fields"][-4:]] == after
    assert (
        'line.s(" tol=")' in runner
        and 'line.s(" slot=")' in runner
        and '.s(" model=")' in runner
        and 'line.s(" models=")' in runner
    )
    assert f'"{prefix}RAN reference=none"' in runner and "RAN" in spec["verdicts"]
    counter_keys = next(field["keys"] for field in spec["fields"] if "keys" in field)
    for platform in [*(ROOT / "templates").rglob("platform.c"), *(ROOT / "templates").rglob("cmx_platform_zephyr.c")]:
        body = platform.read_text().split("cmx_platform_counter_name", 1)[1].split("}", 1)[0]
        assert set(re.findall(r'"([a-z]+)"', body)) <= set(counter_keys), platform
    tags = set(re.findall(r'print_hex\("([a-z_]+)"', runner)) | set(re.findall(rf'"{prefix}([a-z_]+) "', runner))
    assert tags == set(spec["diagnostics"]), tags
    # what cmx-gen reads and what Twister matches agree with the examples in the file
    line = result_line.example("pass")
    assert parse_result_line(line).fields.keys() <= set(result_line.keys())
    assert re.search(result_line.twister_record(), line) and re.search(result_line.twister_pass(), line)
    assert not re.search(result_line.twister_pass(), result_line.example("fail"))
    assert re.search(result_line.twister_diagnostic("prof"), result_line.example("prof")[0])


def test_lowering_is_an_ordered_list_of_small_steps():
    """The order of lowering is data (lowering.STEPS, as upstream's pass_list), one module a step,
    each timed in the report under its name."""
    from cmx_gen.lower.lowering import STEPS

    names = [step.name for step in STEPS]
    assert len(set(names)) == len(names)
    assert (
        names.index("quantize") < names.index("cortex_m_passes") < names.index("reference") < names.index("serialize")
    )
    for path in (PACKAGE / "lower" / "steps").glob("*.py"):
        assert len(path.read_text().splitlines()) < 80, path.name


def test_tests_mirror_the_source_folders():
    """tests/<folder>/ tests cmx_gen/<folder>/: a newcomer finds a concern's tests where its code is."""
    folders = {p.parent.relative_to(ROOT / "tests") for p in (ROOT / "tests").rglob("test_*.py")} - {Path(".")}
    assert sorted(str(f) for f in folders if not (PACKAGE / f).is_dir()) == []


def test_nothing_outside_the_kinds_branches_on_a_kind():
    """A command asks the app's kind (image_is_file, console, host_samples, runner, flasher, checks),
    never compares its name."""
    import re

    branch = re.compile(r"""[!=]=\s*["'](zephyr|baremetal)["']|["'](zephyr|baremetal)["']\s*[!=]=""")
    found = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in PACKAGE.rglob("*.py")
        if "kinds" not in p.parts
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if branch.search(line)
    ]
    assert found == []


def test_no_module_is_over_400_lines():
    """A module that outgrows 400 lines holds more than one concern: split it (issue 35)."""
    long = {
        str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py") if (n := len(p.read_text().splitlines())) > 400
    }
    assert long == {}, f"split these modules: {long}"


def test_commands_are_thin():
    """A command parses its arguments, calls one library function and prints (issue 35): no command
    module over 120 lines; the work is in pipeline/ and below."""
    long = {
        p.name: n for p in (PACKAGE / "cli" / "commands").glob("*.py") if (n := len(p.read_text().splitlines())) > 120
    }
    assert long == {}, f"move the work of these commands into pipeline/: {long}"


def _long_functions(text: str, limit: int = 60) -> dict[str, int]:
    """The functions of a module over `limit` lines, but an argument parser's (a list of add_argument
    calls reads as one step however long it is)."""
    found = {}
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None:
            lines = node.end_lineno - node.lineno + 1
            if lines > limit and "add_argument" not in ast.unparse(node):
                found[node.name] = lines
    return found


def test_no_function_is_over_60_lines():
    """A function that outgrows 60 lines does several things: split it into named steps (issue 55)."""
    long = {
        f"{p.relative_to(PACKAGE)}:{name}": n
        for p in PACKAGE.rglob("*.py")
        for name, n in _long_functions(p.read_text()).items()
    }
    assert long == {}, f"split these functions: {long}"


def test_the_function_length_check_finds_a_long_function():
    body = "".join(f"    x{i} = {i}\n" for i in range(60))
    assert _long_functions(f"def long():\n{body}") == {"long": 61}
    assert _long_functions(f"def parser(p):\n{body}    p.add_argument('--x')\n") == {}
    assert _long_functions(f"def short():\n{body[: body.index('    x58')]}    pass\n") == {}


def test_records_declare_their_keys():
    """At most 25 `dict[str, Any]` in cmx_gen (issue 55: 57 before): a record with known keys is a
    dataclass or a TypedDict, a field with a closed set of values a Literal. What stays is parsed
    TOML/YAML/JSON at the boundary, and pydantic's dumps; do not add to it."""
    found = {
        str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py") if (n := p.read_text().count("dict[str, Any]"))
    }
    assert sum(found.values()) <= 25, f"declare these records' keys: {found}"
