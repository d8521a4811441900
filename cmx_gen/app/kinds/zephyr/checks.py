"""Offline checks of a generated Zephyr app: everything we can verify without a Zephyr tree.

Zephyr itself is not fetched (too large), so each check uses the tool Zephyr uses, fed with
reduced inputs kept as data (cmx_gen/data/zephyr/):

- twister:     sample.yaml against Twister's pykwalify schema (+ the rules Twister adds on top)
- west:        west.yml with west.manifest.validate (+ pinned revisions, module allow-list)
- kconfig:     prj.conf + boards/<board>.conf loaded by kconfiglib into a stub Kconfig tree made
               of the curated upstream symbol definitions, the board's SoC selects and the
               app's own Kconfig; undefined symbols and values that do not stick are errors,
               as in Zephyr's build
- devicetree:  each boards/<board>.overlay preprocessed and parsed with dtlib on top of a memory
               stub of the board's DTS, so &labels resolve; memory-region nodes are checked and
               every region the linker snippets name must exist
- compile:     the shared runner and the model sources through arm-none-eabi-g++/gcc
               (-fsyntax-only, the .S assembled) against the ExecuTorch headers of the wheel

What the checks cannot see is listed in `NOT_CHECKED` and printed by `cmx-gen validate`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import yaml
from devicetree import dtlib

from cmx_gen.device import result_line
from cmx_gen.app.kinds.zephyr.context import ZEPHYR_DATA
from cmx_gen.fit.boards import zephyr_boards
from cmx_gen.common.paths import ROOT
from cmx_gen.common.targets import cores

NOT_CHECKED = [
    "Zephyr's CMake configure and build (needs a Zephyr tree): CMakeLists.txt and the linker "
    "snippets are only checked for the memory regions they name",
    "the Zephyr platform layer and src/main.c (need Zephyr's headers; the shared runner is compiled)",
    "Kconfig symbols beyond the curated list in cmx_gen/data/zephyr/kconfig.yaml (reported as undefined)",
    "devicetree bindings (edtlib): properties are parsed, not checked against binding schemas",
]


@dataclass
class Finding:
    file: str
    problem: str

    def __str__(self) -> str:
        return f"{self.file}: {self.problem}"


@dataclass
class CheckResult:
    name: str
    status: str = "pass"  # pass | fail | skipped
    findings: list[Finding] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)  # files looked at
    note: str = ""

    def fail(self, file: str, problem: str) -> None:
        self.status = "fail"
        self.findings.append(Finding(file, problem))


def _rel(app: Path, path: Path) -> str:
    try:
        return str(path.relative_to(app))
    except ValueError:
        return str(path)


# --------------------------------------------------------------------------- twister

def twister_schema_path() -> Path | None:
    """Twister's schema: $CMX_TWISTER_SCHEMA, the one in $ZEPHYR_BASE, or ../shared/zephyr/."""
    candidates = []
    if os.environ.get("CMX_TWISTER_SCHEMA"):
        candidates.append(Path(os.environ["CMX_TWISTER_SCHEMA"]))
    if os.environ.get("ZEPHYR_BASE"):
        candidates.append(Path(os.environ["ZEPHYR_BASE"]) / "scripts/schemas/twister/testsuite-schema.yaml")
    candidates.append(ROOT.parent / "shared/zephyr/twister-testsuite-schema.yaml")
    return next((p for p in candidates if p.is_file()), None)


