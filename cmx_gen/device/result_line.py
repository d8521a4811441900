"""The firmware's console lines, from their one definition in data/result_line.yaml: the regexes
cmx-gen parses them with, the ones the Zephyr app gives Twister, and the example lines `validate`
feeds its simulated harness. The runner (cmx_runner.cpp) prints them; a test holds it to the file."""

from __future__ import annotations

import functools
import re
from typing import Any

import yaml

from cmx_gen.common.paths import DATA_DIR


@functools.lru_cache(maxsize=1)
def spec() -> dict[str, Any]:
    data = yaml.safe_load((DATA_DIR / "result_line.yaml").read_text())
    # The prefix goes into regexes as it is: keep it free of regex syntax.
    assert re.fullmatch(r"[A-Za-z0-9: _-]+", data["prefix"]), data["prefix"]
    return data


def prefix() -> str:
    return spec()["prefix"]


def keys() -> list[str]:
    """Every field key the runner may print, in order (alternatives in place)."""
    out: list[str] = []
    for field in spec()["fields"]:
        out += field.get("keys") or [field["key"]]
    return out


@functools.lru_cache(maxsize=1)
def result_re() -> re.Pattern[str]:
    """Any result line: group 1 the verdict, group 2 the ` key=value` fields (parsed by key)."""
    return re.compile(rf"{prefix()}({'|'.join(spec()['verdicts'])})((?: [a-z_]+=\S+)*)")


@functools.cache
def diagnostic_re(tag: str) -> re.Pattern[str]:
    """A diagnostic line (`prof`, `trace`, `out`, `slot`): one group per part, a number unless the part
    is named otherwise (result_line.yaml)."""
    named = {"hex": r"([0-9a-f]+)", "slot": r"([a-d])", "status": r"status=([a-z_]+)"}
    keyed = ("sequence", "bytes")
    parts = [named.get(n, rf"{n}=(\d+)" if n in keyed else r"(\d+)") for n in spec()["diagnostics"][tag]]
    return re.compile(rf"{prefix()}{re.escape(tag)} " + " ".join(parts))


@functools.lru_cache(maxsize=1)
def call_re() -> re.Pattern[str]:
    """One call of the user's application: group 1 the call, 2 the input's source, 3 the fields."""
    app = spec()["application"]
    return re.compile(rf"{prefix()}{app['call']} (\d+) input=({'|'.join(app['inputs'])})((?: [a-z_]+=\S+)*)")


@functools.lru_cache(maxsize=1)
def app_end_re() -> re.Pattern[str]:
    """The application's last line: its `done` line, or a FAIL it stopped on."""
    return re.compile(rf"{prefix()}(?:{spec()['application']['done']} calls=(\d+)|FAIL error=)")


def twister_app_done() -> str:
    """Twister's regex for the end of the user's application loop."""
    return f"^{prefix()}{spec()['application']['done']} calls=[0-9]+"


def twister_pass() -> str:
    """Twister's console-harness regex for a passing run: the PASS verdict and its first field."""
    return f"^{prefix()}PASS {spec()['fields'][0]['key']}="


def twister_model_pass(name: str) -> str:
    """Twister's regex for one model's PASS line in an app of several (its line ends `model=<name>`)."""
    return f"^{prefix()}PASS {spec()['fields'][0]['key']}=.* model={name}$"


def twister_summary_pass() -> str:
    """Twister's regex for the summary line of an app of several models: every model passed."""
    return f"^{prefix()}PASS {spec()['fields'][0]['key']}=.* models=[0-9]+"


def several_example(models: list[str]) -> list[str]:
    """What the check of an app of several models prints when all pass: each model's line, the summary."""
    line = example("pass")
    return [f"{line} model={name}" for name in models] + [f"{line} models={len(models)}"]


def twister_record() -> str:
    """Twister's `record` regex: every field of the result line in its own named group."""
    text = f"{prefix()}(?P<result>{'|'.join(spec()['verdicts'])})"
    for field in spec()["fields"]:
        value = field.get("value", r"\S+")
        if field.get("keys"):
            part = f" (?P<{field['key_group']}>{'|'.join(field['keys'])})=(?P<{field['group']}>{value})"
        else:
            part = f" {field['key']}=(?P<{field['group']}>{value})"
        text += f"(?:{part})?" if field.get("optional") else part
    return text


def twister_diagnostic(tag: str) -> str:
    """Twister's regex for the first line of a diagnostic (the profile's row 0)."""
    return f"^{prefix()}{tag} 0 [0-9]+"


def example(kind: str) -> Any:
    return spec()["examples"][kind]


def template_context() -> dict[str, str]:
    """`cookiecutter.result_line` for the app templates (sample.yaml)."""
    return {
        "pass": twister_pass(),
        "record": twister_record(),
        "profile": twister_diagnostic("prof"),
        "app_done": twister_app_done(),
        "model_pass": twister_model_pass("NAME"),
        "summary_pass": twister_summary_pass(),
    }
