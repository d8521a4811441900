"""Quantize and lower a model to a cortex_m `.pte` with ExecuTorch's own APIs.

export -> prepare_pt2e(CortexMQuantizer) -> calibrate -> convert_pt2e -> export -> to_edge with
`cortex_m_edge_compile_config()` -> `CortexMPassManager` (for the target's ISA) -> to_executorch.

The scratch buffers CortexMPassManager plans depend on the ISA (a pte lowered for DSP cores
corrupts memory on an M55 and the reverse fails), so the target is recorded in every output.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from cmx_gen.lower import conv_choice, dead_constants, exact_rewrites, fp32_linear, instructions, int8_io, keep_fp32, layer_error, target_checks


from cmx_gen.common import progress
from cmx_gen.common.noise import quiet_executorch, quiet_third_party
from cmx_gen.common.targets import TARGETS, canonical_core
from cmx_gen.common.errors import ExportError, TargetError
from cmx_gen.model.export import Exported, export_error, first_line
from cmx_gen.model.source import Inputs, call, fresh
from cmx_gen.lower.reference import KernelExactInterpreter, OpDiff, run_references



ERROR_SAMPLES = 32  # calibration samples the INT8-vs-float error is measured on


@dataclass
class Target:
    core: str  # "cortex-m55"
    isa: str  # "MVE" | "DSP" | "SCALAR"

    def to_dict(self) -> dict[str, str]:
        return {"core": self.core, "isa": self.isa}


def target_config(core: str) -> Any:
    """executorch's CortexMTargetConfig for a `cortex-mXX` name (one-line error otherwise)."""
    quiet_third_party()
    from executorch.backends.cortex_m.target_config import CortexMTargetConfig

    if canonical_core(core) not in TARGETS:
        raise TargetError(f"unknown target {core!r}", f"use one of: {', '.join(TARGETS)} (or the short m55, m4, ...)")
    return CortexMTargetConfig.from_target_string(canonical_core(core))


def resolve_target(core: str) -> Target:
    return Target(core=canonical_core(core), isa=target_config(core).backend.name)


@dataclass(frozen=True)
class LowerOptions:
    """Lowering choices beyond the target; every field is part of the cache key and the report."""

    # Parts of the model left in float on portable kernels: a module path (`features.3`), a
    # line of the model file (`model.py:15`), or a node name of the exported graph (`bmm_1`).
    keep_fp32: tuple[str, ...] = ()
    # "int8": the program takes and returns int8 tensors, no quantize/dequantize at its edges (int8_io.py).
    io: str = "float"

    def to_dict(self) -> dict[str, Any]:
        return {"keep_fp32": list(self.keep_fp32), "io": self.io}


@dataclass
class LoweredModel:
    """The result of lowering: program bytes plus what is needed to check it later."""

    pte: bytes
    target: Target
    sample_inputs: Inputs
    reference_outputs: tuple[torch.Tensor, ...]  # the CMSIS-NN kernels' result (reference.py)
    python_outputs: tuple[torch.Tensor, ...] | None  # ExecuTorch's Python ops' result (None: they cannot run it)
    float_outputs: tuple[torch.Tensor, ...]
    # (float model, kernel-exact program) per error sample; (kernel-exact, Python) per error sample
    calibration_outputs: list[tuple[tuple[torch.Tensor, ...], tuple[torch.Tensor, ...]]] = field(default_factory=list)
    calibration_references: list[tuple[tuple[torch.Tensor, ...], tuple[torch.Tensor, ...] | None]] = field(default_factory=list)
    op_diffs: list[OpDiff] = field(default_factory=list)
    python_missing: set[str] = field(default_factory=set)  # ops ExecuTorch's Python reference cannot run
    timings: dict[str, float] = field(default_factory=dict)
    instruction_names: dict[int, dict[str, str]] = field(default_factory=dict)  # instructions.node_names
    io: int8_io.IoQuant | None = None  # --io int8: the I/O quantization the caller applies
    node_values: dict[str, Any] = field(default_factory=dict)  # every op's result on the sample input, by node
    # lower(evaluate=...): per sample, (what the program takes, its kernel-exact outputs, the float model's outputs)
    evaluated: list[tuple[Inputs, tuple[torch.Tensor, ...], tuple[torch.Tensor, ...]]] = field(default_factory=list)
    rewrites: list[exact_rewrites.Rewrite] = field(default_factory=list)  # exact rewrites applied before quantizing
    layers: list[layer_error.LayerError] = field(default_factory=list)  # per-layer error against the float model