def check_twister(app: Path) -> CheckResult:
    result = CheckResult("twister")
    path = app / "sample.yaml"
    name = _rel(app, path)
    result.checked.append(name)
    if not path.is_file():
        result.fail(name, "missing (Twister finds tests through sample.yaml / testcase.yaml)")
        return result
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        result.fail(name, f"not valid YAML: {exc}")
        return result
    schema = twister_schema_path()
    if schema is None:
        result.status = "skipped"
        result.note = ("Twister schema not found (set ZEPHYR_BASE or CMX_TWISTER_SCHEMA); "
                       "only cmx-gen's own rules were checked")
    else:
        import logging

        from pykwalify.core import Core
        from pykwalify.errors import PyKwalifyException

        logging.getLogger("pykwalify").setLevel(logging.CRITICAL)
        try:
            Core(source_data=data, schema_data=yaml.safe_load(schema.read_text())).validate(raise_exception=True)
        except PyKwalifyException as exc:
            msg = " ".join(str(getattr(exc, "msg", exc)).split())
            result.fail(name, f"does not match Twister's schema: {msg}")
    if not isinstance(data, dict):
        return result
    tests = data.get("tests")
    if not isinstance(tests, dict) or not tests:
        result.fail(name, "no scenarios under tests: (Twister would not build or run anything)")
        return result
    common = data.get("common") or {}
    models = _model_names(app)
    for scenario, spec in tests.items():
        spec = {**common, **(spec or {}), **_merged_lists(common, spec or {})}
        if "." not in str(scenario):
            result.fail(name, f"scenario '{scenario}' needs a dotted name like <area>.<name> (Twister rule)")
        allow = spec.get("platform_allow") or []
        allow = allow.split() if isinstance(allow, str) else allow
        integ = spec.get("integration_platforms") or []
        for plat in integ:
            if plat not in allow:
                result.fail(name, f"scenario '{scenario}': integration platform {plat} is not in platform_allow")
        if spec.get("harness") == "console":
            cfg = spec.get("harness_config") or {}
            regex = cfg.get("regex") or []
            if not regex:
                result.fail(name, f"scenario '{scenario}': console harness without harness_config.regex")
            patterns = []
            for rx in regex:
                try:
                    patterns.append(re.compile(rx))
                except re.error as exc:
                    result.fail(name, f"scenario '{scenario}': regex {rx!r} does not compile: {exc}")
            if len(patterns) == len(regex) and regex:
                extra = " ".join(str(line) for line in spec.get("extra_configs") or [])
                passing, failing = console(result_line.example("pass"), extra, models), console(result_line.example("fail"), extra, models)
                if not _harness_passes(cfg, patterns, passing):
                    missing = next((p.pattern for p in patterns if not any(p.search(ln) for ln in passing)), regex[-1])
                    result.fail(name, f"scenario '{scenario}': regex {missing!r} does not match the cmx-gen PASS line "
                                      "or what follows it in this scenario's image")
                if _harness_passes(cfg, patterns, failing):
                    result.fail(name, f"scenario '{scenario}': regex {regex[0]!r} also matches a FAIL line "
                                      "(the harness would pass a failing run)")
            for rx in (cfg.get("record") or {}).get("regex") or []:
                try:
                    if not re.compile(rx).search(result_line.example("pass")):
                        result.fail(name, f"scenario '{scenario}': record regex {rx!r} does not match the result line")
                except re.error as exc:
                    result.fail(name, f"scenario '{scenario}': record regex {rx!r} does not compile: {exc}")
    return result


def _model_names(app: Path) -> list[str]:
    """An app of several models: their names, as the app folder knows them; empty for one."""
    from cmx_gen.app.folder import AppFolder

    return AppFolder(app).model_names()


def _merged_lists(common: dict, spec: dict) -> dict:
    """Twister appends a scenario's lists (extra_configs, ...) to common's instead of replacing them."""
    return {k: [*common[k], *v] for k, v in spec.items() if isinstance(v, list) and isinstance(common.get(k), list)}


def console(line: str, extra_configs: str, models: list[str] | None = None) -> list[str]:
    """What an image prints (data/result_line.yaml examples): the check's result line (an app of
    several models: each model's, then the summary), then the profile's rows (CONFIG_CMX_PROFILE=y);
    the application image (no CONFIG_CMX_CHECK=y) prints its calls and its done line when it runs
    through, the FAIL line when it stops on an error."""
    if "CONFIG_CMX_CHECK=y" not in extra_configs:
        return [result_line.example("call"), result_line.example("done")] if line == result_line.example("pass") else [line]
    if models and line == result_line.example("pass"):
        return result_line.several_example(models)
    if models:  # the first model fails: its line, the others', a failing summary
        return [f"{line} model={models[0]}"] + result_line.several_example(models)[1:-1] + [f"{line} models={len(models)}"]
    lines = [line]
    if "CONFIG_CMX_PROFILE=y" in extra_configs:
        lines += result_line.example("prof")
    return lines


