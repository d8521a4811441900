"""Turn what the user names on the command line into a model, example inputs and calibration data.

Accepted model sources:
- `path/model.py:name`: `name` is an `nn.Module` subclass (built with no arguments), a factory
  returning a module, or a module instance. The file may define `example_inputs()` and
  `calibration_data()`. Importing a `.py` runs its code: use `.pt2` for models you do not trust.
- `model.pt2`: saved with `torch.export.save`; loading it runs no Python from the file.
- `model.pte`: already lowered; only analysed.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
from numpy.typing import NDArray

from cmx_gen.common.errors import ModelSourceError
from cmx_gen.common.noise import quiet_torch
from cmx_gen.model.calibration import Inputs as Inputs
from cmx_gen.model.calibration import calibration_set, check_finite, read_arrays

quiet_torch()

# A model to lower (a Python module, an exported program) or a program lowered elsewhere (a .pte, a bundled .bpte).
SourceKind = Literal["python", "pt2", "pte", "bpte"]


@dataclass(frozen=True)
class ModelSource:
    """What `load` found: a module ready for export (or a `.pte`), its inputs and calibration.
    Frozen: export (export.py) returns a new object with what it makes."""

    spec: str
    kind: SourceKind
    module: torch.nn.Module | None = None
    example_inputs: Inputs | None = None
    calibration: list[Inputs] = field(default_factory=list)
    calibration_source: str = "none"
    random_calibration: bool = False
    pte: bytes | None = None
    bundle: Any = None  # bundle.Bundle of a .bpte: its program, test inputs and expected outputs
    given_inputs: list[NDArray[Any]] | None = None  # a .pte's check input (--input), else a generated one
    content_hash: str = ""  # hash of the model's files (reported; the cache keys the exported graph)

    @property
    def is_program(self) -> bool:
        """A program lowered elsewhere: analysed, never lowered (the .pte holds no model to export)."""
        return self.pte is not None

    @property
    def spec_identity(self) -> str:
        """Which model was named, independent of the working directory: file name, attribute, class."""
        file_part, _, attr = self.spec.rpartition(":") if self.kind == "python" else (self.spec, "", "")
        cls = type(self.module).__qualname__ if self.module is not None else ""
        return f"{self.kind}:{Path(file_part).name}:{attr}:{cls}"


def parse_shape(text: str) -> tuple[int, ...]:
    """`1,1,49,10` -> (1, 1, 49, 10)."""
    compact = text.replace(" ", "")
    shape = tuple(int(p) for p in re.split(r"[,x]", compact)) if re.fullmatch(r"\d+([,x]\d+)*", compact) else ()
    if not shape or any(dim <= 0 for dim in shape):
        raise ModelSourceError(
            f"--input-shape {text!r} is not a shape", "give positive integers separated by commas, e.g. 1,1,49,10"
        )
    elements = int(np.prod(shape, dtype=np.int64))
    if elements > MAX_INPUT_ELEMENTS:
        raise ModelSourceError(
            f"--input-shape {text} is {elements:,} elements ({elements / 2**20:,.0f} MiB as int8): no Cortex-M holds that",
            f"give the model's real input shape (at most {MAX_INPUT_ELEMENTS:,} elements)",
        )
    return shape


# 16 Mi elements: an int8 input already 16 MiB, past the RAM of any board in the database.
MAX_INPUT_ELEMENTS = 1 << 24


def channels_last(tensor: torch.Tensor) -> torch.Tensor:
    """The cortex_m backend expects the 4-D inputs of spatial models (conv, pool) in channels-last
    memory format; export.export() applies this where the graph has such ops (input_layout.py).

    `.to()`, not `.contiguous()`: for a 1-channel tensor NCHW already counts as channels-last
    contiguous, so `.contiguous()` keeps NCHW strides and the quantizer then rejects every conv.
    """
    if tensor.dim() == 4:
        return tensor.to(memory_format=torch.channels_last)
    if tensor.dim() == 3 and tensor.shape[1] == 1:
        # A one-channel 1-D input (raw audio) is the same bytes as [N, 1, 1, L] channels-last: these
        # strides make the lifted Conv1d's input channels-last without a copy (lower/rewrites/one_d.py).
        return tensor.contiguous().as_strided(tuple(tensor.shape), (int(tensor.shape[2]), 1, 1))
    return tensor


def _as_inputs(value: Any, what: str) -> Inputs:
    if isinstance(value, torch.Tensor):
        value = (value,)
    if isinstance(value, np.ndarray):
        value = (torch.from_numpy(value),)
    if not isinstance(value, (tuple, list)) or not value:
        raise ModelSourceError(
            f"{what} must return a tensor or a tuple of tensors, got {type(value).__name__}",
            "return e.g. (torch.randn(1, 1, 49, 10),)",
        )
    for position, item in enumerate(value):
        if not isinstance(item, torch.Tensor):
            raise ModelSourceError(
                f"{what} input {position} is a {type(item).__name__} ({item!r:.40}), not a tensor: the firmware "
                "feeds tensors only",
                "make that value a constant inside forward, or pass it as a tensor (torch.tensor([...]))",
            )
    return tuple(v.float() if v.is_floating_point() else v for v in value)


def _import_file(path: Path) -> Any:
    name = f"cmx_user_model_{hashlib.sha1(str(path).encode()).hexdigest()[:8]}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ModelSourceError(f"cannot import {path}", "give a Python file ending in .py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the user's code: any error is theirs to fix
        raise ModelSourceError(
            f"importing {path} failed: {type(exc).__name__}: {exc}",
            "fix the error in the model file (run with --debug for the trace)",
        ) from exc
    finally:
        sys.path.remove(str(path.parent))
    return module


def _hash_files(*paths: Path) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _build_module(obj: Any, name: str, path: Path) -> torch.nn.Module:
    try:
        if isinstance(obj, torch.nn.Module):
            module = obj
        elif isinstance(obj, type) and issubclass(obj, torch.nn.Module):
            module = obj()
        elif callable(obj):
            module = obj()
        else:
            raise ModelSourceError(
                f"{path}:{name} is a {type(obj).__name__}, not a model",
                "name an nn.Module subclass, a module instance, or a function returning one",
            )
    except ModelSourceError:
        raise
    except Exception as exc:
        raise ModelSourceError(
            f"building {path.name}:{name} failed: {type(exc).__name__}: {exc}",
            "the class must construct with no arguments (or name a factory function that does)",
        ) from exc
    if not isinstance(module, torch.nn.Module):
        raise ModelSourceError(
            f"{path.name}:{name}() returned {type(module).__name__}, not an nn.Module", "return the model"
        )
    return module.eval()


def _load_python(spec: str) -> ModelSource:
    file_part, _, name = spec.rpartition(":")
    path = Path(file_part)
    if not path.is_file():
        raise ModelSourceError(
            f"model file {path} not found", "check the path before ':' (form: path/model.py:ClassName)"
        )
    if not name:
        raise ModelSourceError(f"no model name in {spec!r}", "use path/model.py:ClassName")
    user = _import_file(path)
    if not hasattr(user, name):
        found = sorted(
            attr
            for attr, value in vars(user).items()
            if isinstance(value, type) and issubclass(value, torch.nn.Module) and value.__module__ == user.__name__
        )
        raise ModelSourceError(
            f"{path.name} has no attribute {name!r}",
            f"use one of: {', '.join(found)}" if found else "define the model class in that file",
        )
    module = _build_module(getattr(user, name), name, path)
    # The model file and its sibling modules (layers it imports); weights are keyed by the state dict.
    content_hash = _hash_files(path, *sorted(p for p in path.parent.glob("*.py") if p != path))
    example = None
    hooks = _hooks(user, module)
    if "example_inputs" in hooks:
        example = _as_inputs(_call_hook(hooks, "example_inputs", path), f"{path.name}:example_inputs()")
    calibration, calibration_source = [], "none"
    if "calibration_data" in hooks:
        samples = list(_call_hook(hooks, "calibration_data", path))
        calibration = [_as_inputs(s, f"{path.name}:calibration_data()") for s in samples]
        calibration_source = f"{path.name}:calibration_data() ({len(samples)} samples)"
        if _own(module, "example_inputs") and not _own(module, "calibration_data"):  # maybe another model's
            calibration_source += f", the file's beside {name}'s own example_inputs()"
    return ModelSource(
        spec=spec,
        kind="python",
        module=module,
        content_hash=content_hash,
        example_inputs=example,
        calibration=calibration,
        calibration_source=calibration_source,
    )


HOOKS = ("example_inputs", "calibration_data")


def _hooks(user: Any, module: torch.nn.Module) -> dict[str, Callable[[], Any]]:
    """example_inputs() / calibration_data() as the user wrote them: methods of the model (static,
    class or plain: called on the built module), else functions of the file. The model's own come
    first: a file of several models gives one its inputs that way."""
    found: dict[str, Callable[[], Any]] = {}
    for name in HOOKS:
        for owner in (module, user):
            hook = getattr(owner, name, None)
            if callable(hook) and not isinstance(hook, torch.nn.Module):
                found[name] = hook
                break
    return found


def _own(module: torch.nn.Module, hook: str) -> bool:
    """The model itself defines this hook (a method), not only its file."""
    return callable(getattr(module, hook, None))


def _call_hook(hooks: dict[str, Callable[[], Any]], name: str, path: Path) -> Any:
    """Call example_inputs() / calibration_data() of the user's file or model; their errors are theirs to fix."""
    try:
        return hooks[name]()
    except Exception as exc:
        raise ModelSourceError(
            f"{path.name}:{name}() failed: {type(exc).__name__}: {exc}",
            f"fix {name}() in {path} (--debug shows the trace)",
        ) from exc


