"""`cmx-gen flash` and `cmx-gen run --serial`, everything a desk without a board can check: the
command for every board in the database, real pyOCD finding no probe, and the serial reader on a
pseudo-terminal fed by QEMU running the board's UART image."""

from __future__ import annotations

import os
import pty
import shutil
import subprocess
import sys
import tty
from pathlib import Path

import pytest
from conftest import RESULT_STUB, ROOT, link_with_stub, run_cli, run_serial_fed_by_qemu

from cmx_gen.app import project as project_mod
from cmx_gen.app.kinds import APP_KINDS
from cmx_gen.app.kinds.zephyr.flasher import WestFlasher
from cmx_gen.common.errors import FlashError
from cmx_gen.device import flash
from cmx_gen.device.runners.serial import SerialConsole
from cmx_gen.fit.boards import load_boards
from cmx_gen.pipeline.generate import generate

DIGITS = ROOT / "samples" / "digits" / "model.py:DigitsCNN"
needs_qemu_gcc = pytest.mark.skipif(
    shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
    reason="qemu-system-arm and arm-none-eabi-gcc are needed",
)


def config(board, zephyr=False, probe=None) -> flash.FlashConfig:
    return flash.FlashConfig(
        board=board,
        app=Path("/apps/x"),
        image=Path("/apps/x/build") if zephyr else Path("/apps/x/build/x.elf"),
        probe=probe,
    )


def plan(config: flash.FlashConfig, zephyr: bool = False) -> flash.Flasher:
    """What `cmx-gen flash` asks: the app kind's flasher."""
    return (APP_KINDS["zephyr"] if zephyr else APP_KINDS["baremetal"]).flasher(config)


@pytest.mark.parametrize("board", load_boards(), ids=lambda b: b.id)
def test_every_board_gets_a_working_command_or_a_one_line_refusal(board):
    from pyocd.target import TARGET

    for zephyr in (False, True):
        if zephyr and board.zephyr is None:
            continue
        try:
            commands = plan(config(board, zephyr, probe="0669FF"), zephyr).commands()
        except FlashError as exc:
            assert board.flash is None or (not zephyr and board.flash.baremetal_boot), exc.one_line()
            assert "\n" not in exc.one_line() and "(fix: " in exc.one_line()
            assert "cmx-gen run" in exc.one_line() or "--rtos zephyr" in exc.one_line()
            continue
        assert board.flash is not None
        last = commands[-1]
        if zephyr:
            assert last[1:] == ["flash", "-d", "/apps/x/build", "-r", board.flash.runner, "--dev-id", "0669FF"]
        elif board.flash.pyocd_target:
            target = board.flash.pyocd_target
            assert last[1:] == [
                "load",
                "--no-wait",
                "--target",
                target,
                "--uid",
                "0669FF",
                "--format",
                "elf",
                "/apps/x/build/x.elf",
            ]
            # pyOCD knows the part, or the plan installs its CMSIS pack first
            assert target in TARGET or commands[0][1:] == ["pack", "install", target], commands
        else:
            spec = flash.vendor_runners()[board.flash.runner]
            assert all(c[0] in (spec["tool"], "arm-none-eabi-objcopy") for c in commands), commands
            assert any("0669FF" in " ".join(c) for c in commands), "--probe reaches the vendor tool"
            assert any("/apps/x/build/x." in " ".join(c) for c in commands)


def test_cli_dry_run_prints_the_commands(tmp_path, capsys):
    app = tmp_path / "app"
    generate(
        project_mod.Project.single(model=str(DIGITS), board="nucleo-h743zi", rtos="baremetal", output=str(app)), app
    )
    assert run_cli("flash", app, "--dry-run") == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1].endswith(f"load --no-wait --target stm32h743xx --format elf '{app.resolve()}/build/<app>.elf'"), out
    assert run_cli("flash", app) == 2
    assert "no firmware to flash" in capsys.readouterr().err
    assert run_cli("flash", app, "--app", "--dry-run") == 0  # the user's application instead of the check
    assert capsys.readouterr().out.strip().endswith(f"'{app.resolve()}/build/<app>_app.elf'")


