"""The Zephyr app's CMakeLists.txt, configured and compiled for real (firmware test).

No Zephyr tree here, so find_package(Zephyr) finds a stand-in (cmx_gen/data/zephyr/cmake_stub)
that sets up arm-none-eabi-gcc, the `app` and `zephyr_interface` targets, CONFIG_* from the app's
Kconfig (kconfiglib over prj.conf + board .conf) and the module dirs (EXECUTORCH_ROOT /
CMSIS_NN_PATH as west would check them out). Everything that does not include Zephyr headers is
compiled: the model API, the user's src/main.c and its helpers (a plain C file calling the API), or
the check (CONFIG_CMX_CHECK=y), the model files (.pte embedding included), cmx/kernels.
Not compiled: the Zephyr platform layer, ExecuTorch's Zephyr module. Not done: the link.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cmx_gen.fit import boards

from cmx_gen.device import sdk
from cmx_gen.app.kinds.zephyr.checks import write_autoconf
from cmx_gen.app.kinds.zephyr.context import ZEPHYR_DATA
from test_zephyr_app import digits_lowered, zephyr_app  # noqa: F401  (session fixtures)

pytestmark = pytest.mark.firmware


def _sdk_defines() -> list[str]:
    """-D options for the SDK west would check out (EXECUTORCH_ROOT, CMSIS_NN_PATH, flatc)."""
    if not os.environ.get("EXECUTORCH_ROOT"):
        pytest.skip("EXECUTORCH_ROOT is not set (ExecuTorch and CMSIS-NN sources, see `cmx-gen sdk`)")
    if not shutil.which("cmake") or not shutil.which("arm-none-eabi-gcc") or not shutil.which("ninja"):
        pytest.skip("cmake, ninja or arm-none-eabi-gcc is not installed")
    found = sdk.find()
    assert found.ok, found.problems
    return found.cmake_defines()


def configure_and_compile(app: Path, board_id: str, tmp_path: Path, defines: list[str]) -> tuple[subprocess.CompletedProcess, set[str]]:
    """Configure the Zephyr app against the stand-in and compile `app` and `cmx_kernels`: the
    configure run and the names of the objects compiled (`cmx_api.cpp`, `model_pte.S`, ...)."""
    board = boards.load_board(board_id)
    autoconf = tmp_path / "autoconf.h"
    result = write_autoconf(app, board.zephyr.file_name, autoconf)
    assert result.status == "pass", [str(f) for f in result.findings]
    flags = [f for f in board.core.gcc_flags if not f.startswith("-mcpu=")]
    build = tmp_path / "build"
    cmd = [
        "cmake", "-G", "Ninja", "-S", str(app), "-B", str(build),
        f"-DZephyr_DIR={ZEPHYR_DATA / 'cmake_stub'}",
        f"-DCMX_STUB_CPU={board.core.name if board.core.name != 'cortex-m85' else 'cortex-m55'}",
        f"-DCMX_STUB_FLAGS={';'.join(flags)}",
        f"-DCMX_STUB_AUTOCONF={autoconf}",
        *defines,
    ]
    conf = subprocess.run(cmd, capture_output=True, text=True)
    assert conf.returncode == 0, conf.stdout[-3000:] + conf.stderr[-3000:]
    assert "not compiled (needs Zephyr headers)" in conf.stdout
    assert "linker snippets: ;RODATA:linker/cmx_model_pte.ld" in conf.stdout

    done = subprocess.run(["nice", "cmake", "--build", str(build), "-j", "2", "--target", "app", "cmx_kernels"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    return conf, {p.relative_to(build).as_posix() for p in build.rglob("*.obj")}


def object_names(objects: set[str]) -> set[str]:
    """`cmx_api.cpp` for `CMakeFiles/app.dir/cmx/api/cmx_api.cpp.obj`."""
    return {Path(p).name.split(".")[0] + "." + Path(p).name.split(".")[1] for p in objects}


@pytest.mark.parametrize(
    "board_id, runtime",
    [("corstone300-fvp", "module"), ("corstone300-fvp", "kernels"), ("nucleo-h743zi", "module")],
)
def test_cmakelists_configures_and_compiles(zephyr_app, board_id, runtime, tmp_path):  # noqa: F811
    """runtime=module: CONFIG_EXECUTORCH=y, the runtime is the module's, cmx/kernels builds only
    kernels; runtime=kernels: CONFIG_EXECUTORCH=n, cmx/kernels builds the runtime core too."""
    defines = _sdk_defines()
    app = tmp_path / "app"
    shutil.copytree(zephyr_app(board_id), app)
    prj = app / "prj.conf"
    if runtime == "kernels":
        # and the check image (CONFIG_CMX_CHECK=y, as sample.yaml's tests build it); the others
        # build the user's application (src/main.c through the model API)
        prj.write_text(prj.read_text().replace("CONFIG_EXECUTORCH=y", "CONFIG_EXECUTORCH=n") + "CONFIG_CMX_CHECK=y\n")
    conf, paths = configure_and_compile(app, board_id, tmp_path, defines)
    objects = object_names(paths)
    autoconf = (tmp_path / "autoconf.h").read_text()
    assert ("CONFIG_EXECUTORCH_METHOD_ALLOCATOR_POOL_SIZE" in autoconf) == (runtime == "module")
    assert {"cmx_api.cpp", "cmx_model_instance.cpp", "model_pte.S", "cmx_kernels.cpp"} <= objects, sorted(objects)
    image = {"cmx_runner.cpp", "cmx_check_main.c"} if runtime == "kernels" else {"main.c", "cmx_app.c"}
    assert image <= objects and not ({"cmx_runner.cpp", "main.c"} - image) & objects, sorted(objects)
    # the runtime core, the cortex_m kernels and CMSIS-NN are compiled here only when the module
    # does not provide them: nothing is compiled twice
    assert ("method.cpp" in objects) == (runtime == "kernels"), sorted(objects)
    assert any(name.startswith("op_quantized_conv2d") for name in objects) == (runtime == "kernels"), sorted(objects)
    assert any(name.startswith("arm_convolve_s8") for name in objects) == (runtime == "kernels"), sorted(objects)
    if runtime == "module":
        assert "cortex_m kernels and CMSIS-NN from ExecuTorch's Zephyr module" in conf.stdout
