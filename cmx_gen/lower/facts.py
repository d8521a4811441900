"""What lowering finds out and the report shows, typed once (common/record.Record): the target, the
options, the exact rewrites, each layer's error, where the two host references part, the layers
cmx-gen's backend runs and each delegate call's memory schedule. No torch here: the report reads
these without loading the lowering."""

from __future__ import annotations

from typing import ClassVar, Literal

from cmx_gen.common.goals import InputMemory, MemoryGoal, Precision, PrecisionSetting, WeightBits, WeightSetting
from cmx_gen.common.record import Record, ReportPart
from cmx_gen.common.targets import Isa

Io = Literal["float", "int8"]  # the program's inputs and outputs (int8: --io int8, int8_io.py)
LayerKind = Literal["compared", "exact", "float", "quant_boundary", "no_float_counterpart"]


class Target(Record):
    core: str = ""  # canonical name (common/targets.canonical_core); "unknown" for a .pte without --target
    isa: Isa | Literal["unknown"]  # "unknown" for a .pte without --target


class LowerOptions(Record):
    """Lowering choices beyond the target; every field is part of the cache key and the report."""

    # Parts of the model left in float on portable kernels: a module path (`features.3`), a
    # line of the model file (`model.py:15`), or a node name of the exported graph (`bmm_1`).
    keep_fp32: tuple[str, ...] = ()
    # "int8": the program takes and returns int8 tensors, no quantize/dequantize at its edges (int8_io.py).
    io: Io = "float"
    # True: cmx-gen's CMSIS-NN backend runs the int8 subgraphs from a plan (lower/delegate/);
    # False: every operator on its own kernel, as before the backend (for comparison, a way out).
    delegate: bool = True
    # What the backend's schedule favours: "fast", "balanced" or "min" RAM (lower/delegate/costs.py).
    memory: MemoryGoal = "balanced"
    # Where the program's inputs live: "pool" (planned with the activations) or "caller" (the
    # caller's buffers: not in the plan, read in place; common/goals.INPUT_MEMORIES).
    input_memory: InputMemory = "pool"
    # cmx_conv_row_s8 widens int8 weights into its scratch at each call instead of reading int16 copies
    # (common/goals.StageWeights: a board whose flash waits).
    stage_weights: bool = False
    # Convolution, depthwise and fully connected weights in "int8" or "int4" (lower/weight_bits.py), and
    # per-layer overrides, "PART=int8" / "PART=int4" (a part as keep_fp32 names one).
    weights: WeightSetting = "int8"
    weights_for: tuple[str, ...] = ()
    # weights = "auto": the output's SQNR against float (dB) the choice keeps; None: the all-int8 program's
    # less common/goals.AUTO_SQNR_SLACK_DB. precision = "auto": the SQNR it reaches, each sample's averaged;
    # None: the all-int16 program's less common/goals.AUTO_PRECISION_SLACK_DB
    sqnr_target: float | None = None
    # Activations of convolution, depthwise, fully connected and add layers in "int8" or "int16" (8w16a,
    # lower/activation_bits.py), or "auto" (lower/precision_choice.py, resolved before lowering), and
    # per-layer overrides, "PART=int8" / "PART=int16".
    precision: PrecisionSetting = "int8"
    precision_for: tuple[str, ...] = ()
    # Fully connected layers' int8 weights with a scale per output channel (lower/linear_per_channel.py, on
    # CMSIS-NN's arm_fully_connected_per_channel_s8) instead of upstream's one scale for the tensor.
    per_channel_linear: bool = False


FloatWhy = Literal["island", "keep_fp32", "no_int8_kernel"]


class FloatIsland(Record):
    """A node cmx-gen left in float by itself (float_islands.py): a step could not take it to int8, so
    the model was lowered again with it in float instead of being refused (`--strict` refuses)."""

    part: str  # what --keep-fp32 would be given: a node of the exported graph (`bmm_1`) or a line (`model.py:15`)
    op: str = ""  # "aten::bmm" (a node's)
    source: str = ""  # the user's line that made it
    reason: str  # one line: which step failed on it and how


class FloatPart(Record):
    """A connected part of the program that computes in float on portable kernels, and why
    (float_islands.float_parts): quantize/dequantize sit at its edges."""

    nodes: list[str]  # the program's nodes, in program order
    ops: list[str]  # their operators, each once ("aten::bmm")
    module: str = ""  # of its first node
    source: str = ""  # the user's line of its first node
    why: FloatWhy  # island: cmx-gen's own choice; keep_fp32: the user's; no_int8_kernel: no cortex_m kernel
    reason: str  # one line


class Rewrite(Record):
    """One exact rewrite applied (exact_rewrites.py): where (the node, module and user's line) and what it did."""

    node: str = ""
    op: str  # the op as the user wrote it ("aten::conv_transpose2d")
    module: str = ""
    source: str = ""
    what: str


class LayerError(Record):
    """One operator of the program: its error against the float model, or why it has none (layer_error.py)."""

    index: int  # position among the program's operator calls
    node: str
    op: str
    module: str = ""
    source: str = ""
    kind: LayerKind  # "exact": no error at all; "float": runs in float
    sqnr_db: float | None = None  # 10 log10(sum float^2 / sum (float - int8)^2); None unless compared and inexact
    max_abs_err: float | None = None
    sqnr_drop_db: float | None = None  # what this layer loses: its input's SQNR minus its own


