"""`cmx-gen build/run` on a Zephyr app: west commands, and a clear stop outside a west workspace."""

from __future__ import annotations

from conftest import ROOT, run_cli


def test_zephyr_app_build_and_run_go_through_west(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("ZEPHYR_BASE", raising=False)
    app = tmp_path / "app"
    assert run_cli("create", "--config", ROOT / "samples/digits/cmx.toml", "--rtos", "zephyr", "-o", app) == 0
    capsys.readouterr()

    assert run_cli("run", app, "--dry-run") == 0
    assert capsys.readouterr().out.strip().endswith(f"build -d {app / 'build'} -t run")

    assert run_cli("build", app) == 2
    err = capsys.readouterr().err
    assert "no west workspace" in err and "west init -l" in err
