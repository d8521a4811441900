"""Structure the next engineer relies on: one `.pte` reader, no torch while rendering, commands
that do not import each other."""

from __future__ import annotations

import ast
import subprocess
import sys

from conftest import ROOT

PACKAGE = ROOT / "cmx_gen"


def test_only_program_py_deserializes_a_pte():
    readers = sorted(p.relative_to(ROOT).as_posix() for p in PACKAGE.rglob("*.py")
                     if "deserialize_pte_binary" in p.read_text())
    assert readers == ["cmx_gen/program.py"], readers


def test_rendering_does_not_import_torch():
    code = "import sys, cmx_gen.render, cmx_gen.model_files, cmx_gen.app_folder; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == "False"


def test_no_command_imports_another():
    offenders = []
    for path in (PACKAGE / "commands").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("cmx_gen.commands"):
                offenders.append(f"{path.name}: from {node.module} import ...")
    assert offenders == [], offenders
