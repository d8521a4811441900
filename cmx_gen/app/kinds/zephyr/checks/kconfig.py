"""prj.conf + boards/<board>.conf loaded by kconfiglib into a stub Kconfig tree made of the
curated upstream symbol definitions, the board's SoC selects and the app's own Kconfig:
undefined symbols and values that do not stick are errors, as in Zephyr's build."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any

import yaml

from cmx_gen.app.kinds.zephyr.checks.modules import workspace_modules
from cmx_gen.app.kinds.zephyr.checks.result import CheckResult, board_files, rel
from cmx_gen.app.kinds.zephyr.context import ZEPHYR_DATA
from cmx_gen.app.kinds.zephyr.layout import zephyr_boards


def _stub_tree(root: Path, soc_selects: list[str], modules: list[Path]) -> None:
    """Write Kconfig.zephyr (+ the curated upstream files) under `root`; `modules`: the Kconfig
    files of the workspace's modules, sourced as Zephyr's Kconfig.modules sources them."""
    data = yaml.safe_load((ZEPHYR_DATA / "kconfig.yaml").read_text())
    lines = ["# cmx-gen stub of Zephyr's Kconfig tree: only the symbols cmx-gen uses\n"]
    for entry in data["files"]:
        repo, _, upstream = entry["source"].partition(":")
        rel = Path("stub") / repo / upstream
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"# reduced from {entry['source']}\n{entry['kconfig']}")
        lines.append(f'source "{rel.as_posix()}"\n')
    selects = "".join(f"\tselect {s}\n" for s in soc_selects)
    lines += [f'osource "{kconfig}"\n' for kconfig in modules]  # Zephyr's Kconfig.modules
    lines.append(f"\n# what the board's SoC Kconfig selects\nconfig CMX_STUB_SOC\n\tdef_bool y\n{selects}")
    (root / "Kconfig.zephyr").write_text("".join(lines))


def _kconfig_one(
    app: Path,
    conf_files: list[Path],
    soc_selects: list[str],
    result: CheckResult,
    autoconf: Path | None = None,
    modules: list[Path] | None = None,
) -> None:
    import kconfiglib

    with tempfile.TemporaryDirectory(prefix="cmx-kconfig-") as tmp:
        root = Path(tmp)
        if modules is None:  # the modules west.yml lists, where they are checked out
            modules = [m.kconfig for m in workspace_modules(app) if m.kconfig is not None]
        _stub_tree(root, soc_selects, modules)
        old = os.environ.get("srctree")
        os.environ["srctree"] = str(root)
        # An application Kconfig sources Kconfig.zephyr; without one Zephyr starts from it.
        top = app / "Kconfig" if (app / "Kconfig").is_file() else root / "Kconfig.zephyr"
        try:
            try:
                kconf = kconfiglib.Kconfig(str(top), warn_to_stderr=False)
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
        _check_warnings(app, kconf, result)
        _check_assignments(app, kconf, conf_files, result)


def _check_warnings(app: Path, kconf: Any, result: CheckResult) -> None:
    """Each Kconfig warning as a failure (Zephyr aborts on any), an undefined symbol said so."""
    for warning in kconf.warnings:
        text = " ".join(warning.split())
        m = re.search(r"(\S+\.conf):(\d+)", text)
        where = rel(app, Path(m.group(1))) + f":{m.group(2)}" if m else "Kconfig"
        if "undefined symbol" in text:
            sym = re.search(r"undefined symbol (\w+)", text)
            result.fail(
                where,
                f"CONFIG_{sym.group(1) if sym else '?'} is undefined: not a symbol of "
                "Zephyr, ExecuTorch or the app Kconfig that cmx-gen knows (Zephyr aborts "
                "on undefined symbols; if it is a real Zephyr symbol, add its definition "
                "to cmx_gen/data/zephyr/kconfig.yaml)",
            )
        else:
            result.fail(where, f"Kconfig warning (Zephyr aborts on any): {text}")


def _check_assignments(app: Path, kconf: Any, conf_files: list[Path], result: CheckResult) -> None:
    """Zephyr's kconfig.py: a symbol assigned in a .conf file must have a prompt, and the value
    assigned must be the value it gets; a choice the one selected."""
    import kconfiglib

    src = ", ".join(rel(app, c) for c in conf_files)  # where the assignments are
    for sym in kconf.unique_defined_syms:
        if sym.user_value is None or sym.choice:
            continue
        if not any(node.prompt for node in sym.nodes):
            result.fail(
                src,
                f"CONFIG_{sym.name} is assigned but has no prompt: it is set by the SoC/board "
                "or selected by other symbols, not by .conf files (Zephyr aborts on this)",
            )
            continue
        user = sym.user_value
        if sym.type in (kconfiglib.BOOL, kconfiglib.TRISTATE):
            user = kconfiglib.TRI_TO_STR[user]
        if str(user) != sym.str_value:
            deps = kconfiglib.expr_str(sym.direct_dep)
            result.fail(
                src,
                f"CONFIG_{sym.name} was assigned {user!r} but gets {sym.str_value!r}: "
                f"unsatisfied dependencies ({deps}) (Zephyr aborts on this)",
            )
    for choice in kconf.unique_choices:
        if choice.user_selection is not None and choice.selection is not choice.user_selection:
            result.fail(
                src,
                f"CONFIG_{choice.user_selection.name} was selected but the choice "
                f"gives {choice.selection.name if choice.selection else 'nothing'}",
            )


def write_autoconf(app: Path, board_file_name: str, out: Path) -> CheckResult:
    """autoconf.h (CONFIG_* macros) of the app for one board, from the stub Kconfig tree: what
    Zephyr's -imacros gives every source. For compiling app sources outside Zephyr."""
    result = CheckResult("kconfig")
    info = zephyr_boards().get(board_file_name) or {}
    confs = [app / "prj.conf"] + [c for c in board_files(app, ".conf") if c.stem == board_file_name]
    _kconfig_one(app, confs, list(info.get("soc_selects", [])), result, autoconf=out)
    return result