def _harness_passes(cfg: dict, patterns: list[re.Pattern], lines: list[str]) -> bool:
    """Twister's console harness: one_line passes on its regex; multi_line on all, in order if `ordered`."""
    if cfg.get("type", "one_line") == "one_line":
        return any(patterns[0].search(line) for line in lines)
    at = 0
    for pattern in patterns:
        hits = [i for i, line in enumerate(lines) if pattern.search(line) and (i >= at or not cfg.get("ordered"))]
        if not hits:
            return False
        at = hits[0] + 1
    return True


# --------------------------------------------------------------------------- west

def check_west(app: Path) -> CheckResult:
    from west.manifest import ImportFlag, MalformedManifest, Manifest, validate

    result = CheckResult("west")
    path = app / "west.yml"
    name = _rel(app, path)
    result.checked.append(name)
    if not path.is_file():
        result.fail(name, "missing")
        return result
    text = path.read_text()
    try:
        data = validate(text)
        # Load it too (imports not followed: zephyr is not cloned here): resolves remotes, paths.
        Manifest.from_data(text, import_flags=ImportFlag.IGNORE)
    except (MalformedManifest, yaml.YAMLError) as exc:
        detail = exc.args[-1] if isinstance(exc, MalformedManifest) and exc.args else exc
        result.fail(name, f"west rejects the manifest: {' '.join(str(detail).split())}")
        return result
    projects = {p.get("name"): p for p in data["manifest"].get("projects", [])}
    zephyr = projects.get("zephyr")
    if not zephyr:
        result.fail(name, "no 'zephyr' project")
    else:
        if str(zephyr.get("revision", "main")) in ("main", "master", "HEAD"):
            result.fail(name, "zephyr is not pinned to a release (revision is a branch)")
        imp = zephyr.get("import")
        if not isinstance(imp, dict) or not imp.get("name-allowlist"):
            result.fail(name, "zephyr import has no name-allowlist: west update would fetch every module")
        else:
            for needed in ("cmsis_6", "cmsis-nn"):
                if needed not in imp["name-allowlist"]:
                    result.fail(name, f"module '{needed}' missing from the zephyr name-allowlist")
    et = projects.get("executorch")
    if not et:
        result.fail(name, "no 'executorch' project (the ExecuTorch Zephyr module)")
    elif et.get("path") != "modules/lib/executorch":
        result.fail(name, f"executorch path is {et.get('path')!r}, expected modules/lib/executorch")
    return result


# --------------------------------------------------------------------------- kconfig

def _board_files(app: Path, suffix: str) -> list[Path]:
    return sorted((app / "boards").glob(f"*{suffix}")) if (app / "boards").is_dir() else []


def _stub_tree(root: Path, soc_selects: list[str]) -> None:
    """Write Kconfig.zephyr (+ the curated upstream files) under `root`."""
    data = yaml.safe_load((ZEPHYR_DATA / "kconfig.yaml").read_text())
    lines = ['# cmx-gen stub of Zephyr\'s Kconfig tree: only the symbols cmx-gen uses\n']
    for i, entry in enumerate(data["files"]):
        repo, _, upstream = entry["source"].partition(":")
        rel = Path("stub") / repo / upstream
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"# reduced from {entry['source']}\n{entry['kconfig']}")
        lines.append(f'source "{rel.as_posix()}"\n')
    selects = "".join(f"\tselect {s}\n" for s in soc_selects)
    lines.append(f"\n# what the board's SoC Kconfig selects\nconfig CMX_STUB_SOC\n\tdef_bool y\n{selects}")
    (root / "Kconfig.zephyr").write_text("".join(lines))