_FAILED_PASS = re.compile(r"running the '(\w+)' pass")
_FAILED_NODE = re.compile(r"While executing %(\w+)")


def _lowering_error(exc: Exception) -> ExportError:
    """A cortex_m pass that fails names its pass; torch's cause names the node and the user's line.
    Say all three and offer what works: leaving that line in float."""
    chain, cause = [], exc
    while cause is not None and len(chain) < 8:
        chain.append(cause)
        cause = cause.__cause__ or cause.__context__
    text = "\n".join(str(c) for c in chain)
    pass_name = _FAILED_PASS.search(text)
    node = _FAILED_NODE.search(text)
    frame = re.search(r'Original traceback:\s*File "([^"]+)", line (\d+)', text)
    if not pass_name:
        return export_error("lowering", exc)
    root = chain[-1]
    where = f" at node {node.group(1)}" if node else ""
    line = f"{Path(frame.group(1)).name}:{frame.group(2)}" if frame else None
    if line:
        where += f" (from {line})"
    return ExportError(
        f"executorch's cortex_m pass {pass_name.group(1)} failed{where}: {type(root).__name__}: {first_line(root)}",
        (f"leave that part in float on portable kernels with --keep-fp32 {line}" if line else
         "leave that part in float on portable kernels with --keep-fp32 MODULE_PATH")
        + " (the rest stays on CMSIS-NN); --debug shows the full trace",
    )


def _like(sample: Inputs, example: Inputs) -> Inputs:
    """A sample in the memory format the lowering gave the example inputs (channels-last where spatial)."""
    return tuple(x.contiguous(memory_format=torch.channels_last)
                 if e.dim() == 4 and e.is_contiguous(memory_format=torch.channels_last) and not e.is_contiguous()
                 else x.contiguous() for x, e in zip(sample, example))