# The backend layer kinds whose weights are 4-bit, two a byte (data/backend_layers.yaml, weight_bits.py).
S4_KINDS = ("conv_s4", "depthwise_s4", "linear_s4", "fully_connected_s4")


class LayerWeights(Record):
    """One weighted layer in `weights = "auto"`'s choice: what its 4 bits cost and save."""

    module: str  # the module path (what --weights-for names)
    weights: WeightBits  # chosen
    bytes_int8: int  # its weights' bytes at int8 (int4: half)
    # the output's SQNR against float with this layer alone at int4 (None: not measured, every layer at
    # int4 keeps the target)
    alone_db: float | None = None


class WeightChoice(ReportPart):
    """`weights = "auto"` (lower/weight_choice.py): the output's SQNR against float on the calibration
    samples with every weighted layer int8, every one int4 and as chosen; the target; each layer's choice
    in the order they were taken to int4 (the least SQNR lost alone per byte saved first)."""

    key: ClassVar[str] = "weight_choice"
    target_db: float
    int8_db: float
    int4_db: float
    chosen_db: float
    trials: int  # lowerings the choice took
    layers: list[LayerWeights] = []


class LayerPrecision(Record):
    """One layer in `precision = "auto"`'s choice: what its 16 bits gain and cost."""

    module: str  # the module path (what --precision-for names)
    precision: Precision  # chosen
    bytes_added: int  # the activation bytes int16 adds: its output's elements (a byte each more)
    # the output's SQNR against float with this layer alone at int16 (None: not measured)
    alone_db: float | None = None
    # with the others taken at int16 and this one int8 (None: not tried); at or above the target, it stays int8
    without_db: float | None = None


class PrecisionChoice(ReportPart):
    """`precision = "auto"` (lower/precision_choice.py): the output's SQNR against float (each calibration
    sample's, averaged in dB) with every layer int8, every one int16 and as chosen; the target; each layer's
    choice in the order they were tried at int16 (the most SQNR gained alone per byte added first)."""

    key: ClassVar[str] = "precision_choice"
    target_db: float
    int8_db: float
    int16_db: float
    chosen_db: float
    trials: int  # lowerings the choice took
    layers: list[LayerPrecision] = []


class OpDiff(Record):
    """Where ExecuTorch's Python op and the host model of its C kernel disagree on the same inputs (reference.py)."""

    index: int  # position among the program's operator calls, in execution order
    node: str = ""
    op: str  # "cortex_m::quantized_avg_pool2d"
    module: str = ""  # the PyTorch module path the node came from ("features.3", or the class for functional ops)
    max_lsb: int
    elements: int  # elements that differ
    numel: int
    source: str = ""  # the user's line that made the node


class DelegatedLayer(Record):
    """A layer cmx-gen's CMSIS-NN backend runs (lower/delegate/backend.delegated_layers)."""

    delegate: int  # which delegate call of the program, in execution order
    debug: int  # the id the layer reports as in the profile (`cmx-gen: prof_layer <debug> <count>`)
    op: str  # the cortex_m operator it replaces
    kind: str = ""  # its plan layer kind (lower/delegate/plan.py OPS): what the runtime calls for it
    node: str = ""
    module: str = ""
    source: str = ""
    shape: list[int] = []  # its output, as it lies in the working memory
    dim_order: list[int] = []
    dtype: str = "int8"
    nbytes: int = 0
    # what its cycles scale with (fit/latency.py): the MACs of a convolution, depthwise or linear layer,
    # else the elements of its largest input; a patched layer's as its patches compute it, halos included
    work: int = 0
    outputs: int = 0  # the output elements its calls compute: its shape's, a patched layer's halos included
    calls: int = 1  # the kernel calls that run it: a patched layer's patches
    traced: bool = (
        False  # the host holds its expected output bytes (model/trace_reference.bin, after the instructions')
    )
    patched: bool = False  # run patch by patch (lower/delegate/patches.py): the trace sees only patches of it


class Schedule(Record):
    """One delegate call's working memory (lower/delegate/schedule.py): what it takes, what layer-by-
    layer execution would take, that execution's floor, and where the peak sits."""

    delegate: int
    goal: str = "balanced"  # the memory goal it was made for (lower/delegate/costs.py)
    work_bytes: int
    layer_by_layer_bytes: int
    floor_bytes: int  # the largest inputs + output of one layer: layer-by-layer's least
    floor_at: str = ""
    peak_bytes: int = 0  # the most bytes in use at one layer
    peak_at: str = ""
    written_over_input: int = 0  # layers whose output shares bytes with their input
    inputs_in_work: int = 0  # delegate inputs placed inside the working memory
    outputs_in_work: int = 0  # delegate outputs placed inside the working memory
    extra_instructions: int | None = (
        0  # estimated, against the fastest kernels (data/kernel_costs.yaml); None: not measured
    )
    patch_layers: int = 0  # the first layers run patch by patch (lower/delegate/patches.py); 0: none
    patch_until: str = ""  # the last of them: its output is assembled patch by patch
    patch_grid: str = ""  # rows x columns of patches over that output
    patch_extra_macs: int = 0  # MACs the halos compute again