def _kconfig_one(app: Path, conf_files: list[Path], soc_selects: list[str], result: CheckResult,
                 autoconf: Path | None = None) -> None:
    import kconfiglib

    with tempfile.TemporaryDirectory(prefix="cmx-kconfig-") as tmp:
        root = Path(tmp)
        _stub_tree(root, soc_selects)
        old = os.environ.get("srctree")
        os.environ["srctree"] = str(root)
        try:
            try:
                kconf = kconfiglib.Kconfig(str(app / "Kconfig"), warn_to_stderr=False)
            except kconfiglib.KconfigError as exc:
                result.fail("Kconfig", f"does not parse: {' '.join(str(exc).split())}")
                return
            kconf.warn_assign_undef = True
            kconf.warn_assign_override = False
            kconf.warn_assign_redun = False
            for i, conf in enumerate(conf_files):
                kconf.load_config(str(conf), replace=(i == 0))
            if autoconf is not None:
                kconf.write_autoconf(str(autoconf))
        finally:
            if old is None:
                os.environ.pop("srctree", None)
            else:
                os.environ["srctree"] = old
        for warning in kconf.warnings:
            text = " ".join(warning.split())
            m = re.search(r"(\S+\.conf):(\d+)", text)
            where = _rel(app, Path(m.group(1))) + f":{m.group(2)}" if m else "Kconfig"
            if "undefined symbol" in text:
                sym = re.search(r"undefined symbol (\w+)", text)
                result.fail(where, f"CONFIG_{sym.group(1) if sym else '?'} is undefined: not a symbol of "
                                   "Zephyr, ExecuTorch or the app Kconfig that cmx-gen knows (Zephyr aborts "
                                   "on undefined symbols; if it is a real Zephyr symbol, add its definition "
                                   "to cmx_gen/data/zephyr/kconfig.yaml)")
            else:
                result.fail(where, f"Kconfig warning (Zephyr aborts on any): {text}")
        # Zephyr's kconfig.py: a symbol assigned in a .conf file must have a prompt, and the
        # value assigned must be the value it gets.
        for sym in kconf.unique_defined_syms:
            if sym.user_value is None or sym.choice:
                continue
            if not any(node.prompt for node in sym.nodes):
                src = ", ".join(_rel(app, c) for c in conf_files)
                result.fail(src, f"CONFIG_{sym.name} is assigned but has no prompt: it is set by the SoC/board "
                                 "or selected by other symbols, not by .conf files (Zephyr aborts on this)")
                continue
            user = sym.user_value
            if sym.type in (kconfiglib.BOOL, kconfiglib.TRISTATE):
                user = kconfiglib.TRI_TO_STR[user]
            if str(user) != sym.str_value:
                deps = kconfiglib.expr_str(sym.direct_dep)
                src = ", ".join(_rel(app, c) for c in conf_files)
                result.fail(src, f"CONFIG_{sym.name} was assigned {user!r} but gets {sym.str_value!r}: "
                                 f"unsatisfied dependencies ({deps}) (Zephyr aborts on this)")
        for choice in kconf.unique_choices:
            if choice.user_selection is not None and choice.selection is not choice.user_selection:
                result.fail(", ".join(_rel(app, c) for c in conf_files),
                            f"CONFIG_{choice.user_selection.name} was selected but the choice "
                            f"gives {choice.selection.name if choice.selection else 'nothing'}")


def write_autoconf(app: Path, board_file_name: str, out: Path) -> CheckResult:
    """autoconf.h (CONFIG_* macros) of the app for one board, from the stub Kconfig tree: what
    Zephyr's -imacros gives every source. For compiling app sources outside Zephyr."""
    result = CheckResult("kconfig")
    info = zephyr_boards().get(board_file_name) or {}
    confs = [app / "prj.conf"] + [c for c in _board_files(app, ".conf") if c.stem == board_file_name]
    _kconfig_one(app, confs, list(info.get("soc_selects", [])), result, autoconf=out)
    return result