def lower(exported: Exported, core: str, options: LowerOptions = LowerOptions(),
          evaluate: Sequence[Inputs] = ()) -> LoweredModel:
    """Quantize with the calibration set and lower for one core; compute reference outputs.
    `evaluate`: more samples (float, logical shape) to run through the program and the float model
    (`cmx-gen run --data`): their outputs come back in `LoweredModel.evaluated`."""
    import time

    config = target_config(core)
    core = canonical_core(core)
    target = Target(core=core, isa=config.backend.name)
    from executorch.backends.cortex_m.edge_compile_config import cortex_m_edge_compile_config
    from executorch.backends.cortex_m.passes.cortex_m_pass_manager import CortexMPassManager
    from executorch.exir import EdgeProgramManager, to_edge
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    quiet_executorch()  # executorch resets its logger level on import

    source = exported.source
    assert source.module is not None
    timings: dict[str, float] = {}
    started = time.monotonic()

    with progress.step(f"exporting for {core} ({target.isa})"):
        graph = exported.program.module(check_guards=False)
        rewrites = exact_rewrites.apply(graph)
        if rewrites:  # export the rewritten graph again: the quantizer reads every node's shapes
            graph = torch.export.export(graph, exported.inputs).module(check_guards=False)
    float_outputs = exported.float_outputs
    inputs = exported.inputs  # channels-last where the model is spatial
    timings["export_s"] = time.monotonic() - started

    float_graph = copy.deepcopy(graph)  # the float values per layer (layer_error.py); prepare edits `graph`
    with progress.step(f"calibrating on {len(exported.calibration)} samples"):
        quantizer = keep_fp32.quantizer(options.keep_fp32, graph)
        try:
            prepared = prepare_pt2e(graph, quantizer)
            for sample in exported.calibration:
                prepared(*fresh(sample))
            quantized = convert_pt2e(prepared)
            scales = layer_error.output_scales(quantized)
        except Exception as exc:
            raise export_error("quantization", exc) from exc
    timings["calibrate_s"] = time.monotonic() - started - sum(timings.values())

    with progress.step("lowering to cortex_m (CMSIS-NN) kernels"):
        try:
            edge = to_edge(torch.export.export(quantized, inputs), compile_config=cortex_m_edge_compile_config())
            io = int8_io.strip_boundaries(edge.exported_program()) if options.io == "int8" else None
            with conv_choice.one_channel_convs_as_conv():
                lowered = CortexMPassManager(edge.exported_program(), target_config=config).transform()
            if io:
                io = int8_io.drop_output_requantize(lowered, io)
            dead_constants.drop(lowered)
        except ExportError:
            raise
        except Exception as exc:
            raise _lowering_error(exc) from exc
        # --io int8: the program is fed what the caller's quantization of the float inputs gives.
        program_inputs = int8_io.quantize_inputs(inputs, io) if io else inputs
        # Reference outputs come from the lowered program itself (cortex_m ops have Python
        # implementations, and kernel_models.py the C kernels' exact arithmetic where those
        # round differently), before to_executorch turns the graph into out-variants.
        fp32_linear.decompose(lowered)
        target_checks.check(lowered.graph_module)
        runnable = lowered.module()
        exact = KernelExactInterpreter(runnable, target.isa)
        exact.record = {}  # every op's result for the sample input: the on-target trace's reference
        try:
            runs = run_references(runnable, program_inputs, exact)
        except Exception as exc:
            raise ExportError(
                f"the lowered program does not run: {type(exc).__name__}: {first_line(exc)} "
                "(an op was left on int8 data without a cortex_m kernel)",
                "place activations directly after a conv/linear layer, or replace the op named above; --debug shows where",
            ) from exc
        node_values, exact.record = exact.record, None
        # The Python reference kernels are slow (~0.6 s a sample for DS-CNN): measure the INT8
        # error on an evenly spread subset of the calibration set.
        step = max(1, len(exported.calibration) // ERROR_SAMPLES)
        subset = exported.calibration[::step][:ERROR_SAMPLES]
        try:
            calibration_outputs, calibration_references, per_layer = [], [], []
            for sample in subset:
                exact.record = {}
                sample_runs = run_references(runnable, int8_io.quantize_inputs(sample, io) if io else sample, exact)
                per_layer.append((sample, exact.record))
                exact.record = None
                calibration_outputs.append((call(source.module, sample), sample_runs.kernel_exact))
                calibration_references.append((sample_runs.kernel_exact, sample_runs.python))
        except Exception as exc:
            raise export_error("running the lowered program on calibration data", exc) from exc
        with progress.step(f"per-layer error against the float model on {len(subset)} samples"):
            layers = layer_error.layer_errors(float_graph, scales, runnable, per_layer)
        evaluated = []
        exact.compare_python = False
        for index, sample in enumerate(evaluate):
            sample = _like(sample, inputs)
            fed = int8_io.quantize_inputs(sample, io) if io else sample
            with torch.no_grad():
                out = exact.run(*fresh(fed))
            evaluated.append((fed, (out,) if isinstance(out, torch.Tensor) else tuple(out), call(source.module, sample)))
            if (index + 1) % 50 == 0 or index + 1 == len(evaluate):
                progress.say(f"host reference: {index + 1}/{len(evaluate)} samples")
        try:
            program = EdgeProgramManager(lowered, compile_config=cortex_m_edge_compile_config()).to_executorch()
            pte = program.buffer
        except Exception as exc:
            raise export_error("serialization (to_executorch)", exc) from exc
    timings["lower_s"] = time.monotonic() - started - sum(timings.values())

    return LoweredModel(
        pte=pte,
        target=target,
        sample_inputs=program_inputs,
        reference_outputs=runs.kernel_exact,
        python_outputs=runs.python,
        float_outputs=float_outputs,
        calibration_outputs=calibration_outputs,
        calibration_references=calibration_references,
        op_diffs=list(exact.diffs.values()),
        python_missing=set(exact.python_missing),
        timings=timings,
        instruction_names=instructions.node_names(program.exported_program().graph_module),
        node_values=node_values,
        io=io,
        evaluated=evaluated,
        rewrites=rewrites,
        layers=layers,
    )
