"""The report for people: the table `lower` and `create` print, report.md, and the one-line notes
(worst layers, rewrites, where ExecuTorch's own reference differs)."""

from __future__ import annotations

from cmx_gen.common.format import size
from cmx_gen.lower.delegate.plan import kernel_from, kernel_label
from cmx_gen.lower.facts import S4_KINDS
from cmx_gen.program.report import FloatPart, LayerError, OpDiff, Report, Rewrite, Schedule, TensorSpec

CLASS_LABELS = {
    "cmsis_nn": "CMSIS-NN",
    "quant_boundary": "quant boundary",
    "data_movement": "portable data movement",
    "fallback": "PORTABLE FALLBACK",
}


def _spec_line(spec: TensorSpec) -> str:
    text = f"{spec.dtype}{list(spec.shape)} dim_order={spec.dim_order}"
    q = spec.quant
    if q:
        kind = "int8 I/O (--io int8): real = scale * (q - zero_point)," if q.at == "io" else "quantized"
        text += f" {kind} scale={q.scale:.6g} zero_point={q.zero_point}"
    return text


def schedule_line(s: Schedule) -> str:
    """One delegate call's memory schedule in a line: what it takes against layer-by-layer."""
    n, k = s.written_over_input, s.inputs_in_work
    shared = (
        [f"{n} layer{'s' if n > 1 else ''} write{'' if n > 1 else 's'} over {'their' if n > 1 else 'its'} input"]
        if n
        else []
    )
    shared += [f"{k} input{'s' if k > 1 else ''} in the working memory"] if k else []
    m = s.outputs_in_work
    shared += [f"{m} output{'s' if m > 1 else ''} in the working memory"] if m else []
    extra = (
        "no extra instructions"
        if s.extra_instructions == 0
        else "extra instructions not measured"
        if s.extra_instructions is None
        else f"about {s.extra_instructions:+,} instructions"
    )
    if s.patch_layers:
        shared += [
            f"the first {s.patch_layers} layers patch by patch ({s.patch_grid} patches of {s.patch_until},"
            f" {s.patch_extra_macs:,} MACs again)"
        ]
    return (
        f"delegate {s.delegate} ({s.goal}): working memory {size(s.work_bytes)} (layer by layer {size(s.layer_by_layer_bytes)};"
        f" its floor {size(s.floor_bytes)} at {s.floor_at})"
        + (f"; peak {size(s.peak_bytes)} at {s.peak_at}" if s.peak_at else "; no layer needs working memory")
        + "".join(f"; {x}" for x in shared)
        + f"; {extra}"
    )


def table(report: Report) -> str:
    """The plain-text summary printed on stdout."""
    mem = report.memory
    lines = [
        f"model      {report.source}",
        f"target     {report.target.core} ({report.target.isa})   executorch {report.executorch_version}",
        f".pte       {size(report.pte.bytes)} (weights/constants {size(report.pte.constant_bytes)})",
        f"memory     planned {size(mem.planned_bytes)} (largest CMSIS-NN scratch {size(mem.scratch_bytes)}), "
        f"method allocator {size(mem.method_allocator_bytes)}, temp {size(mem.temp_allocator_bytes)}"
        + (f"; inputs in the caller's buffers {size(mem.caller_input_bytes)}" if mem.caller_input_bytes else "")
        + ("; convolution weights staged in scratch (stage_weights)" if report.lowering_options.stage_weights else ""),
    ]
    lines += [f"schedule   {schedule_line(s)}" for s in report.schedules]
    for i, spec in enumerate(report.inputs):
        lines.append(f"input {i}    {_spec_line(spec)}")
    for i, spec in enumerate(report.outputs):
        lines.append(f"output {i}   {_spec_line(spec)}")
    lines.append("")
    width = max((len(op.name) for op in report.operators), default=10)
    lines.append(f"{'operator':<{width}}  {'nodes':>5}  kernel")
    for op in report.operators:
        label = CLASS_LABELS[op.class_]
        if op.name.startswith("cmx::"):  # a layer kind of cmx-gen's own backend
            label = "cmx backend: " + kernel_label(op.name[5:])
        lines.append(f"{op.name:<{width}}  {op.count:>5}  {label}")
    compute = [op for op in report.operators if op.class_ in ("cmsis_nn", "fallback")]
    accelerated = sum(op.count for op in compute if op.class_ == "cmsis_nn")
    total = sum(op.count for op in compute)
    lines.append("")
    own = any(op.name.startswith("cmx::") and kernel_from(op.name[5:]) == "cmx-gen" for op in compute)
    lines.append(
        f"compute    {accelerated}/{total} nodes on CMSIS-NN"
        + (" or cmx-gen's kernels" if own else "")
        + (f"; fallbacks: {', '.join(report.fallbacks)}" if report.fallbacks else "")
    )
    qe = report.quantization_error
    if qe:
        text = f"quantization error max |float - quantized| = {qe.max_abs_err:.4g} over {qe.samples} inputs"
        if qe.top1_agreement is not None:
            text += f", top-1 agreement {qe.top1_agreement * 100:.1f} %"
        lines.append(text)
    cal = report.calibration
    if cal:
        lines.append(f"calibrated {cal.source}" + ("  ** RANDOM: accuracy not representative **" if cal.random else ""))
    for rewrite in report.rewrites:
        lines.append(f"rewrite    {describe_rewrite(rewrite)}")
    for part in report.float_parts:
        lines.append(f"float      {describe_float_part(part)}")
    lines += [f"weights    {line}" if i == 0 else f"  {line}" for i, line in enumerate(weight_lines(report))]
    lines += [f"precision  {line}" if i == 0 else f"  {line}" for i, line in enumerate(precision_lines(report))]
    worst = worst_layers(report)
    if worst:
        lines.append("worst layers (SQNR against the float model, calibration inputs; what each layer loses):")
        lines += [f"  {describe_layer(layer)}" for layer in worst]
    note = reference_note(report)
    if note:
        lines.append(f"reference  {note}")
    return "\n".join(lines)


