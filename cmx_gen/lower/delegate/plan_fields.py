"""The fields of every plan record after its op, size and debug words, by layer kind: the one place
they are written. plan.py packs them, and kernels/backend/cmx_plan_records.h, the C records the
runtime reads in place, is generated from them (layer_kinds.c_records;
tests/lower/test_layer_kinds.py fails when it is stale). A CMSIS-NN struct is a member of its own C
type whose int32 words are spelled in CMSIS-NN's order (arm_nn_types.h; tests/lower/test_delegate.py
holds them to the compiler's layout)."""

from __future__ import annotations

from dataclasses import dataclass

CONV_PARAMS = (
    "input_offset",
    "output_offset",
    "stride_w",
    "stride_h",
    "pad_w",
    "pad_h",
    "dilation_w",
    "dilation_h",
    "act_min",
    "act_max",
)
DW_PARAMS = (
    "input_offset",
    "output_offset",
    "ch_mult",
    "stride_w",
    "stride_h",
    "pad_w",
    "pad_h",
    "dilation_w",
    "dilation_h",
    "act_min",
    "act_max",
)
POOL_PARAMS = ("stride_w", "stride_h", "pad_w", "pad_h", "act_min", "act_max")
FC_PARAMS = ("input_offset", "filter_offset", "output_offset", "act_min", "act_max")
# cmx_conv_row_params (kernels/nn/cmx_nn.h)
ROW_PARAMS = (
    "positions",
    "in_positions",
    "in_ch",
    "out_ch",
    "kernel",
    "stride",
    "pad",
    "dilation",
    "rows",
    "out_rows",
    "in_rows",
    "row_stride",
    "row_pad",
    "wide",
    "row_bytes",
    "chunk",
    "input_offset",
    "output_offset",
    "act_min",
    "act_max",
)


# arm_lstm_unidirectional_s8's cmsis_nn_lstm_params less its pointers: each gate's weights and
# effective biases are plan constants (cmx_layer_lstm in cmx_plan.h; the runtime builds the struct).
LSTM_GATES = ("forget", "input", "cell", "output")
LSTM_GATE_FIELDS = (
    "input_multiplier",
    "input_shift",
    "input_weights",
    "input_bias",
    "hidden_multiplier",
    "hidden_shift",
    "hidden_weights",
    "hidden_bias",
    "activation",
)
# every recurrent record's; reverse: the steps run last to first (a bidirectional layer's backward direction)
SEQUENCE = ("time_major", "batch_size", "time_steps", "input_size", "hidden_size", "reverse")
# the LstmQuant values a record holds as they are (the rest of cmsis_nn_lstm_params)
LSTM_SCALARS = (
    "input_offset",
    "forget_to_cell_multiplier",
    "forget_to_cell_shift",
    "input_to_cell_multiplier",
    "input_to_cell_shift",
    "cell_clip",
    "cell_scale_power",
    "output_multiplier",
    "output_shift",
    "output_offset",
)


# cmx_gru_params (kernels/nn/cmx_nn.h) less its pointers, as cmx_layer_gru holds it.
GRU_GATES = ("reset", "update", "candidate")
GRU_SCALARS = (  # the GruQuant values a record holds as they are
    "hidden_offset",
    "output_offset",
    "reset_multiplier",
    "reset_shift",
    "hidden_q15_multiplier",
    "hidden_q15_shift",
    "output_multiplier",
    "output_shift",
)


@dataclass(frozen=True)
class Member:
    """Consecutive members of a record of one C type: int32 words, or CMSIS-NN structs stored as
    CMSIS-NN lays them out (the runtime passes pointers into the plan), each its words in order."""

    c_type: str
    names: tuple[str, ...]  # the C members
    words: tuple[tuple[str, ...], ...]  # each member's int32 words as plan.py names them

    def fields(self) -> tuple[str, ...]:
        return tuple(w for words in self.words for w in words)


def ints(*names: str) -> Member:
    return Member("int32_t", names, tuple((n,) for n in names))


