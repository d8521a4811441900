"""sample.yaml against Twister's pykwalify schema, plus the rules Twister adds on top, and
the console each scenario's harness must match."""

from __future__ import annotations

import os
import re
from pathlib import Path

import yaml

from cmx_gen.app.kinds.zephyr.checks.result import CheckResult, model_names, one_file
from cmx_gen.common.paths import ROOT
from cmx_gen.device import result_line


def twister_schema_path() -> Path | None:
    """Twister's schema: $CMX_TWISTER_SCHEMA, the one in $ZEPHYR_BASE, or ../shared/zephyr/."""
    candidates = []
    if os.environ.get("CMX_TWISTER_SCHEMA"):
        candidates.append(Path(os.environ["CMX_TWISTER_SCHEMA"]))
    if os.environ.get("ZEPHYR_BASE"):
        candidates.append(Path(os.environ["ZEPHYR_BASE"]) / "scripts/schemas/twister/testsuite-schema.yaml")
    candidates.append(ROOT.parent / "shared/zephyr/twister-testsuite-schema.yaml")
    return next((p for p in candidates if p.is_file()), None)


def check_twister(app: Path) -> CheckResult:
    result, path, name = one_file("twister", app, "sample.yaml")
    if not path.is_file():
        result.fail(name, "missing (Twister finds tests through sample.yaml / testcase.yaml)")
        return result
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        result.fail(name, f"not valid YAML: {exc}")
        return result
    _check_schema(result, name, data)
    if not isinstance(data, dict):
        return result
    tests = data.get("tests")
    if not isinstance(tests, dict) or not tests:
        result.fail(name, "no scenarios under tests: (Twister would not build or run anything)")
        return result
    common = data.get("common") or {}
    models = model_names(app)
    for scenario, spec in tests.items():
        spec = {**common, **(spec or {}), **_merged_lists(common, spec or {})}
        for problem in _scenario_problems(str(scenario), spec, models):
            result.fail(name, problem)
    return result


def _check_schema(result: CheckResult, name: str, data: object) -> None:
    """sample.yaml against Twister's own schema, or a note that only cmx-gen's rules were checked."""
    schema = twister_schema_path()
    if schema is None:
        result.status = "skipped"
        result.note = (
            "Twister schema not found (set ZEPHYR_BASE or CMX_TWISTER_SCHEMA); only cmx-gen's own rules were checked"
        )
        return
    import logging

    from pykwalify.core import Core
    from pykwalify.errors import PyKwalifyException

    logging.getLogger("pykwalify").setLevel(logging.CRITICAL)
    try:
        Core(source_data=data, schema_data=yaml.safe_load(schema.read_text())).validate(raise_exception=True)
    except PyKwalifyException as exc:
        msg = " ".join(str(getattr(exc, "msg", exc)).split())
        result.fail(name, f"does not match Twister's schema: {msg}")


def _scenario_problems(scenario: str, spec: dict, models: list[str]) -> list[str]:
    """What Twister refuses in one scenario, or what would make its harness pass a failing run."""
    named = [] if "." in scenario else [f"scenario '{scenario}' needs a dotted name like <area>.<name> (Twister rule)"]
    problems = []
    allow = spec.get("platform_allow") or []
    allow = allow.split() if isinstance(allow, str) else allow
    problems += [
        f"integration platform {plat} is not in platform_allow"
        for plat in spec.get("integration_platforms") or []
        if plat not in allow
    ]
    cfg = spec.get("harness_config") or {}
    if spec.get("harness") == "console":
        problems += _console_problems(cfg, spec, models)
    for rx in (cfg.get("record") or {}).get("regex") or []:
        try:
            if not re.compile(rx).search(result_line.example("pass")):
                problems.append(f"record regex {rx!r} does not match the result line")
        except re.error as exc:
            problems.append(f"record regex {rx!r} does not compile: {exc}")
    return named + [f"scenario '{scenario}': {problem}" for problem in problems]


def _console_problems(cfg: dict, spec: dict, models: list[str]) -> list[str]:
    """A console harness's regexes against what the scenario's image prints when it passes and fails."""
    regex = cfg.get("regex") or []
    if not regex:
        return ["console harness without harness_config.regex"]
    problems, patterns = [], []
    for rx in regex:
        try:
            patterns.append(re.compile(rx))
        except re.error as exc:
            problems.append(f"regex {rx!r} does not compile: {exc}")
    if problems:
        return problems
    extra = " ".join(str(line) for line in spec.get("extra_configs") or [])
    passing = console(result_line.example("pass"), extra, models)
    failing = console(result_line.example("fail"), extra, models)
    if not _harness_passes(cfg, patterns, passing):
        missing = next((p.pattern for p in patterns if not any(p.search(ln) for ln in passing)), regex[-1])
        problems.append(
            f"regex {missing!r} does not match the cmx-gen PASS line or what follows it in this scenario's image"
        )
    if _harness_passes(cfg, patterns, failing):
        problems.append(f"regex {regex[0]!r} also matches a FAIL line (the harness would pass a failing run)")
    return problems


def _merged_lists(common: dict, spec: dict) -> dict:
    """Twister appends a scenario's lists (extra_configs, ...) to common's instead of replacing them."""
    return {k: [*common[k], *v] for k, v in spec.items() if isinstance(v, list) and isinstance(common.get(k), list)}


def console(line: str, extra_configs: str, models: list[str] | None = None) -> list[str]:
    """What an image prints (data/result_line.yaml examples): the check's result line (an app of
    several models: each model's, then the summary), then the profile's rows (CONFIG_CMX_PROFILE=y);
    the application image (no CONFIG_CMX_CHECK=y) prints its calls and its done line when it runs
    through, the FAIL line when it stops on an error."""
    if "CONFIG_CMX_CHECK=y" not in extra_configs:
        return (
            [result_line.example("call"), result_line.example("done")]
            if line == result_line.example("pass")
            else [line]
        )
    if models and line == result_line.example("pass"):
        return result_line.several_example(models)
    if models:  # the first model fails: its line, the others', a failing summary
        return (
            [f"{line} model={models[0]}"] + result_line.several_example(models)[1:-1] + [f"{line} models={len(models)}"]
        )
    lines = [line]
    if "CONFIG_CMX_PROFILE=y" in extra_configs:
        lines += result_line.example("prof")
    return lines


def _harness_passes(cfg: dict, patterns: list[re.Pattern], lines: list[str]) -> bool:
    """Twister's console harness: one_line passes on its regex; multi_line on all, in order if `ordered`."""
    if cfg.get("type", "one_line") == "one_line":
        return any(patterns[0].search(line) for line in lines)
    at = 0
    for pattern in patterns:
        hits = [i for i, line in enumerate(lines) if pattern.search(line) and (i >= at or not cfg.get("ordered"))]
        if not hits:
            return False
        at = hits[0] + 1
    return True