def worst_layers(report: Report, count: int = 5) -> list[LayerError]:
    """The `count` layers that lose the most SQNR, worst first (the inputs' quantization has no
    input to lose against: report.json has its SQNR)."""
    ranked = [layer for layer in report.layers if layer.sqnr_drop_db is not None]
    return sorted(ranked, key=lambda layer: layer.sqnr_drop_db or 0.0, reverse=True)[:count]


def _where(module: str, source: str | None) -> str:
    """`features.3, model.py:17 x = ...`: the module path, and the user's line where known."""
    return f"{module}, {source}" if source else module


def describe_layer(layer: LayerError) -> str:
    """`loses 4.2 dB, 23.9 dB after it, max 0.79  op #9 cortex_m::quantized_conv2d (blocks.3, model.py:59 ...)`."""
    return (
        f"loses {layer.sqnr_drop_db:4.1f} dB, {layer.sqnr_db:5.1f} dB after it, max {layer.max_abs_err:.3g}  "
        f"op #{layer.index} {layer.op} ({_where(layer.module, layer.source)})"
    )


def describe_rewrite(rewrite: Rewrite) -> str:
    """`aten::conv_transpose2d (up, model.py:9 ...): stride [2, 2] with padding [1, 1]: ...`."""
    return f"{rewrite.op} ({_where(rewrite.module, rewrite.source)}): {rewrite.what}"


def describe_float_part(part: FloatPart) -> str:
    """`aten::bmm (Attention, model.py:13 ...), 1 node: left in float by cmx-gen: executorch's ...`."""
    count = f"{len(part.nodes)} node{'s' if len(part.nodes) != 1 else ''}"
    return f"{', '.join(part.ops)} ({_where(part.module, part.source)}), {count}: {part.reason}"


def weight_lines(report: Report) -> list[str]:
    """What 4-bit weights the program has and, with `--weights auto`, why each layer has its precision:
    a headline, then a line a layer (none for int8 weights)."""
    options, choice = report.lowering_options, report.weight_choice
    s4 = [layer for layer in report.delegated_layers if layer.kind in S4_KINDS]
    if options.weights == "int8" and not options.weights_for and choice is None:
        return []
    head = f"{options.weights}: {len(s4)} layer(s) run 4-bit weights (CMSIS-NN's s4 kernels, cmx_fully_connected_s4)"
    if choice is None:
        return [head]
    taken = sum(layer.weights == "int4" for layer in choice.layers)
    lines = [
        f"{head}; auto took {taken} of {len(choice.layers)} to int4: output SQNR {choice.chosen_db:.1f} dB against "
        f"float (target {choice.target_db:.1f}; all int8 {choice.int8_db:.1f}, all int4 {choice.int4_db:.1f}), "
        f"{choice.trials} lowerings; in the order taken, the least SQNR lost per byte saved first:"
    ]
    for layer in choice.layers:
        alone = f", alone at int4 {layer.alone_db:.1f} dB" if layer.alone_db is not None else ""
        lines.append(f"{layer.module}: {layer.weights}, {layer.bytes_int8:,} B at int8{alone}")
    return lines