def check_kconfig(app: Path) -> CheckResult:
    result = CheckResult("kconfig")
    prj = app / "prj.conf"
    for path in (prj, app / "Kconfig"):
        if path.is_file():
            result.checked.append(rel(app, path))
    if not prj.is_file():
        result.fail(rel(app, prj), "missing")
        return result
    own = (app / "Kconfig").read_text() if (app / "Kconfig").is_file() else None  # optional, as in Zephyr
    if own is not None and (
        not own.lstrip().startswith(('source "Kconfig.zephyr"', "#")) or 'source "Kconfig.zephyr"' not in own
    ):
        result.fail("Kconfig", 'an app Kconfig must source "Kconfig.zephyr" (else Zephyr\'s symbols vanish)')
    boards = zephyr_boards()
    confs = board_files(app, ".conf")
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
                    result.checked.append(rel(app, conf))
                info = boards.get(conf.stem)
                if not isinstance(info, dict):
                    if not variant:
                        result.fail(
                            rel(app, conf),
                            f"no Zephyr board data for '{conf.stem}' in "
                            "cmx_gen/data/zephyr/boards.yaml (cannot tell which Kconfig its SoC allows)",
                        )
                    continue
                _kconfig_one(app, [prj, conf, *variant], list(info.get("soc_selects", [])), result)
    return result


def _scenario_configs(app: Path) -> dict[str, list[str]]:
    """{scenario: extra_configs lines} of sample.yaml's tests that set any."""
    try:
        tests = (yaml.safe_load((app / "sample.yaml").read_text()) or {}).get("tests") or {}
    except (OSError, yaml.YAMLError):
        return {}  # the twister check reports an unreadable sample.yaml
    return {
        name: [str(line) for line in spec["extra_configs"]]
        for name, spec in tests.items()
        if isinstance(spec, dict) and spec.get("extra_configs")
    }


def check_module_kconfig(module: Path, conf_lines: list[str], soc_selects: list[str]) -> CheckResult:
    """A module's Kconfig (zephyr/module.yml's) in the stub tree, with `conf_lines` as an
    application's prj.conf would set them: it parses, and every value sticks."""
    from cmx_gen.app.kinds.zephyr.checks.modules import read_module

    result = CheckResult("kconfig")
    spec = read_module(module)
    if spec.kconfig is None:
        result.status, result.note = "skipped", "the module has no Kconfig"
        return result
    result.checked.append(rel(module, spec.kconfig))
    with tempfile.TemporaryDirectory(prefix="cmx-module-") as tmp:
        conf = Path(tmp) / "prj.conf"
        conf.write_text("\n".join(conf_lines) + "\n")
        _kconfig_one(Path(tmp), [conf], soc_selects, result, modules=[spec.kconfig])
    return result
