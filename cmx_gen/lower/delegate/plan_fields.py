"""The fields of every plan record after its op, size and debug words, by layer kind, as
kernels/backend/cmx_plan.h lays them out (plan.py packs them; tests/lower/test_delegate.py holds the
two equal). A CMSIS-NN struct is spelled as its fields in CMSIS-NN's order."""

from __future__ import annotations

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
LSTM_PARAMS = SEQUENCE + LSTM_SCALARS + tuple(f"{gate}_{field}" for gate in LSTM_GATES for field in LSTM_GATE_FIELDS)


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
GRU_PARAMS = SEQUENCE + GRU_SCALARS + tuple(f"{gate}_{field}" for gate in GRU_GATES for field in LSTM_GATE_FIELDS[:-1])


def _dims(name: str) -> tuple[str, ...]:
    return tuple(f"{name}_{d}" for d in "nhwc")


_CONV_TAIL = _dims("input") + _dims("filter") + _dims("bias") + _dims("output")
FIELDS: dict[str, tuple[str, ...]] = {
    "conv": ("input", "output", "weight", "bias", "multipliers", "shifts", "scratch", "scratch_bytes")
    + CONV_PARAMS
    + _CONV_TAIL,
    "depthwise_conv": ("input", "output", "weight", "bias", "multipliers", "shifts", "scratch", "scratch_bytes")
    + DW_PARAMS
    + _CONV_TAIL,
    "linear": ("input", "output", "weight", "bias", "kernel_sum", "multiplier", "shift")
    + FC_PARAMS
    + _dims("input")
    + _dims("filter")
    + _dims("bias")
    + _dims("output"),
    "add": (
        "input1",
        "input2",
        "output",
        "input1_offset",
        "input1_multiplier",
        "input1_shift",
        "input2_offset",
        "input2_multiplier",
        "input2_shift",
        "left_shift",
        "output_offset",
        "output_multiplier",
        "output_shift",
        "act_min",
        "act_max",
        "block",
        "count",
    ),
    "mul": (
        "input1",
        "input2",
        "output",
        "input1_offset",
        "input2_offset",
        "output_offset",
        "output_multiplier",
        "output_shift",
        "act_min",
        "act_max",
        "block",
        "count",
    ),
    "avg_pool": ("input", "output", "scratch", "scratch_bytes")
    + POOL_PARAMS
    + _dims("input")
    + _dims("filter")
    + _dims("output"),
    "max_pool": ("input", "output") + POOL_PARAMS + _dims("input") + _dims("filter") + _dims("output"),
    # ranges: a masked softmax's [lo, hi) int32 pairs (a plan constant, NONE: unmasked), mask_rows of them
    "softmax": ("input", "output", "rows", "row_size", "multiplier", "shift", "diff_min", "ranges", "mask_rows"),
    "copy": ("input", "output", "nbytes"),
    "copy_region": ("input", "input_at", "output", "output_at", "rows", "row_bytes", "input_stride", "output_stride"),
    "transpose": ("input", "output", "batches", "rows", "cols"),
    "lstm": ("input", "output", "scratch") + LSTM_PARAMS,
    "gru": ("input", "output", "scratch") + GRU_PARAMS,
    # cmx-gen's own (kernels/nn/): cmx_layer_norm_s8, cmx_mean_s8, cmx_lut_s8
    "layer_norm": (
        "input",
        "output",
        "rows",
        "channels",
        "input_offset",
        "output_offset",
        "eps_lo",
        "eps_hi",
        "gains",
        "biases",
    ),
    "mean": ("input", "output", "outer", "count", "inner", "multiplier", "shift", "input_offset", "output_offset"),
    "lut": ("input", "output", "count", "table"),
    # arm_batch_matmul_s8, b transposed into the scratch first unless the plan found it transposed
    "bmm": (
        "input1",
        "input2",
        "output",
        "scratch",
        "batches",
        "rows",
        "inner",
        "cols",
        "transposed",
        "input1_offset",
        "input2_offset",
        "output_offset",
        "multiplier",
        "shift",
    ),
}
# arm_convolve_s8 called directly, not through its wrapper: the same record as "conv" (layers.py says when).
FIELDS["conv_general"] = FIELDS["conv"]
# cmx-gen's cmx_depthwise_3x3_s8 (kernels/nn/): CMSIS-NN's arguments, scratch for its planar path (DSP cores).
FIELDS["depthwise_3x3"] = FIELDS["depthwise_conv"]
# cmx-gen's cmx_fully_connected_s8 (kernels/nn/) on the DSP cores: CMSIS-NN's arguments, its weights laid out.
FIELDS["fully_connected"] = FIELDS["linear"]
# cmx-gen's cmx_conv_helium_s8 (kernels/nn/) on Helium: a convolution's arguments, its weights laid out as
# cmx_fully_connected_s8's and its channel constants (kernel sums, multipliers, shifts) as it reads them.
FIELDS["conv_helium"] = (
    ("input", "output", "weight", "constants", "scratch", "scratch_bytes") + CONV_PARAMS + _CONV_TAIL
)
# cmx-gen's own kernel, cmx_conv_row_s8 (kernels/nn/), on the DSP cores: its weights laid out as it reads them.
FIELDS["conv_row"] = (
    "input",
    "output",
    "weight",
    "bias",
    "multipliers",
    "shifts",
    "scratch",
    "scratch_bytes",
) + ROW_PARAMS
