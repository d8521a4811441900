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

import shutil

import pytest
from zephyr_helpers import _sdk_defines, configure_and_compile, digits_lowered, object_names, zephyr_app  # noqa: F401  (session fixtures)

pytestmark = pytest.mark.firmware


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
    # digits' convolutions run in cmx-gen's backend (compiled here in both modes), not as cortex_m kernels
    assert "cmx_backend.cpp" in objects and not any(name.startswith("op_quantized_conv2d") for name in objects)
    # (CMSIS-NN: digits' pooling; its convolutions are cmx-gen's own Helium kernel on the M55)
    assert any(name.startswith("arm_max_pool_s8") for name in objects) == (runtime == "kernels"), sorted(objects)
    if runtime == "module":
        assert "cortex_m kernels and CMSIS-NN from ExecuTorch's Zephyr module" in conf.stdout