def _shape_hint(module: Any) -> str:
    """The input shape --input-shape wants, as far as the model's first layer tells it."""
    first = next((m for m in module.modules() if not list(m.children())), None) if module is not None else None
    if isinstance(first, torch.nn.Conv2d):
        return f"1,{first.in_channels},H,W (its first layer, a Conv2d, takes {first.in_channels} channels)"
    if isinstance(first, torch.nn.Conv1d):
        return f"1,{first.in_channels},L (its first layer, a Conv1d, takes {first.in_channels} channels)"
    if isinstance(first, torch.nn.Linear):
        return f"1,{first.in_features} (its first layer, a Linear, takes {first.in_features} features)"
    return "with the shape forward() takes (e.g. 1,3,32,32 for a 32 x 32 RGB image)"


def _load_pt2(path: Path) -> ModelSource:
    try:
        program = torch.export.load(str(path))
    except Exception as exc:
        raise ModelSourceError(
            f"{path} is not a loadable .pt2: {type(exc).__name__}: {exc}",
            "save it with torch.export.save(torch.export.export(model, inputs), 'model.pt2') using torch 2.13",
        ) from exc
    args = getattr(program, "example_inputs", None)
    example = _as_inputs(tuple(args[0]), f"{path.name} example inputs") if args and args[0] else None
    return ModelSource(
        spec=str(path),
        kind="pt2",
        module=program.module(check_guards=False),
        content_hash=_hash_files(path),
        example_inputs=example,
    )


