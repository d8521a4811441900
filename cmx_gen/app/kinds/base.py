"""What an app kind is: one class over one interface (like Zephyr's runners and west's commands).

A kind names its template (`templates/<template>/`: cookiecutter files plus cmx_template.yaml),
adds what its template needs to the shared render context, and knows how its apps are built, run,
flashed and checked offline. `create`, `build`, `run`, `flash` and `validate` only ask the kind of
the app at hand (`cmx_gen.app.kinds.app_kind`); a new kind is one new module registered in
`cmx_gen/app/kinds/__init__.py` (or with `register()`), plus its template.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from cmx_gen.common.errors import CmxError
from cmx_gen.common.paths import TEMPLATES_DIR

if TYPE_CHECKING:
    from cmx_gen.app.folder import AppFolder
    from cmx_gen.app.template_context import TemplateContext
    from cmx_gen.device.flash import FlashConfig, Flasher
    from cmx_gen.device.runners.base import Runner
    from cmx_gen.fit.boards import Board
    from cmx_gen.fit.memory import Placement
    from cmx_gen.program.report import Report


@dataclass
class Built:
    """What a build gives `run` and `flash`: the image (an ELF, or a build folder the kind's runner
    takes) and the lines `cmx-gen build` prints about it."""

    image: Path
    lines: list[str]


# Where an app's firmware prints: a UART the board's console reads, or the debugger (semihosting).
Console = Literal["uart", "semihosting"]


class AppKind:
    name = ""  # the `rtos` of cmx.toml and `--rtos`
    template = ""  # folder under templates/
    description = ""
    noun = "app"  # what `create` calls what it made
    # How a run of it is recorded, and how a profile is made (the HTML page says so where it has none).
    run_hint = "<code>cmx-gen build APP && cmx-gen run APP</code> records one"
    profile_hint = "<code>cmx-gen run APP --profile</code> adds one"
    # The program's section (model/model_pte.S): the app's linker script places it; a package's is
    # one a generic linker script already places.
    pte_section = ".cmx_model"
    # Whether its apps can keep the model in the board's model slots (placement = "slot").
    model_slots = False
    image_is_file = True  # its image is one ELF (`flash --elf` may name another); else a build folder
    host_samples = False  # its application reads samples the host sends (`run --data`)

    def console(self, board: Board) -> Console:
        """Where its firmware prints on this board (`run --serial` needs a UART)."""
        return "uart"

    def created_notes(self, board: Board) -> list[str]:
        """What `create` adds to its summary about this kind of app on this board."""
        return []

    def streams_by_semihosting(self, image: Path) -> bool:
        """`run --data`: whether this built image reads the samples from a host file (semihosting);
        else they go to its console as frames."""
        return False

    def require_image(self, command: str) -> None:
        """Refuse, in one line, a command (`cmx-gen run`, `flash`) that needs an image this kind
        does not make (a package's image is the user's firmware)."""

    def next_steps(self, app: Path) -> list[str]:
        """What `create` tells the user to do next with what it made."""
        quoted = shlex.quote(str(app))
        return [f"next       cmx-gen build {quoted} && cmx-gen run {quoted} && cmx-gen run {quoted} --app"]

    def template_dir(self) -> Path:
        return TEMPLATES_DIR / self.template

    def check_board(self, board: Board) -> None:
        """Refuse, before anything slow, a board this kind cannot make an app for."""

    def context(self, ctx: TemplateContext, report: Report, placement: Placement, board: Board) -> Mapping[str, object]:
        """Context the kind's template needs beyond the shared one (`ctx`: board, placement, model as
        the templates see them; the typed objects beside it). Only the kind's template reads it."""
        return {}

    def build(
        self,
        app: AppFolder,
        build_dir: Path | None = None,
        clean: bool = False,
        jobs: int | None = None,
        defines: list[str] | None = None,
        diagnostic: str | None = None,
    ) -> Built:
        raise CmxError(f"{self.name} apps are not built by cmx-gen", "build it with its own tools")

    def diagnostic_build_command(self, app: AppFolder, build_dir: Path, diagnostic: str) -> list[str] | None:
        """The command `run --profile/--trace --dry-run` prints for building that image, if one."""
        return None

    def image(self, app: AppFolder, build_dir: str = "build") -> Path | None:
        """The built image in APP/<build_dir>, if there is one."""
        return None

    def app_image(self, app: AppFolder) -> Path | None:
        """The user's application image (beside the check), built by `build`, if there is one."""
        return None

    def runner(self, app: AppFolder, timeout: float, name: str | None = None) -> Runner:
        raise CmxError(f"{self.name} apps have no runner in cmx-gen", "run it with its own tools")

    def flasher(self, config: FlashConfig) -> Flasher:
        from cmx_gen.device.flash import plan

        return plan(config)

    def checks(self) -> dict[str, Callable[[Path], Any]]:
        """Offline checks `cmx-gen validate` runs (name -> check(app) -> a result with name, status,
        findings, checked files and a note; kinds/zephyr/checks/result.CheckResult)."""
        return {}

    def not_checked(self) -> list[str]:
        """What those checks cannot see, printed after them so a PASS is not read as more than it is."""
        return []
