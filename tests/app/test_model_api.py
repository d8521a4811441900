"""The model API (cmx.h) and the user's application, both app kinds (issue 20), without the SDK:
the header compiles as plain C11 with no ExecuTorch include path, docs/api.md's example compiles,
the application is user-owned and survives a model change, the Zephyr app renders the API library
and a user main. On the target: test_model_api_firmware.py."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, run_cli

from cmx_gen.app import project as project_mod
from cmx_gen.pipeline.generate import generate

DIGITS = ROOT / "samples" / "digits" / "model.py:DigitsCNN"
C_FLAGS = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic"]


@pytest.fixture(scope="module")
def digits_app(tmp_path_factory) -> Path:
    app = tmp_path_factory.mktemp("api") / "app"
    generate(project_mod.Project.single(model=str(DIGITS), board="mps3-an547", rtos="baremetal", output=str(app)), app)
    return app


def _c_compilers() -> list[list[str]]:
    """The target compiler (as the app builds) and the host's: the header must be plain C for both."""
    found = []
    if shutil.which("arm-none-eabi-gcc"):
        found.append(["arm-none-eabi-gcc", "-mcpu=cortex-m55", "-mthumb"])
    if shutil.which("gcc"):
        found.append(["gcc"])
    if not found:
        pytest.skip("no C compiler (arm-none-eabi-gcc or gcc) on PATH")
    return found


def _compile_c(source: Path, includes: list[Path], out: Path) -> None:
    for cc in _c_compilers():
        done = subprocess.run(
            [*cc, *C_FLAGS, *(f"-I{i}" for i in includes), "-c", str(source), "-o", str(out)],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, f"{cc[0]}: {done.stderr[-2000:]}"


def test_header_is_plain_c11_without_executorch(digits_app, tmp_path):
    """cmx.h, cmx_app.h and cmx_models.h compile in a C11 file with -Wall -Werror, and the only
    include paths given are the app's own folders: no ExecuTorch header is reachable."""
    for header in ("cmx/api/cmx.h", "cmx/app/cmx_app.h", "model/cmx_models.h"):
        text = (digits_app / header).read_text()
        assert not re.search(r"#\s*include\s*[<\"][^>\"]*executorch|executorch::|torch::", text), header
    user = tmp_path / "user.c"
    user.write_text(
        '#include "cmx.h"\n#include "cmx_app.h"\n#include "cmx_models.h"\n'
        "int probe(void) { cmx_tensor t; cmx_stats s; (void)s;\n"
        "  return cmx_input(&cmx_model_digits, 0, &t) == CMX_OK && t.dtype == CMX_DTYPE_FLOAT32; }\n"
    )
    _compile_c(user, [digits_app / "cmx/api", digits_app / "cmx/app", digits_app / "model"], tmp_path / "user.o")


def test_docs_example_compiles(digits_app, tmp_path):
    text = (ROOT / "docs" / "api.md").read_text()
    blocks = re.findall(r"```c\n(.*?)```", text, re.S)
    assert blocks, "docs/api.md has no C example"
    example = blocks[0]
    assert 10 <= len(example.strip().splitlines()) <= 20, "the example is about 15 lines"
    source = tmp_path / "example.c"
    source.write_text(example)
    _compile_c(source, [digits_app / "cmx/api", digits_app / "model"], tmp_path / "example.o")


def test_user_app_and_api_files(digits_app):
    """The application is user-owned and calls only the API; the check still is cmx_run()."""
    main = (digits_app / "user/main.c").read_text()
    assert "cmx_model_digits" in main and "cmx_invoke(" in main and "cmx_init(" in main
    assert "executorch" not in main.lower() and "cmx_run" not in main
    spec = yaml_load(ROOT / "templates/baremetal_app/cmx_template.yaml")
    assert "user/*" in spec["user_owned"]
    manifest = json.loads((digits_app / ".cmx-gen/manifest.json").read_text())["files"]
    assert manifest["user/main.c"]["owner"] == "user", "the application is the user's, not generated"
    assert "extern cmx_model cmx_model_digits;" in (digits_app / "model/cmx_models.h").read_text()
    readme = (digits_app / "README.md").read_text()
    assert "`user/main.c`" in readme and "--app" in readme and "--data" in readme


def yaml_load(path: Path) -> dict:
    import yaml

    return yaml.safe_load(path.read_text())


def test_regen_after_a_model_change_keeps_the_application(tmp_path):
    """New weights regenerate model/; user/ (edited here) and the handle's name stay as they were."""
    shutil.copytree(
        ROOT / "samples" / "digits", tmp_path / "digits", ignore=shutil.ignore_patterns("build", "__pycache__")
    )
    config = tmp_path / "digits" / "cmx.toml"
    assert run_cli("create", "--config", config) == 0
    app = tmp_path / "digits" / "build" / "app"
    main = app / "user" / "main.c"
    main.write_text(main.read_text() + "\n/* my sensor code */\n")
    kept = ("user/main.c", "user/user.cmake", "model/cmx_models.h")
    before = {p: (app / p).read_bytes() for p in kept}
    pte = (app / "model" / "model.pte").read_bytes()
    model = tmp_path / "digits" / "model.py"
    model.write_text(
        model.read_text()
        + """

class DigitsCNN(DigitsCNN):  # noqa: F811  (the test's weight change)
    def __init__(self) -> None:
        super().__init__()
        with torch.no_grad():
            for p in self.parameters():
                p.mul_(1.25)
"""
    )
    assert run_cli("regen", app) == 0
    assert (app / "model" / "model.pte").read_bytes() != pte, "the new weights must give a new program"
    assert {p: (app / p).read_bytes() for p in kept} == before, "regen touched the application or renamed the handle"


def test_zephyr_app_has_the_api_and_a_user_main(tmp_path):
    app = tmp_path / "zapp"
    generate(project_mod.Project.single(model=str(DIGITS), board="mps3-an547", rtos="zephyr", output=str(app)), app)
    main = (app / "src/main.c").read_text()
    assert "cmx_invoke(" in main and "cmx_model_digits" in main and "CONFIG_CMX_APP_ITERATIONS" in main
    cmake = (app / "CMakeLists.txt").read_text()
    assert "add_library(cmx_model_api INTERFACE)" in cmake and "if(CONFIG_CMX_CHECK)" in cmake
    kconfig = (app / "Kconfig").read_text()
    assert "config CMX_CHECK" in kconfig and "config CMX_APP_ITERATIONS" in kconfig
    sample = yaml_load(app / "sample.yaml")
    tests = sample["tests"]
    check = next(v for k, v in tests.items() if k.endswith((".qemu", ".fvp", ".board")))
    assert check["extra_configs"] == ["CONFIG_CMX_CHECK=y"], "the check stays the Twister test"
    app_test = next(v for k, v in tests.items() if k.endswith(".app"))
    assert not any("CMX_CHECK" in c for c in app_test["extra_configs"])
    assert (app / "cmx/api/cmx.h").is_file() and (app / "cmx/app/cmx_app.c").is_file()
    assert run_cli("validate", app) == 0


def test_bad_data_is_one_line(digits_app, tmp_path, capsys):
    """A sample of the wrong shape is named, with the shape the model takes, exit 2."""
    data = tmp_path / "bad.npz"
    np.savez(data, input=np.zeros((3, 1, 7, 8), np.float32))
    assert run_cli("run", digits_app, "--data", data) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert (
        len(err) == 1
        and "sample 0 of bad.npz" in err[0]
        and "[1, 1, 8, 8]" in err[0].replace("(", "[").replace(")", "]")
    ), err