def _load_program(spec: str, given_input: str | None) -> ModelSource:
    """A .pte (with the --input its check runs) or a .bpte (its test case is the input): already lowered."""
    path = Path(spec)
    if spec.endswith(".pte"):
        if not path.is_file():
            raise ModelSourceError(f"{path} not found", "check the path to the .pte")
        data = path.read_bytes()
        given = read_arrays(Path(given_input), "--input") if given_input else None
        return ModelSource(
            spec=spec, kind="pte", pte=data, content_hash=hashlib.sha256(data).hexdigest(), given_inputs=given
        )
    # a .bpte
    from cmx_gen.model import bundle

    if not path.is_file():
        raise ModelSourceError(f"{path} not found", "check the path to the .bpte")
    data = path.read_bytes()
    found = bundle.read(data, path.name)
    return ModelSource(
        spec=spec, kind="bpte", pte=found.pte, bundle=found, content_hash=hashlib.sha256(data).hexdigest()
    )


def _load_model(spec: str) -> ModelSource:
    """A model to lower: an exported program (.pt2) or a model in a Python file (path.py:Name)."""
    path = Path(spec)
    if spec.endswith(".pt2"):
        if not path.is_file():
            raise ModelSourceError(f"{path} not found", "check the path to the .pt2")
        return _load_pt2(path)
    if ":" in spec and spec.rpartition(":")[0].endswith(".py"):
        return _load_python(spec)
    if spec.endswith(".py"):
        raise ModelSourceError(f"{spec!r} names no model", f"use {spec}:ClassName")
    raise ModelSourceError(
        f"cannot tell what kind of model {spec!r} is",
        "give path/model.py:ClassName, a .pt2 file, a .pte or a .bpte file",
    )


