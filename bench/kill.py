"""Kill `create`, `regen` and `build` with SIGKILL at random points, run the same command again, and
count what broke (issue 22, part 4).

Each trial picks a command (seeded), measures nothing new: it kills the command's whole process
group (cmx-gen and the CMake/Ninja/compiler it started) after a delay drawn uniformly from
[0, the command's uninterrupted duration], then checks, before and after running the command again:
  app     the folder is the old app or the new one: every file in its manifest holds the bytes the
          manifest records, no generated file lies outside it, and model/report.json is the old
          model's or the new model's (the next command that opens the app first finishes or drops
          an update a kill interrupted: cmx_gen/app/txn.py)
  user    user/main.c, edited before every trial, is exactly as the user left it
  cache   every lowering cache entry reads back whole (report, program whose SHA-256 the report
          names, reference), every memo parses, every shared kernel library is a whole archive
  rerun   the command run again succeeds (and a rebuilt app PASSes on QEMU)
Regen trials change the model's weights first, so each one lowers and renders something new; build
trials regen such a change (uninterrupted) and kill the build that follows; create trials make a new
app from a model not in the cache yet.

Needs EXECUTORCH_ROOT and CMSIS_NN_PATH for build trials (without them only create and regen run,
and it says so). Uses its own CMX_GEN_CACHE under --work.
Run: .venv/bin/python bench/kill.py --work /tmp/cmx-kill [--trials 50] [--seed 1]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cmx_gen.app import html_report  # noqa: E402
from cmx_gen.app import txn as app_txn
from cmx_gen.program import artifacts  # noqa: E402

MODEL = """import torch
import torch.nn as nn