def check_kconfig(app: Path) -> CheckResult:
    result = CheckResult("kconfig")
    prj = app / "prj.conf"
    for path in (prj, app / "Kconfig"):
        result.checked.append(_rel(app, path))
        if not path.is_file():
            result.fail(_rel(app, path), "missing")
    if result.status == "fail":
        return result
    if not (app / "Kconfig").read_text().lstrip().startswith(("source \"Kconfig.zephyr\"", "#")) or \
            'source "Kconfig.zephyr"' not in (app / "Kconfig").read_text():
        result.fail("Kconfig", 'an app Kconfig must source "Kconfig.zephyr" (else Zephyr\'s symbols vanish)')
    boards = zephyr_boards()
    confs = _board_files(app, ".conf")
    with tempfile.TemporaryDirectory(prefix="cmx-extra-") as tmp:
        # Each Twister scenario's extra_configs (e.g. CONFIG_CMX_PROFILE=y) is a configuration of
        # its own: checked on top of prj.conf like the default one.
        variants: list[list[Path]] = [[]]
        for name, lines in _scenario_configs(app).items():
            extra = Path(tmp) / f"{name}.conf"
            extra.write_text("\n".join(lines) + "\n")
            variants.append([extra])
            result.checked.append(f"sample.yaml {name} extra_configs")
        for variant in variants:
            if not confs:
                _kconfig_one(app, [prj, *variant], [], result)
            for conf in confs:
                if not variant:
                    result.checked.append(_rel(app, conf))
                info = boards.get(conf.stem)
                if not isinstance(info, dict):
                    if not variant:
                        result.fail(_rel(app, conf), f"no Zephyr board data for '{conf.stem}' in "
                                    "cmx_gen/data/zephyr/boards.yaml (cannot tell which Kconfig its SoC allows)")
                    continue
                _kconfig_one(app, [prj, conf, *variant], list(info.get("soc_selects", [])), result)
    return result


def _scenario_configs(app: Path) -> dict[str, list[str]]:
    """{scenario: extra_configs lines} of sample.yaml's tests that set any."""
    try:
        tests = (yaml.safe_load((app / "sample.yaml").read_text()) or {}).get("tests") or {}
    except (OSError, yaml.YAMLError):
        return {}  # the twister check reports an unreadable sample.yaml
    return {name: [str(line) for line in spec["extra_configs"]]
            for name, spec in tests.items() if isinstance(spec, dict) and spec.get("extra_configs")}


# --------------------------------------------------------------------------- devicetree

_LINK_IN = re.compile(r"GROUP_(?:DATA_|NOLOAD_)?LINK_IN\(\s*(\w+)(?:\s*,\s*(\w+))?\s*\)")