def test_model_only_writes_the_weights_area_then_the_slot_and_refuses_what_is_missing(tmp_path, capsys):
    """A board of pyOCD whose slots keep their weights apart (the nucleo's flash, with weights areas):
    `flash --model-only b` writes the slot's weights first and the slot last, each at its address."""
    nucleo = (ROOT / "boards" / "nucleo-h743zi.yaml").read_text()
    slots = nucleo[nucleo.index("model_slots:") : nucleo.index("flash:\n")]
    board = tmp_path / "nucleo-qspi.yaml"
    board.write_text(
        nucleo.replace("id: nucleo-h743zi", "id: nucleo-qspi").replace(
            slots,
            "model_slots:\n"
            "  - {name: a, base: 0x08100000, size: 0x40000, weights: {base: 0x08140000, size: 0x40000}}\n"
            "  - {name: b, base: 0x08180000, size: 0x40000, weights: {base: 0x081C0000, size: 0x40000}}\n",
        )
    )
    app = tmp_path / "app"
    assert run_cli("create", DIGITS, "--board", board, "--placement", "slot", "-o", app) == 0
    capsys.readouterr()
    assert run_cli("flash", app, "--model-only", "b", "--dry-run") == 2
    assert "no image for slot b (fix: run `cmx-gen model-image" in capsys.readouterr().err
    assert run_cli("model-image", app, "--slot", "b") == 0
    capsys.readouterr()
    assert run_cli("flash", app, "--model-only", "b", "--dry-run") == 0
    loads = [line.split()[-3:] for line in capsys.readouterr().out.strip().splitlines()]
    build = app.resolve() / "build"
    assert loads == [
        ["--base-address", "0x081c0000", str(build / "model_weights_b.bin")],
        ["--base-address", "0x08180000", str(build / "model_slot_b.bin")],
    ], loads
    (build / "model_weights_b.bin").unlink()
    assert run_cli("flash", app, "--model-only", "b", "--dry-run") == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(
        "model_weights_b.bin is missing: slot b's image keeps its weights there "
        f"(fix: run `cmx-gen model-image {app} --slot b`)"
    ), err


def test_boards_without_a_runner_or_a_bootable_bare_metal_image_are_refused(capsys):
    boards = {b.id: b for b in load_boards()}
    with pytest.raises(FlashError) as info:
        plan(config(boards["mps3-an547"]))
    assert (
        "mps3-an547 has no flash runner" in info.value.one_line() and "use `cmx-gen run APP`" in info.value.one_line()
    )
    with pytest.raises(FlashError, match=r"does not boot on rpi-pico2: the RP2350 boot ROM .*IMAGE_DEF"):
        plan(config(boards["rpi-pico2"]))
    assert isinstance(plan(config(boards["rpi-pico2"], zephyr=True), zephyr=True), WestFlasher)


def test_pyocd_without_a_probe_says_so(tmp_path):
    """The real pyOCD, on a machine with no probe attached."""
    boards = {b.id: b for b in load_boards()}
    elf = tmp_path / "app.elf"
    elf.write_bytes(b"\x7fELF")
    flasher = flash.plan(flash.FlashConfig(board=boards["nucleo-h743zi"], app=tmp_path, image=elf))
    with pytest.raises(FlashError) as info:
        flasher.flash()
    assert info.value.one_line().startswith("no debug probe found (fix: connect the board's debug USB port"), (
        info.value.one_line()
    )


def test_a_pack_target_that_is_not_installed_is_refused_before_anything_runs(tmp_path):
    boards = {b.id: b for b in load_boards()}
    flasher = flash.plan(flash.FlashConfig(board=boards["frdm-mcxn947"], app=tmp_path, image=tmp_path / "a.elf"))
    with pytest.raises(FlashError) as info:
        flasher.flash()
    assert "pyOCD has no target 'mcxn947' installed" in info.value.one_line()
    assert "run `pyocd pack install mcxn947` once" in info.value.one_line()


