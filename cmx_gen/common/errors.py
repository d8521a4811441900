"""One exception family. Each error carries the fix the CLI prints beside the problem.

The CLI turns a `CmxError` into one line, `cmx-gen: error: <problem> (fix: <hint>)`, and exit
code 2; the full traceback only with `--debug`.
"""

from __future__ import annotations

from dataclasses import dataclass


class CmxError(Exception):
    """A problem the user can fix; `hint` says how."""

    exit_code = 2

    def __init__(self, problem: str, hint: str = "") -> None:
        super().__init__(problem)
        self.problem = problem
        self.hint = hint
        self.details = ""  # what a third party printed on the way (torch's graph dump); shown with --debug

    def one_line(self) -> str:
        text = self.problem.strip().replace("\n", " ")
        if self.hint:
            text += f" (fix: {self.hint.strip()})"
        return text


class ModelSourceError(CmxError):
    """The model file, attribute, inputs or calibration data cannot be used."""


class ExportError(CmxError):
    """torch.export or the quantize/lower pipeline rejected the model."""


class HostCompilerError(CmxError):
    """No C compiler for this machine, or cmx-gen's own C for it did not compile."""


class TargetError(CmxError):
    """Unknown core, or a program lowered for another ISA."""


class BoardError(CmxError):
    """Unknown board or a broken board file."""


@dataclass(frozen=True)
class Shortfall:
    """One region a placement overflows: its size, what it would need (by item) and by how much."""

    region: str
    kind: str
    size: int
    need: int
    short_bytes: int
    items: dict[str, int]


class FitError(CmxError):
    """The model does not fit the board's memory: which regions are short and by how much, and
    the boards it would fit on (for `check --json`)."""

    exit_code = 3

    def __init__(
        self,
        problem: str,
        hint: str = "",
        board_id: str = "",
        shortfalls: list[Shortfall] | None = None,
        fits_on: list[str] | None = None,
        uses: list | None = None,
    ) -> None:
        super().__init__(problem, hint)
        self.board_id = board_id
        self.shortfalls = shortfalls or []
        self.fits_on = fits_on or []
        self.uses = uses or []  # memory.RegionUse per region of the closest placement tried


class StrictError(CmxError):
    """--strict: compute ops fell back to portable kernels."""

    exit_code = 4


class RenderError(CmxError):
    """The app cannot be (re)generated, e.g. a generated file was edited by the user."""


class AppError(CmxError):
    """A folder given as an app is not one `cmx-gen create` made."""


class SdkError(CmxError):
    """ExecuTorch / CMSIS-NN sources or the toolchain are missing or mismatched."""


class BuildError(CmxError):
    """Configure or build of a generated app failed."""


class RunError(CmxError):
    """The firmware could not be run or did not print a result line."""


class FlashError(CmxError):
    """The image could not be put on the board: no runner, no probe, a tool or target missing."""


class ValidationError(CmxError):
    """An offline check of a generated app failed."""
