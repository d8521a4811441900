"""`cmx-gen samples`: the bundled samples are listed and copied into the user's folder, never over it."""

from __future__ import annotations

from pathlib import Path

from conftest import run_cli

from cmx_gen.app import samples


def test_every_sample_is_listed_with_what_it_is() -> None:
    listed = {s.name: s for s in samples.bundled()}
    assert {"digits", "ds_cnn", "kws_digits", "mobilenet_v1_025", "resnet8", "autoencoder"} <= set(listed)
    assert all(s.summary for s in listed.values())


def test_copy_brings_the_samples_a_project_reads_and_never_writes_over(tmp_path: Path) -> None:
    copied = samples.copy("kws_digits", tmp_path / "samples" / "kws_digits")
    assert [p.name for p in copied] == ["kws_digits", "ds_cnn", "digits"]
    assert (tmp_path / "samples/ds_cnn/model.py").is_file() and (tmp_path / "samples/digits/digits.pt").is_file()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "keep.txt").write_text("mine")
    assert run_cli("samples", "digits", str(tmp_path / "mine")) == 2
    assert (tmp_path / "mine" / "keep.txt").read_text() == "mine" and not (tmp_path / "mine" / "cmx.toml").exists()


def test_a_missing_sample_project_names_the_copy_command(tmp_path: Path, capsys) -> None:
    assert run_cli("create", "--config", str(tmp_path / "samples/digits/cmx.toml")) == 2
    assert "cmx-gen samples digits" in capsys.readouterr().err