def test_a_missing_vendor_tool_names_what_to_install(tmp_path):
    boards = {b.id: b for b in load_boards()}
    flasher = flash.plan(flash.FlashConfig(board=boards["stm32h747i-disco"], app=tmp_path, image=tmp_path / "a.elf"))
    if shutil.which("STM32_Programmer_CLI"):
        pytest.skip("STM32_Programmer_CLI is installed here: the missing-tool path cannot be shown")
    with pytest.raises(FlashError) as info:
        flasher.flash()
    assert info.value.one_line().startswith(
        "STM32_Programmer_CLI not found (pyOCD has no target for ST STM32H747I-DISCO"
    )
    assert "(fix: install STM32CubeProgrammer (st.com) with its bin/ folder on PATH)" in info.value.one_line()


# ------------------------------------------------------------------------------- serial console


@pytest.fixture(scope="module")
def uart_image(tmp_path_factory):
    """The digits app's UART-only image for MPS2 AN386 with a stub runner (the real one needs the SDK)."""
    folder = tmp_path_factory.mktemp("uart")
    app = folder / "app"
    generate(project_mod.Project.single(model=str(DIGITS), board="mps2-an386", rtos="baremetal", output=str(app)), app)
    stub = folder / "stub.c"
    stub.write_text(RESULT_STUB)
    elf = link_with_stub(app, "mps2-an386", stub, folder / "alone.elf", "-DCMX_CONSOLE_UART=1", "-DCMX_SEMIHOSTING=0")
    return app, elf


@needs_qemu_gcc
def test_run_serial_reads_the_result_line_from_a_pty_fed_by_qemu(uart_image, capsys):
    app, elf = uart_image
    assert run_serial_fed_by_qemu(app, elf, "mps2-an386", timeout=60) == 0
    assert "cmx-gen: PASS max_abs_err=0 instr=1" in capsys.readouterr().out


@needs_qemu_gcc
def test_serial_console_gives_up_at_its_timeout_with_what_it_read(uart_image):
    """What came before the port was opened is gone (pyserial flushes on open): the line must come after."""
    master, slave = pty.openpty()
    tty.setraw(slave)
    os.write(master, b"printed before anyone listened\r\n")
    port = os.ttyname(slave)
    console = SerialConsole(port, timeout=1.0)
    with console.open(), pytest.raises(Exception) as info:
        os.write(master, b"booting...\r\nno verdict here\r\n")
        console.read_result()
    os.close(master)
    os.close(slave)
    assert f"no cmx-gen result line on {port} within 1 s" in str(info.value)
    assert "within 1 s; read: 'booting...\\nno verdict here'" in str(info.value), str(info.value)


def test_a_port_without_permission_is_one_line(uart_image, tmp_path):
    """A real EACCES: the port is mode 000 and the process has no CAP_DAC_OVERRIDE (root drops it)."""
    app, _ = uart_image
    master, slave = pty.openpty()
    port = os.ttyname(slave)
    os.chmod(port, 0)
    prefix = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: cannot take away CAP_DAC_OVERRIDE")
        prefix = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--"]
    done = subprocess.run(
        [*prefix, sys.executable, "-m", "cmx_gen", "run", str(app), "--serial", port], capture_output=True, text=True
    )
    os.close(master)
    os.close(slave)
    errors = [line for line in done.stderr.splitlines() if line.startswith("cmx-gen: error:")]
    assert done.returncode == 2 and errors == [
        f"cmx-gen: error: cannot open {port}: permission denied (fix: add your user to the port's group "
        "(Debian/Ubuntu: sudo usermod -aG dialout $USER, then log in again))"
    ], done.stderr


def test_a_missing_port_is_one_line(uart_image, capsys):
    app, _ = uart_image
    assert run_cli("run", app, "--serial", "/dev/ttyACM97") == 2
    assert "cannot open /dev/ttyACM97: no such port" in capsys.readouterr().err