def params(c_type: str, words: tuple[str, ...], name: str = "params") -> Member:
    return Member(c_type, (name,), (words,))


def dims(*names: str) -> Member:
    """cmsis_nn_dims members `<name>_dims`, their words `<name>_n`, _h, _w, _c."""
    return Member("cmsis_nn_dims", tuple(f"{n}_dims" for n in names), tuple(_dims(n) for n in names))


def _dims(name: str) -> tuple[str, ...]:
    return tuple(f"{name}_{d}" for d in "nhwc")


@dataclass(frozen=True)
class Record:
    """One layer kind's record: what it is (the C comment) and its members after the head."""

    doc: str
    members: tuple[Member, ...]

    def fields(self) -> tuple[str, ...]:
        return tuple(f for m in self.members for f in m.fields())


_CONV_DIMS = dims("input", "filter", "bias", "output")
_CONV_TENSORS = ints("input", "output", "weight", "bias", "multipliers", "shifts", "scratch", "scratch_bytes")
_LINEAR = (
    ints("input", "output", "weight", "bias", "kernel_sum"),
    params("cmsis_nn_per_tensor_quant_params", ("multiplier", "shift"), "quant"),
    params("cmsis_nn_fc_params", FC_PARAMS),
    _CONV_DIMS,
)
_REVERSE = "with `reverse` the steps run last to first (a bidirectional layer's backward direction)"

