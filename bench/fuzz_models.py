"""A model fuzzer (issue 53, after NNSmith, ASPLOS 2023): random models of the layers cmx-gen takes
(bench/fuzz_grammar.py), each lowered for a core as a user's file is, then checked on the host:

  PASS     the .pte's plan run on the host at its planned offsets (plan_reference, cmx-gen's backend
           included) gives the lowering's kernel-exact reference bit for bit
  WRONG    it does not: the firmware would compute something else than the reference it is checked
           against (a layout or schedule defect), or the plan has no host model
  REFUSED  cmx-gen refused it with one clear line (ExportError, exit 2): counted by reason
  CRASH    anything else (a traceback would reach the user)

`--qemu N` also builds and runs N of the PASSing models on QEMU (create, build, run: PASS bit-exact).
Every WRONG and CRASH is shrunk (blocks removed while it still fails) and its model file written to
WORK/failures/, ready to become a test. The summary goes to stdout (and docs/conformance.md by hand).

  .venv/bin/python bench/fuzz_models.py --seed 0 --count 200 --core cortex-m55 --work /tmp/cmx-fuzz
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fuzz_grammar as grammar  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BOARDS = {"cortex-m55": "mps3-an547", "cortex-m4": "mps2-an386"}


@dataclass(frozen=True)
class Verdict:
    outcome: str  # PASS, WRONG, REFUSED, CRASH
    detail: str = ""


def check(path: Path, core: str) -> Verdict:
    """Lower the model file for `core` and run its plan on the host against the reference."""
    from cmx_gen.common.errors import CmxError
    from cmx_gen.lower import lowering
    from cmx_gen.lower.state import Referenced
    from cmx_gen.model import source
    from cmx_gen.model.export import export
    from cmx_gen.program import plan_reference

    try:
        lowered = lowering.lower(export(source.load(f"{path}:Fuzzed")), core)
    except CmxError as exc:
        return Verdict("REFUSED", _reason(str(exc)))
    except Exception as exc:  # noqa: BLE001  (what the fuzzer is for)
        return Verdict("CRASH", f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}")
    expected = [t.detach().contiguous().numpy() for t in lowered.get(Referenced).runs.kernel_exact]
    inputs = [t.detach().contiguous().numpy() for t in lowered.given.exported.inputs]
    isa = lowered.target.isa.upper()
    try:
        got = plan_reference.reference(lowered.pte, inputs, isa)
    except plan_reference.NoHostModel as exc:
        return Verdict("WRONG", f"no host model: {exc}")
    for k, (g, e) in enumerate(zip(got, expected, strict=True)):
        if g.shape != e.shape or not np.array_equal(g, e):
            err = np.abs(g.astype(np.float64) - e.astype(np.float64)).max() if g.shape == e.shape else "shape"
            return Verdict("WRONG", f"output {k}: plan vs reference max abs err {err}")
    return Verdict("PASS")


def _reason(message: str) -> str:
    """A refusal's reason without the model's own names and numbers, to count alike ones together."""
    text = re.sub(r"\((fuzz_\d+|shrink)\.py:[^)]*\)|\[[\d, ]+\]|\b\d+(\.\d+)?\b|l\d+", "#", message)
    return text[:140]


class Worker:
    """check() in a child interpreter that stays up between models (imports once); a model that hangs
    or kills it is a CRASH, and the next model gets a new child."""

    def __init__(self, core: str, timeout: int = 300) -> None:
        self.core, self.timeout, self.child = core, timeout, None

    def _start(self) -> subprocess.Popen:
        code = (
            f"import sys, json; sys.path.insert(0, {str(Path(__file__).parent)!r}); import fuzz_models as f; from pathlib import Path\n"
            "for line in sys.stdin:\n"
            f"    v = f.check(Path(line.strip()), {self.core!r}); print('VERDICT', json.dumps([v.outcome, v.detail]), flush=True)\n"
        )
        return subprocess.Popen(
            [sys.executable, "-c", code],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            cwd=ROOT,
        )

    def check(self, path: Path) -> Verdict:
        import select

        if self.child is None or self.child.poll() is not None:
            self.child = self._start()
        assert self.child.stdin and self.child.stdout
        self.child.stdin.write(f"{path}\n")
        self.child.stdin.flush()
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.child.stdout], [], [], deadline - time.monotonic())
            if not ready:
                break
            line = self.child.stdout.readline()
            if not line:
                self.child = None
                return Verdict("CRASH", "the interpreter died")
            if line.startswith("VERDICT "):
                outcome, detail = json.loads(line.removeprefix("VERDICT "))
                return Verdict(outcome, detail)
        self.child.kill()
        self.child = None
        return Verdict("CRASH", f"timeout after {self.timeout} s")


def shrink(spec: grammar.Spec, worker: Worker, outcome: str, folder: Path) -> grammar.Spec:
    """Blocks removed one at a time while the model still ends in `outcome` (delta debugging, one pass
    per removed block)."""
    changed = True
    while changed:
        changed = False
        for path in grammar.paths(spec):
            smaller = grammar.without(spec, path)
            file = folder / "shrink.py"
            file.write_text(grammar.source(smaller))
            if worker.check(file).outcome == outcome:
                spec, changed = smaller, True
                break
    return spec


def on_qemu(path: Path, core: str, work: Path) -> str:
    """create, build and run the model's app on the core's QEMU board: the result line."""
    app = work / "qemu" / f"{path.stem}_{core}"
    cli = [sys.executable, "-m", "cmx_gen"]
    for step in (["create", f"{path}:Fuzzed", "--board", BOARDS[core], "-o", str(app), "--force"], ["build", str(app)]):
        done = subprocess.run(cli + step, capture_output=True, text=True, cwd=ROOT)
        if done.returncode:
            return f"{step[0].upper()} {(done.stderr.strip().splitlines() or [''])[-1][:160]}"
    done = subprocess.run(cli + ["run", str(app)], capture_output=True, text=True, cwd=ROOT)
    return next(
        (l.removeprefix("cmx-gen: ") for l in done.stdout.splitlines() if re.search(r"\b(PASS|FAIL)\b", l)),
        "RUN " + done.stdout[-160:],
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--core", choices=sorted(BOARDS), default="cortex-m55")
    parser.add_argument("--qemu", type=int, default=0, help="also run this many PASSing models on QEMU")
    parser.add_argument("--work", type=Path, default=Path("/tmp/cmx-fuzz"))
    args = parser.parse_args()
    models, failures = args.work / "models", args.work / "failures"
    models.mkdir(parents=True, exist_ok=True)
    failures.mkdir(parents=True, exist_ok=True)
    counts: collections.Counter[str] = collections.Counter()
    reasons: collections.Counter[str] = collections.Counter()
    passed: list[Path] = []
    started = time.monotonic()
    worker = Worker(args.core)
    for n in range(args.count):
        seed = args.seed + n
        spec = grammar.draw(random.Random(seed))
        path = models / f"fuzz_{seed}.py"
        path.write_text(grammar.source(spec))
        verdict = worker.check(path)
        counts[verdict.outcome] += 1
        print(f"seed {seed}: {verdict.outcome} {verdict.detail}", flush=True)
        if verdict.outcome == "REFUSED":
            reasons[verdict.detail] += 1
        elif verdict.outcome == "PASS":
            passed.append(path)
        else:
            small = shrink(spec, worker, verdict.outcome, args.work)
            kept = failures / f"fuzz_{seed}_{verdict.outcome.lower()}.py"
            kept.write_text(f"# {verdict.outcome} on {args.core}: {verdict.detail}\n" + grammar.source(small))
            print(f"  shrunk to {len(grammar.paths(small))} block(s): {kept}", flush=True)
    qemu: collections.Counter[str] = collections.Counter()
    for path in passed[: args.qemu]:
        line = on_qemu(path, args.core, args.work)
        qemu[line.split()[0]] += 1
        print(f"qemu {path.stem}: {line}", flush=True)
    minutes = (time.monotonic() - started) / 60
    seeds = f"{args.seed}..{args.seed + args.count - 1}"
    print(f"\nfuzz {args.core} seeds {seeds}: {dict(counts)} in {minutes:.0f} min")
    for reason, count in reasons.most_common():
        print(f"  refused x{count}: {reason}")
    if qemu:
        print(f"  on QEMU ({BOARDS[args.core]}): {dict(qemu)}")
    return 1 if counts["WRONG"] or counts["CRASH"] or set(qemu) - {"PASS"} else 0


if __name__ == "__main__":
    sys.exit(main())