def precision_lines(report: Report) -> list[str]:
    """What 16-bit activations the program has and, with `--precision auto`, why each layer has its
    precision: a headline (the s16 kinds and their counts), then a line a layer (none at int8)."""
    options, choice = report.lowering_options, report.precision_choice
    if options.precision == "int8" and not options.precision_for:
        return []
    s16 = [layer.kind for layer in report.delegated_layers if layer.kind.endswith("_s16")]
    kinds = ", ".join(f"{kind} {s16.count(kind)}" for kind in sorted(set(s16)))
    overrides = f" ({', '.join(options.precision_for)})" if options.precision_for else ""
    head = f"{options.precision}{overrides}: {len(s16)} layer(s) run 16-bit activations on CMSIS-NN's s16 kernels"
    head += f": {kinds}" if kinds else ""
    if choice is None:
        return [head]
    taken = sum(layer.precision == "int16" for layer in choice.layers)
    short = ", not reached: every layer int16 falls short" if choice.chosen_db < choice.target_db else ""
    lines = [
        f"{head}; auto took {taken} of {len(choice.layers)} to int16: output SQNR {choice.chosen_db:.1f} dB against "
        f"float, each sample's averaged (target {choice.target_db:.1f}{short}; all int8 {choice.int8_db:.1f}, all int16 "
        f"{choice.int16_db:.1f}), {choice.trials} lowerings; in the order tried, the most SQNR gained per byte "
        "added first:"
    ]
    for layer in choice.layers:
        alone = f", alone at int16 {layer.alone_db:.1f} dB" if layer.alone_db is not None else ""
        if layer.without_db is not None:
            alone += f", the others without it {layer.without_db:.1f} dB"
        lines.append(f"{layer.module}: {layer.precision}, {layer.bytes_added:,} B more at int16{alone}")
    return lines


def describe_op_diff(op: OpDiff) -> str:
    """`op #8 cortex_m::quantized_avg_pool2d (Residual, model.py:17 ...): 1 LSB on 13/256 elements`."""
    return f"op #{op.index} {op.op} ({_where(op.module, op.source)}): {op.max_lsb} LSB on {op.elements}/{op.numel} elements"


def reference_note(report: Report) -> str | None:
    """One line when ExecuTorch's Python reference differs from the CMSIS-NN kernels' result, which
    is what the firmware is checked against (lower/host_models/reference.py); None when they agree."""
    ref = report.reference
    if ref and ref.checked_against == "bundle":
        return f"checked against {ref.description}"
    if ref and ref.checked_against == "none":
        return "no reference: " + ref.description + "; RAN is not a PASS, nothing was compared"
    if ref and ref.python_reference_max_lsb is None and ref.description:
        return ref.description + "; PASS means bit-exact against the CMSIS-NN kernels"
    if not ref or not (ref.ops or ref.python_reference_max_lsb_calibration):
        return None
    ops = [describe_op_diff(op) for op in ref.ops]
    first = f"first at {ops[0]}" if ops else "at no single op"
    more = f" (+{len(ops) - 1} more op(s) in report.json)" if len(ops) > 1 else ""
    return (
        f"ExecuTorch's Python reference differs from the CMSIS-NN kernels by {ref.python_reference_max_lsb} LSB "
        f"at the output ({ref.python_reference_max_lsb_calibration} LSB over the calibration inputs), "
        f"{first}{more}; PASS means bit-exact against the CMSIS-NN kernels"
    )


def markdown(report: Report) -> str:
    """report.md: the same facts for people, as Markdown tables; a section only where the program has
    something to say in it."""
    out = [*_summary(report), *_operators(report), *_quantization(report), *_reference(report)]
    out += _changes(report)
    return "\n".join(out) + "\n"