def _preprocess(sources: list[Path], include: list[Path], out: Path) -> str | None:
    """cpp over the DTS + overlay, like Zephyr's dts.cmake; returns an error text or None."""
    cpp = shutil.which("arm-none-eabi-cpp") or shutil.which("cpp")
    if not cpp:
        return "no C preprocessor (arm-none-eabi-cpp or cpp) to run over the devicetree"
    combined = out.with_suffix(".dts.in")
    combined.write_text("".join(f'#include "{s}"\n' for s in sources))
    cmd = [cpp, "-x", "assembler-with-cpp", "-nostdinc", "-undef", "-D__DTS__", "-E",
           *[f"-I{p}" for p in include], str(combined), "-o", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    return proc.stderr.strip() if proc.returncode else None


def check_devicetree(app: Path) -> CheckResult:
    result = CheckResult("devicetree")
    boards = zephyr_boards()
    overlays = _board_files(app, ".overlay")
    region_names: set[str] = set()
    for overlay in overlays:
        name = _rel(app, overlay)
        result.checked.append(name)
        info = boards.get(overlay.stem)
        if not isinstance(info, dict):
            result.fail(name, f"no devicetree stub for board '{overlay.stem}' (cmx_gen/data/zephyr/boards.yaml)")
            continue
        stub = ZEPHYR_DATA / "dts" / info["dts"]
        with tempfile.TemporaryDirectory(prefix="cmx-dts-") as tmp:
            pre = Path(tmp) / "zephyr.dts.pre"
            err = _preprocess([stub, overlay.resolve()], [ZEPHYR_DATA / "dts" / "include", overlay.parent], pre)
            if err:
                result.fail(name, f"preprocessing failed: {' '.join(err.split())}")
                continue
            try:
                dt = dtlib.DT(str(pre))
            except dtlib.DTError as exc:
                msg = " ".join(str(exc).split()).replace(str(overlay.resolve()), name)
                result.fail(name, f"devicetree error on top of the {info['target']} board DTS: {msg}")
                continue
        _check_memory_nodes(dt, name, result, region_names)
    # regions named by the linker snippets must exist (board DTS stubs + overlays)
    for info in (boards.get(c.stem) for c in _board_files(app, ".conf")):
        if not isinstance(info, dict):
            continue
        if not any(o.stem == info["target"].replace("/", "_") for o in overlays):
            with tempfile.TemporaryDirectory(prefix="cmx-dts-") as tmp:
                pre = Path(tmp) / "zephyr.dts.pre"
                if _preprocess([ZEPHYR_DATA / "dts" / info["dts"]], [ZEPHYR_DATA / "dts" / "include"], pre):
                    continue
                try:
                    dt = dtlib.DT(str(pre))
                except dtlib.DTError:
                    continue
            _check_memory_nodes(dt, info["dts"], CheckResult("scratch"), region_names)
    for snippet in sorted((app / "linker").glob("*.ld")) if (app / "linker").is_dir() else []:
        name = _rel(app, snippet)
        result.checked.append(name)
        for m in _LINK_IN.finditer(snippet.read_text()):
            for region in filter(None, m.groups()):
                if region in ("RAMABLE_REGION", "ROMABLE_REGION"):
                    continue
                if region not in region_names:
                    result.fail(name, f"memory region {region} is not defined by the board devicetree "
                                      "or the app overlay (no zephyr,memory-region node of that name)")
    return result


def _check_memory_nodes(dt, name: str, result: CheckResult, region_names: set[str]) -> None:
    regions: list[tuple[str, int, int, str]] = []
    for node in dt.node_iter():
        compat = node.props.get("compatible")
        compats = compat.to_strings() if compat else []
        if "zephyr,memory-region" not in compats:
            continue
        prop = node.props.get("zephyr,memory-region")
        if prop is None:
            result.fail(name, f"{node.path}: compatible zephyr,memory-region without a zephyr,memory-region name")
            continue
        region = prop.to_string()
        if "reg" not in node.props:
            result.fail(name, f"{node.path}: memory region {region} has no reg")
            continue
        cells = node.props["reg"].to_nums()
        if len(cells) < 2 or len(cells) % 2:
            result.fail(name, f"{node.path}: reg of memory region {region} must be <address size> pairs "
                              f"(#address-cells = #size-cells = 1), got {len(cells)} cell(s)")
            continue
        base, size = cells[0], cells[1]
        region_names.add(region)
        regions.append((region, base, size, node.path))
    seen: dict[str, str] = {}
    for region, base, size, path in regions:
        if region in seen:
            result.fail(name, f"{path}: memory region name {region} is also used by {seen[region]}")
        seen[region] = path
    for i, (r1, b1, s1, p1) in enumerate(regions):
        for r2, b2, s2, p2 in regions[i + 1:]:
            if b1 < b2 + s2 and b2 < b1 + s1:
                result.fail(name, f"{p1} ({r1} {b1:#x}+{s1:#x}) overlaps {p2} ({r2} {b2:#x}+{s2:#x})")
    chosen = dt.get_node("/chosen") if dt.has_node("/chosen") else None
    if chosen is not None:
        for key in ("zephyr,flash", "zephyr,sram"):
            if key in chosen.props:
                try:
                    chosen.props[key].to_path()
                except dtlib.DTError as exc:
                    result.fail(name, f"chosen {key}: {exc}")


# --------------------------------------------------------------------------- compile


def _wheel_include() -> Path | None:
    import importlib.util

    spec = importlib.util.find_spec("executorch")
    for loc in (spec.submodule_search_locations or []) if spec else []:
        inc = Path(loc) / "include"
        if (inc / "executorch" / "runtime").is_dir():
            return inc
    return None


def _ops_cmake_value(app: Path, var: str) -> str | None:
    path = app / "model" / "cmx_ops.cmake"
    if not path.is_file():
        return None
    m = re.search(rf'set\({var}\s+"([^"]*)"\)', path.read_text())
    return m.group(1) if m else None


def check_compile(app: Path) -> CheckResult:
    result = CheckResult("compile")
    gxx, gcc = shutil.which("arm-none-eabi-g++"), shutil.which("arm-none-eabi-gcc")
    inc = _wheel_include()
    if not gxx or not gcc:
        result.status = "skipped"
        result.note = "arm-none-eabi-gcc/g++ not on PATH"
        return result
    if inc is None:
        result.status = "skipped"
        result.note = "the executorch wheel's include/ folder was not found"
        return result
    cpu = _ops_cmake_value(app, "CMX_TARGET_CPU") or "cortex-m55"
    fallback_note = ""
    stand_in = cores().get(cpu, {}).get("gcc_stand_in")
    if stand_in and not _gcc_knows_cpu(gcc, cpu):
        fallback_note = f"; {gcc} does not know -mcpu={cpu}, checked with -mcpu={stand_in} (same ISA)"
        cpu = stand_in
    arch = [f"-mcpu={cpu}", "-mthumb"]
    runner_dir = app / "cmx" / "runner"
    api_dir, app_dir = app / "cmx" / "api", app / "cmx" / "app"
    model_dir = app / "model"
    defines = ["-DC10_USING_CUSTOM_GENERATED_MACROS", "-DET_LOG_ENABLED=1"]
    includes = [f"-I{app / 'src'}", f"-I{api_dir}", f"-I{app_dir}", f"-I{runner_dir}", f"-I{model_dir}", f"-I{inc}",
                f"-I{inc / 'executorch/runtime/core/portable_type/c10'}"]
    # Kconfig pool sizes as Zephyr's autoconf.h gives them to src/cmx_model.h
    kconf = (app / "Kconfig").read_text() if (app / "Kconfig").is_file() else ""
    pools = []
    for sym in ("EXECUTORCH_METHOD_ALLOCATOR_POOL_SIZE", "EXECUTORCH_TEMP_ALLOCATOR_POOL_SIZE"):
        m = re.search(rf"config {sym}\b.*?default (\d+)", kconf, re.S)
        if m:
            pools.append(f"-DCONFIG_{sym}={m.group(1)}")
    arena = app / "linker" / "cmx_arena.ld"
    if arena.is_file():  # CMakeLists.txt passes the pools' section name to the runner
        m = re.search(r"\*\((\.[\w.]+)\)", arena.read_text())
        pools.append(f'-DCMX_ARENA_SECTION="{m.group(1) if m else ".cmx_arena"}"')
    jobs: list[tuple[str, list[str]]] = []  # (what is checked, command)
    # The runner as the default image, and as the profile and trace images (CONFIG_CMX_PROFILE /
    # CONFIG_CMX_TRACE, which compile the EventTracer hooks in).
    variants = {"": [], " (CONFIG_CMX_PROFILE)": ["-DCMX_PROFILE=1", "-DET_EVENT_TRACER_ENABLED"],
                " (CONFIG_CMX_TRACE)": ["-DCMX_TRACE=1", "-DET_EVENT_TRACER_ENABLED"]}
    names = _model_names(app)
    if names:  # an app of several models has no profile or trace image; each model has its folder
        variants = {"": []}
    model_dirs = [model_dir / name for name in names] or [model_dir]
    for src in sorted(runner_dir.glob("*.cpp")) if runner_dir.is_dir() else []:
        for label, variant in variants.items():
            jobs.append((_rel(app, src) + label, [gxx, "-fsyntax-only", "-std=c++17", "-fno-exceptions", "-fno-rtti", "-Werror",
                               *arch, *defines, *variant, *pools, *includes, str(src)]))
    for src in sorted(api_dir.glob("*.cpp")) if api_dir.is_dir() else []:  # the model API, each model's handle
        for folder in model_dirs if src.name == "cmx_model_instance.cpp" and names else [None]:
            first = [f"-I{folder}"] if folder else []
            label = _rel(app, src) + (f" ({folder.name})" if folder else "")
            jobs.append((label, [gxx, "-fsyntax-only", "-std=c++17", "-fno-exceptions", "-fno-rtti", "-Werror",
                                 *arch, *defines, *(pools if not folder else []), *first, *includes, str(src)]))
    # The application image: the user's main and its helpers are plain C over cmx.h (no Zephyr header).
    iterations = re.search(r"config CMX_APP_ITERATIONS\b.*?default (\d+)", kconf, re.S)
    for src in [app / "src" / "main.c", app_dir / "cmx_app.c"]:
        if src.is_file():
            jobs.append((_rel(app, src), [gcc, "-fsyntax-only", "-std=c11", "-Wall", "-Werror", *arch,
                                          f"-DCONFIG_CMX_APP_ITERATIONS={iterations.group(1) if iterations else 10}",
                                          f"-I{api_dir}", f"-I{app_dir}", f"-I{runner_dir}", f"-I{model_dir}", str(src)]))
    if (model_dir / "cmx_kernels.cpp").is_file():
        jobs.append((_rel(app, model_dir / "cmx_kernels.cpp"),
                     [gxx, "-fsyntax-only", "-std=c++17", "-fno-exceptions", "-fno-rtti", *arch, *defines,
                      *includes, str(model_dir / "cmx_kernels.cpp")]))
    c_sources = [folder / "cmx_model_io.c" for folder in model_dirs] + [model_dir / "cmx_shared_pools.c"]
    for src in (src for src in c_sources if src.is_file()):
        jobs.append((_rel(app, src), [gcc, "-fsyntax-only", "-std=c11", "-Werror", *arch, f"-I{src.parent}",
                                      f"-I{model_dir}", f"-I{api_dir}", str(src)]))
    with tempfile.TemporaryDirectory(prefix="cmx-cc-") as tmp:
        for folder in (folder for folder in model_dirs if (folder / "model_pte.S").is_file()):
            jobs.append((_rel(app, folder / "model_pte.S"),
                         [gcc, "-c", *arch, f"-I{folder}", str(folder / "model_pte.S"),
                          "-o", str(Path(tmp) / f"{folder.name}_model_pte.o")]))
        if not jobs:
            result.fail("cmx/runner", "no runner or model sources to compile (was the app rendered completely?)")
        for what, cmd in jobs:
            result.checked.append(what)
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode:
                first = next((ln for ln in proc.stderr.splitlines() if "error" in ln), proc.stderr.strip()[:300])
                result.fail(what, f"does not compile: {first.replace(str(app) + '/', '')}")
    result.note = "not compiled: the Zephyr platform layer (needs Zephyr headers)" + fallback_note
    return result


def _gcc_knows_cpu(gcc: str, cpu: str) -> bool:
    proc = subprocess.run([gcc, f"-mcpu={cpu}", "-mthumb", "-E", "-x", "c", "-", "-o", os.devnull],
                          input="", capture_output=True, text=True)
    return proc.returncode == 0


CHECKS: dict[str, Callable[[Path], CheckResult]] = {
    "twister": check_twister,
    "west": check_west,
    "kconfig": check_kconfig,
    "devicetree": check_devicetree,
    "compile": check_compile,
}


def validate_app(app: Path, only: list[str] | None = None) -> list[CheckResult]:
    """Run the Zephyr app's offline checks (all, or `only` these) on a generated app folder."""
    app = Path(app).resolve()
    return [CHECKS[name](app) for name in (only or list(CHECKS))]