RECORDS: dict[str, Record] = {
    "conv": Record("", (_CONV_TENSORS, params("cmsis_nn_conv_params", CONV_PARAMS), _CONV_DIMS)),
    "conv_helium": Record(
        "cmx_conv_helium_s8 (kernels/nn/): a convolution of one group on a Helium core, weight in\n"
        "cmx_fully_connected_s8's layout, constants (kernel sums, multipliers, shifts) in its own.",
        (
            ints("input", "output", "weight", "constants", "scratch", "scratch_bytes"),
            params("cmsis_nn_conv_params", CONV_PARAMS),
            _CONV_DIMS,
        ),
    ),
    "conv_row": Record(
        "cmx_conv_row_s8 (kernels/nn/), a convolution of one group on a DSP core; weight and constants (biases,\n"
        "multipliers, shifts by channel pair) in its layouts.",
        (
            ints("input", "output", "weight", "constants", "scratch", "scratch_bytes"),
            params("cmx_conv_row_params", ROW_PARAMS),
        ),
    ),
    "depthwise_conv": Record("", (_CONV_TENSORS, params("cmsis_nn_dw_conv_params", DW_PARAMS), _CONV_DIMS)),
    "linear": Record("", _LINEAR),
    "linear_per_channel": Record(
        "arm_fully_connected_per_channel_s8: as linear, a multiplier and a shift per output channel (constants);\n"
        "kernel_sum (the Helium path's input offset times each row's sum, plus the bias) in place of the bias there.",
        (
            ints("input", "output", "weight", "bias", "kernel_sum", "multipliers", "shifts"),
            params("cmsis_nn_fc_params", FC_PARAMS),
            _CONV_DIMS,
        ),
    ),
    "add": Record(
        "",
        (
            ints("input1", "input2", "output"),
            ints("input1_offset", "input1_multiplier", "input1_shift"),
            ints("input2_offset", "input2_multiplier", "input2_shift"),
            ints("left_shift", "output_offset", "output_multiplier", "output_shift"),
            ints("act_min", "act_max", "block", "count"),
        ),
    ),
    "mul": Record(
        "",
        (
            ints("input1", "input2", "output"),
            ints("input1_offset", "input2_offset", "output_offset", "output_multiplier", "output_shift"),
            ints("act_min", "act_max", "block", "count"),
        ),
    ),
    "avg_pool": Record(
        "",
        (
            ints("input", "output", "scratch", "scratch_bytes"),
            params("cmsis_nn_pool_params", POOL_PARAMS),
            dims("input", "filter", "output"),
        ),
    ),
    "max_pool": Record(
        "", (ints("input", "output"), params("cmsis_nn_pool_params", POOL_PARAMS), dims("input", "filter", "output"))
    ),
    "softmax": Record(
        "ranges: a masked softmax's allowed [lo, hi) columns, int32 pairs, row r taking pair r % mask_rows\n"
        "(a constant attention mask); -1: every column.",
        (ints("input", "output", "rows", "row_size", "multiplier", "shift", "diff_min", "ranges", "mask_rows"),),
    ),
    "softmax_s16": Record(
        "arm_softmax_s16 over rows of row_size int16 values into Q0.15; exp_table, one_by_one_table: its two\n"
        "tables, 513 int16 each (TFLite's gen_lut: exp over [-10, 0], 1 / (1 + x) over [0, 1]).",
        (ints("input", "output", "rows", "row_size", "multiplier", "shift", "exp_table", "one_by_one_table"),),
    ),
    "activation_s16": Record(
        "arm_nn_activation_s16: sigmoid (type 0) or tanh (1) of `count` int16 values read as Q3.12 after\n"
        "`left_shift`, into Q0.15.",
        (ints("input", "output", "count", "left_shift", "type"),),
    ),
    "copy": Record("", (ints("input", "output", "nbytes"),)),
    "copy_region": Record(
        "A box of an NHWC image moved between two row strides: `rows` runs of `row_bytes`, from\n"
        "`input_at` bytes into the input, `input_stride` apart, to `output_at` bytes into the output,\n"
        "`output_stride` apart (patch-based execution gathers each patch's input and scatters its output\n"
        "with it; cmx_gen/lower/delegate/patches.py).",
        (ints("input", "input_at", "output", "output_at", "rows", "row_bytes", "input_stride", "output_stride"),),
    ),
    "transpose": Record(
        "A layout change (a _clone_dim_order between dim orders): cmx_transpose_s8.",
        (ints("input", "output", "batches", "rows", "cols"),),
    ),
    "lstm": Record(
        "arm_lstm_unidirectional_s8: cmsis_nn_lstm_params without its pointers (each gate's weights and\n"
        "effective biases are plan constants; the runtime builds the struct); scratch holds the int16 cell\n"
        "state and the two int16 gate buffers, batch_size * hidden_size each, and, " + _REVERSE + ",\n"
        "the input's and output's steps in reverse order (the kernel runs forwards only).",
        (ints("input", "output", "scratch"), ints(*SEQUENCE, *LSTM_SCALARS))
        + tuple(ints(*(f"{gate}_{f}" for f in LSTM_GATE_FIELDS)) for gate in LSTM_GATES),
    ),
    "gru": Record(
        "cmx_gru_s8 (kernels/nn/): cmx_gru_params without its pointers (each gate's weights and effective\n"
        "biases are plan constants); scratch: 4 * hidden_size int16 and hidden_size int8; " + _REVERSE + ".",
        (ints("input", "output", "scratch"), ints(*SEQUENCE, *GRU_SCALARS))
        + tuple(ints(*(f"{gate}_{f}" for f in LSTM_GATE_FIELDS[:-1])) for gate in GRU_GATES),
    ),
    "layer_norm": Record(
        "cmx_layer_norm_s8 (kernels/nn/): LayerNorm over the last dimension; eps: the 64-bit epsilon term.",
        (
            ints("input", "output", "rows", "channels", "input_offset", "output_offset"),
            ints("eps_lo", "eps_hi", "gains", "biases"),
        ),
    ),
    "mean": Record(
        "cmx_mean_s8 (kernels/nn/): a mean over the middle of [outer][count][inner].",
        (ints("input", "output", "outer", "count", "inner", "multiplier", "shift", "input_offset", "output_offset"),),
    ),
    "lut": Record(
        "cmx_lut_s8 (kernels/nn/): an element-wise operator as a 256-entry table.",
        (ints("input", "output", "count", "table"),),
    ),
    "narrow_s16": Record(
        "cmx_narrow_s16_s8 (kernels/nn/): int16 in, int8 out (where an int16 layer meets an int8 one): lowest plus\n"
        "the thresholds (table [steps] int16) at or below each input; multiplier and shift guess where to look.",
        (ints("input", "output", "count", "table", "steps", "lowest", "multiplier", "shift"),),
    ),
    "bmm": Record(
        "arm_batch_matmul_s8: input1 [batches][rows][inner] times input2 [batches][inner][cols] (or, when\n"
        "transposed, [batches][cols][inner]); scratch: input2 transposed unless it is, then the MVE kernel's\n"
        "cols int32 sums.",
        (
            ints("input1", "input2", "output", "scratch", "batches", "rows", "inner", "cols", "transposed"),
            ints("input1_offset", "input2_offset", "output_offset", "multiplier", "shift"),
        ),
    ),
}
# Kinds that run another kind's record: the kind, whose record, why (the C comment).
SAME: dict[str, tuple[str, str]] = {
    "conv_general": (
        "conv",
        "arm_convolve_s8 itself, for a convolution its wrapper would send to a path that refuses it.",
    ),
    "depthwise_3x3": (
        "depthwise_conv",
        "cmx_depthwise_3x3_s8 (kernels/nn/): a 3x3 depthwise layer on a DSP core, CMSIS-NN's arguments.",
    ),
    "conv_s4": (
        "conv",
        "arm_convolve_wrapper_s4: weight [out][kh][kw][in] as 4-bit values, two a byte, low nibble first.",
    ),
    "depthwise_s4": (
        "depthwise_conv",
        "arm_depthwise_conv_wrapper_s4: weight [kh][kw][channels] as 4-bit values, two a byte, low nibble first.",
    ),
    "linear_s4": ("linear", "arm_fully_connected_s4: weight [out][in] as 4-bit values, two a byte, low nibble first."),
    "fully_connected_s4": (
        "linear",
        "cmx_fully_connected_s4 (kernels/nn/): a fully connected layer with 4-bit weights on a DSP core, CMSIS-NN's\n"
        "arguments, weight in its layout (kernel_sum unused).",
    ),
    "conv_s16": (
        "conv",
        "arm_convolve_wrapper_s16: int16 input and output, weight [out][kh][kw][in] int8, bias int64.",
    ),
    "depthwise_s16": (
        "depthwise_conv",
        "arm_depthwise_conv_wrapper_s16: int16 input and output, weight [1][kh][kw][channels] int8, bias int64.",
    ),
    "add_s16": ("add", "arm_elementwise_add_s16: int16 inputs and output, offsets 0, left_shift 15."),
    "mul_s16": ("mul", "arm_elementwise_mul_s16: int16 inputs and output, offsets 0."),
    "avg_pool_s16": ("avg_pool", "arm_avgpool_s16: int16 input and output (one scale)."),
    "max_pool_s16": ("max_pool", "arm_max_pool_s16: int16 input and output (one scale)."),
    "lut_s16": (
        "lut",
        "cmx_lut_s8_s16 (kernels/nn/): int8 in, int16 out (where an int8 layer meets an int16 one); table [256] int16.",
    ),
    "linear_s16": ("linear", "arm_fully_connected_s16: int16 input and output, weight [out][in] int8, bias int64."),
    "bmm_s16": (
        "bmm",
        "arm_batch_matmul_s16: int16 operands and output, offsets 0; scratch: b transposed (int16), unless it is.",
    ),
    "lstm_s16": (
        "lstm",
        "arm_lstm_unidirectional_s16: int16 input and output (offsets 0), int64 effective biases; scratch as\n"
        "lstm's, the reversed steps int16.",
    ),
    "fully_connected": (
        "linear",
        "cmx_fully_connected_s8 (kernels/nn/): a fully connected layer on a DSP core, CMSIS-NN's arguments,\n"
        "weight in its layout.",
    ),
}
FIELDS: dict[str, tuple[str, ...]] = {kind: record.fields() for kind, record in RECORDS.items()} | {
    kind: RECORDS[same].fields() for kind, (same, _) in SAME.items()
}
