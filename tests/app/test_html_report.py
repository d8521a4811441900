"""The HTML report (`cmx-gen report`, html_report.py) rendered by a real headless Chromium.

Chromium (Debian's `chromium`, installed by scripts/setup.sh) loads each page from a file with the
network turned off, dumps the DOM, logs the console and takes a screenshot: the page must load
with no console message, hold its main elements, and stay self-contained and small. Digits and
DS-CNN without a profile; with a profile (built and run on QEMU) when the firmware SDK is there.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import FIRMWARE, ROOT, run_cli

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium not installed (scripts/setup.sh installs it): not run"
)
MODELS = {
    "digits": ROOT / "samples" / "digits" / "model.py:DigitsCNN",
    "ds_cnn": ROOT / "samples" / "ds_cnn" / "model.py:DSCNN",
}
ELEMENTS = ["result-line", "memory-map", "schedules", "operators", "profile-chart", "sqnr-chart", "worst-layers"]


def browse(page: Path, tmp_path: Path) -> tuple[str, str]:
    """(the DOM Chromium built, what it logged) for a page loaded with the network off."""
    flags = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--enable-logging=stderr",
        "--v=0",
        "--proxy-server=127.0.0.1:9",
        "--window-size=900,1400",
    ]
    dom = subprocess.run([*flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    shot = subprocess.run(
        [*flags, f"--screenshot={tmp_path / 'page.png'}", page.as_uri()], capture_output=True, text=True, timeout=120
    )
    assert dom.returncode == 0 and shot.returncode == 0, dom.stderr[-2000:] + shot.stderr[-2000:]
    assert (tmp_path / "page.png").stat().st_size > 10_000, "the screenshot is empty"
    return dom.stdout, dom.stderr + shot.stderr


def check_page(page: Path, tmp_path: Path, profiled: bool) -> str:
    text = page.read_text()
    assert page.stat().st_size < 300 * 1024
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text), "the page must not load anything"
    dom, log = browse(page, tmp_path)
    console = [line for line in log.splitlines() if "CONSOLE" in line]
    assert not console, console
    for element in ELEMENTS:
        assert f'id="{element}"' in dom, f"{element} missing from the rendered page"
    assert ('<svg id="profile-chart"' in dom) == profiled
    return dom


@needs_chromium
@pytest.mark.parametrize("name", MODELS)
def test_the_report_of_a_new_app_renders_in_chromium(name, tmp_path, capsys):
    app = tmp_path / "app"
    assert run_cli("create", MODELS[name], "--board", "mps3-an547", "-o", app) == 0
    assert f"report     {app / 'report.html'}" in capsys.readouterr().out
    dom = check_page(app / "report.html", tmp_path, profiled=False)
    assert "No run yet" in dom and '<svg id="memory-map"' in dom and '<svg id="sqnr-chart"' in dom
    assert "Memory schedule, delegate 0 (balanced): working memory" in dom
    # the latency create printed, at the M55's kernel figures (data/kernel_cycles.yaml), on the page
    assert 'id="latency"' in dom and "cycles estimated before building" in dom and "cortex-m55's kernel figures" in dom


@needs_chromium
@pytest.mark.parametrize("name", [pytest.param(name, marks=FIRMWARE) for name in MODELS])
def test_the_report_with_a_run_and_a_profile_renders_in_chromium(name, tmp_path, capsys):
    app = tmp_path / "app"
    assert run_cli("create", MODELS[name], "--board", "mps3-an547", "-o", app) == 0
    assert run_cli("build", app) == 0 and run_cli("run", app) == 0
    assert "cmx-gen: PASS max_abs_err=0" in (app / "report.html").read_text(), "run writes its line into the page"
    assert run_cli("run", app, "--profile") == 0
    assert f"report     {app / 'report.html'}" in capsys.readouterr().out
    dom = check_page(app / "report.html", tmp_path, profiled=True)
    assert "cmx-gen: PASS max_abs_err=0" in dom and '<svg id="profile-kinds"' in dom
    assert "(from the profile image)" in dom, "the page says which run its last result is from (issue 36)"


@needs_chromium
def test_the_page_says_which_layers_run_4_bit_weights(tmp_path, capsys):
    """--weights auto: the page gives the choice's headline and a line a layer, as `create` prints them."""
    app = tmp_path / "app"
    args = ("--weights", "auto", "--sqnr-target", "25")
    assert run_cli("create", MODELS["digits"], "--board", "mps2-an386", "-o", app, *args) == 0
    out = capsys.readouterr().out
    assert "weights    auto: 1 layer(s) run 4-bit weights" in out and "  conv3: int4" in out, out
    dom = check_page(app / "report.html", tmp_path, profiled=False)
    assert 'id="weights"' in dom and "auto took 1 of 5 to int4" in dom and "conv3: int4, 4,608 B at int8" in dom