SEED = {seed}


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(SEED)
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.fc = nn.Linear(64, 5)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).flatten(1))
"""
CREATE_ARGS = ["--input-shape", "1,2,4,4", "--random-calibration", "--board", "mps3-an547", "--rtos", "baremetal"]


def cmx(*args: str) -> list[str]:
    return [sys.executable, "-m", "cmx_gen", *args]


def run(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(command, env=env, capture_output=True, text=True)


def killed_run(command: list[str], env: dict[str, str], delay: float) -> bool:
    """Start `command`, SIGKILL its process group after `delay` s; True if it was killed, False if
    it finished first."""
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        process.wait(timeout=delay)
        return False
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        return True


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def app_state(app: Path) -> str | None:
    """The graph the app was rendered from, or None for an app not there yet; raises AssertionError
    for a mix."""
    app_txn.recover(app)  # what any command opening the app does first
    manifest_path = app / app_txn.MANIFEST
    if not manifest_path.is_file():
        stray = [p for p in app.rglob("*") if p.is_file() and app_txn.STATE_DIR not in p.parts] if app.is_dir() else []
        assert not stray, f"no manifest but files: {stray[:3]}"
        return None
    manifest = json.loads(manifest_path.read_text())["files"]
    for rel, entry in manifest.items():
        assert (app / rel).is_file(), f"{rel} is missing"
        if entry["owner"] == "generated":
            assert sha(app / rel) == entry["sha256"], f"{rel} is not what the manifest records"
    on_disk = {
        p.relative_to(app).as_posix()
        for p in app.rglob("*")
        if p.is_file() and p.relative_to(app).parts[0] not in (app_txn.STATE_DIR, "build", html_report.PAGE)
    }
    assert on_disk <= set(manifest), f"files outside the manifest: {sorted(on_disk - set(manifest))[:3]}"
    report = json.loads((app / "model" / "report.json").read_text())
    assert sha(app / "model" / "model.pte") == report["pte"]["sha256"], "model.pte is not the report's program"
    return report["model"]["graph_sha256"]


def lowering_entries(cache: Path) -> list[Path]:
    """The entries cache.produce would serve: a key folder with its report (staging folders have none
    until they are renamed into place whole)."""
    folder = cache / "lower"
    return (
        [e for e in folder.iterdir() if e.is_dir() and (e / artifacts.REPORT_JSON).is_file()] if folder.is_dir() else []
    )


def bad_cache_entries(cache: Path) -> list[str]:
    bad = []
    for entry in lowering_entries(cache):
        try:
            read = artifacts.read(entry)
            assert hashlib.sha256(read.pte).hexdigest() == read.report.pte.sha256
            assert read.reference
        except Exception as exc:  # noqa: BLE001 (any failure to read back is a bad entry)
            bad.append(f"{entry.name}: {exc}")
    for memo in cache.glob("*/*.json"):
        try:
            json.loads(memo.read_text())
        except ValueError:
            bad.append(f"{memo}: not JSON")
    for lib in (cache / "runtime").glob("*/libcmx_kernels.a"):
        if ".tmp-" in lib.parent.name:
            continue
        listed = subprocess.run(["arm-none-eabi-ar", "t", str(lib)], capture_output=True)
        if listed.returncode or not listed.stdout:
            bad.append(f"{lib}: not a whole archive")
    return bad


def _uninterrupted(
    model: Path, app: Path, seed: int, env: dict[str, str], firmware: bool
) -> tuple[dict[str, float], int]:
    """How long each kind of trial takes when nothing kills it (a trial's kill falls within that), and
    the model seed it leaves."""
    durations: dict[str, float] = {}
    for kind, command in [
        ("create", cmx("create", f"{model}:Tiny", *CREATE_ARGS, "-o", str(app))),
        ("build", cmx("build", str(app))),
    ][: 2 if firmware else 1]:
        started = time.monotonic()
        done = run(command, env)
        assert done.returncode == 0, done.stderr[-2000:]
        durations[kind] = time.monotonic() - started
    durations["regen"] = durations["create"]
    if firmware:  # what a build trial kills: the build after a regen (model sources changed, kernels cached)
        seed += 1
        model.write_text(MODEL.format(seed=seed))
        assert run(cmx("regen", str(app)), env).returncode == 0
        started = time.monotonic()
        assert run(cmx("build", str(app)), env).returncode == 0
        durations["build"] = time.monotonic() - started
    return durations, seed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", required=True, help="folder for the apps and the cache (outside the repo)")
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = Path(args.work).resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    cache = work / "cache"
    env = dict(os.environ, CMX_GEN_CACHE=str(cache), PYTHONPATH=str(ROOT))
    firmware = bool(os.environ.get("EXECUTORCH_ROOT") and os.environ.get("CMSIS_NN_PATH"))
    kinds = ["create", "regen", "build"] if firmware else ["create", "regen"]
    if not firmware:
        print("# EXECUTORCH_ROOT/CMSIS_NN_PATH not set: no build trials", flush=True)

    model = work / "model.py"
    seed = 1000
    model.write_text(MODEL.format(seed=seed))
    app, user_file = work / "app", work / "app" / "user" / "main.c"
    durations, seed = _uninterrupted(model, app, seed, env, firmware)
    print("# uninterrupted: " + ", ".join(f"{k} {v:.1f} s" for k, v in durations.items()), flush=True)

    counts = {
        "trials": 0,
        "killed": 0,
        "finished_first": 0,
        "old_after_kill": 0,
        "new_after_kill": 0,
        "corrupt_apps": 0,
        "user_files_changed": 0,
        "bad_cache_entries": 0,
        "reruns_failed": 0,
        "passes": 0,
    }
    for trial in range(args.trials):
        kind = rng.choice(kinds)
        delay = rng.uniform(0.0, durations[kind])
        if kind == "create":
            seed += 1
            model.write_text(MODEL.format(seed=seed))  # not in the cache yet: it lowers
            target = work / f"created-{trial}"
            command = cmx("create", f"{model}:Tiny", *CREATE_ARGS, "-o", str(target))
        else:
            target = app
            seed += 1
            model.write_text(MODEL.format(seed=seed))
            if kind == "build":  # the model changed: the build has something to do
                assert run(cmx("regen", str(app)), env).returncode == 0
            command = cmx(kind, str(app))
        edited = f"/* the user's edit before trial {trial} */\n"
        user_file.write_text(user_file.read_text() + edited)
        user_bytes = user_file.read_bytes()
        try:
            before = app_state(target)
        except AssertionError as exc:
            before = f"corrupt before the trial: {exc}"
        killed = killed_run(command, env, delay)
        counts["trials"] += 1
        counts["killed" if killed else "finished_first"] += 1
        problems = []
        try:
            after = app_state(target)
            if killed and kind != "build":
                counts["old_after_kill" if after == before else "new_after_kill"] += 1
        except AssertionError as exc:
            counts["corrupt_apps"] += 1
            problems.append(f"app after the kill: {exc}")
        if user_file.read_bytes() != user_bytes:
            counts["user_files_changed"] += 1
            problems.append("user/main.c changed")
        bad = bad_cache_entries(cache)
        rerun = run(command, env)
        if rerun.returncode:
            counts["reruns_failed"] += 1
            problems.append(f"re-run failed: {(rerun.stderr.strip().splitlines() or ['?'])[-1]}")
        try:
            app_state(target)
        except AssertionError as exc:
            counts["corrupt_apps"] += 1
            problems.append(f"app after the re-run: {exc}")
        bad += bad_cache_entries(cache)
        counts["bad_cache_entries"] += len(bad)
        problems += bad
        if kind == "build" and not rerun.returncode:
            result = run(cmx("run", str(app)), env)
            if "cmx-gen: PASS" in result.stdout:
                counts["passes"] += 1
            else:
                problems.append(f"run after the rebuild: {result.stdout.strip()[-200:]}")
        if user_file.read_bytes() != user_bytes:
            counts["user_files_changed"] += 1
            problems.append("user/main.c changed by the re-run")
        print(
            f"trial {trial:>3} {kind:<6} kill at {delay:5.1f} s {'killed' if killed else 'finished':<8} "
            f"{'; '.join(problems) or 'ok'}",
            flush=True,
        )
    counts["lowering_entries_checked"] = len(lowering_entries(cache))
    print("# " + ", ".join(f"{k} {v}" for k, v in counts.items()), flush=True)
    broken = (
        counts["corrupt_apps"] + counts["user_files_changed"] + counts["bad_cache_entries"] + counts["reruns_failed"]
    )
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
