"""What every offline check returns: findings per file, and the files it looked at."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

Status = Literal["pass", "fail", "skipped"]


@dataclass
class Finding:
    file: str
    problem: str

    def __str__(self) -> str:
        return f"{self.file}: {self.problem}"


@dataclass
class CheckResult:
    name: str
    status: Status = "pass"
    findings: list[Finding] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)  # files looked at
    note: str = ""

    def fail(self, file: str, problem: str) -> None:
        self.status = "fail"
        self.findings.append(Finding(file, problem))


def rel(app: Path, path: Path) -> str:
    try:
        return str(path.relative_to(app))
    except ValueError:
        return str(path)


def board_files(app: Path, suffix: str) -> list[Path]:
    return sorted((app / "boards").glob(f"*{suffix}")) if (app / "boards").is_dir() else []


def model_names(app: Path) -> list[str]:
    """An app of several models: their names, as the app folder knows them; empty for one."""
    from cmx_gen.app.folder import AppFolder

    return AppFolder(app).model_names()


def one_file(check: str, app: Path, file: str) -> tuple[CheckResult, Path, str]:
    """A check of one file of the app: its result with the file recorded as looked at, the file's
    path, and its name as the findings give it."""
    result = CheckResult(check)
    path = app / file
    name = rel(app, path)
    result.checked.append(name)
    return result, path, name