def _summary(report: Report) -> list[str]:
    """The title, then the target, the program's size and its memory."""
    mem = report.memory
    return [
        f"# cmx-gen report: {report.source}",
        "",
        f"- target: **{report.target.core}** ({report.target.isa}), executorch {report.executorch_version}, cmx-gen {report.cmx_gen_version}",
        f"- `.pte`: {report.pte.bytes:,} bytes, of which constants {report.pte.constant_bytes:,}",
        f"- planned buffers: {mem.planned_buffer_sizes} = {mem.planned_bytes:,} bytes (largest CMSIS-NN scratch {mem.scratch_bytes:,})"
        + (
            f"; the inputs, {mem.caller_input_bytes:,} bytes, stay in the caller's buffers (input_memory = caller)"
            if mem.caller_input_bytes
            else ""
        ),
        f"- method allocator: {mem.method_allocator_bytes:,} bytes (exact for 32-bit Arm); temp allocator: {mem.temp_allocator_bytes:,} bytes",
        *(f"- memory schedule, {schedule_line(s)}" for s in report.schedules),
    ]


def _operators(report: Report) -> list[str]:
    """The operators with their kernels, then the inputs' and outputs' specs."""
    out = ["", "## Operators", "", "| operator | nodes | kernel |", "| --- | ---: | --- |"]
    out += [f"| `{op.name}` | {op.count} | {CLASS_LABELS[op.class_]} |" for op in report.operators]
    out += ["", "## Inputs and outputs", "", "| tensor | spec |", "| --- | --- |"]
    out += [f"| input {i} | {_spec_line(s)} |" for i, s in enumerate(report.inputs)]
    out += [f"| output {i} | {_spec_line(s)} |" for i, s in enumerate(report.outputs)]
    return out


def _quantization(report: Report) -> list[str]:
    """What the program was calibrated with and how far INT8 is from float."""
    qe, cal = report.quantization_error, report.calibration
    out = ["", "## Quantization", ""] if qe or cal else []
    if cal:
        out.append(
            f"- calibration: {cal.source}"
            + (" — **random data: INT8 accuracy is not representative**" if cal.random else "")
        )
    if qe:
        out.append(f"- max abs error float vs INT8: {qe.max_abs_err} over {qe.samples} inputs")
        if qe.top1_agreement is not None:
            out.append(f"- top-1 agreement float vs INT8: {qe.top1_agreement * 100:.1f} %")
    return out


def _reference(report: Report) -> list[str]:
    """What the firmware's PASS is checked against, and how ExecuTorch's own reference differs."""
    ref = report.reference
    if not ref:
        return []
    return [
        "",
        "## Reference",
        "",
        f"- the firmware is checked bit-exact against: {ref.description}",
        (
            f"- ExecuTorch's Python reference differs from it by {ref.python_reference_max_lsb} LSB at the output "
            f"({ref.python_reference_max_lsb_calibration} LSB over the calibration inputs)"
            if ref.python_reference_max_lsb is not None
            else "- ExecuTorch's Python reference cannot run it"
        ),
        *(f"- {describe_op_diff(op)}" for op in ref.ops),
    ]


def _changes(report: Report) -> list[str]:
    """Where the program differs from the model as written: the rewrites, the parts left in float, the
    ops on portable kernels, and what lowering warned about."""
    out: list[str] = []
    if report.rewrites:
        out += [
            "",
            "## Exact rewrites",
            "",
            "Rewritten before quantizing, so that they stay on CMSIS-NN; the reference "
            "is computed from the rewritten program, so PASS stays bit-exact:",
            "",
        ]
        out += [f"- {describe_rewrite(r)}" for r in report.rewrites]
    if report.float_parts:
        out += [
            "",
            "## Float parts",
            "",
            "These parts compute in float on portable kernels, with quantize/dequantize at their edges; "
            "the reference runs them the same way, so PASS stays bit-exact:",
            "",
        ]
        out += [f"- {describe_float_part(part)}" for part in report.float_parts]
    weights = weight_lines(report)
    if weights:
        out += ["", "## Weights", "", weights[0], ""] + [f"- {line}" for line in weights[1:]]
    activations = precision_lines(report)
    if activations:
        out += ["", "## Activations", "", activations[0], ""] + [f"- {line}" for line in activations[1:]]
    if report.fallbacks:
        out += ["", "## Fallbacks", "", "These compute ops run on portable (unaccelerated) kernels:", ""]
        out += [f"- `{name}`" for name in report.fallbacks]
    if report.lowering_warnings:
        out += ["", "## Lowering warnings", ""] + [f"- {w}" for w in report.lowering_warnings]
    return out