def load(
    spec: str,
    input_shape: str | None = None,
    calibration: str | None = None,
    random_calibration: bool = False,
    random_samples: int = 16,
    given_input: str | None = None,
) -> ModelSource:
    """Load a model source and settle its example inputs and calibration set."""
    path = Path(spec)
    if given_input and not spec.endswith(".pte"):
        raise ModelSourceError(
            f"--input is for a .pte, whose check has no input of its own; {path.name} is not one",
            "drop --input: the check runs example_inputs() (or the bundle's test case)",
        )
    if spec.endswith((".pte", ".bpte")):
        return _load_program(spec, given_input)
    source = _load_model(spec)
    example = source.example_inputs
    if input_shape:
        shape = parse_shape(input_shape)
        generator = torch.Generator().manual_seed(0)
        example = (torch.rand(shape, generator=generator) * 2 - 1,)
    if example is None:
        raise ModelSourceError(
            f"no example inputs for {spec}",
            "define example_inputs() in the model file (or as a method of the model), or pass "
            f"--input-shape {_shape_hint(source.module)}",
        )
    check_finite([example], "example input")
    samples, random, where = calibration_set(
        spec, example, source.calibration, source.calibration_source, calibration, random_calibration, random_samples
    )
    source = replace(
        source, example_inputs=example, calibration=samples, random_calibration=random, calibration_source=where
    )
    check_finite(source.calibration, f"calibration data {source.calibration_source}")
    return source


def fresh(inputs: Inputs) -> Inputs:
    """Copies (same memory format) for one call: a forward that mutates its input in place
    (`x.sub_(y)`) must not change the example, calibration or reference data it is given."""
    return tuple(x.clone() for x in inputs)


def call_float(module: torch.nn.Module, inputs: Inputs) -> tuple[torch.Tensor, ...]:
    """The user's float model on inputs laid out for the program (channels-last where a conv reads
    them), run as PyTorch users run it: on contiguous copies, the same values (a forward's
    x.view(n, -1) of a conv's output needs the strides it has there)."""
    return call(module, tuple(x.contiguous() for x in inputs))


def call(module: torch.nn.Module, inputs: Inputs) -> tuple[torch.Tensor, ...]:
    """Run a module on copies of the inputs and always get a tuple of tensors back."""
    with torch.no_grad():
        out = module(*fresh(inputs))
    if isinstance(out, torch.Tensor):
        return (out,)
    return tuple(out)
