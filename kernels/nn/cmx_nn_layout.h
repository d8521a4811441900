/* The sizes and data layouts the plan makes for the kernels cmx-gen's backend calls: each scratch size,
 * each weight and constant layout of cmx-gen's own kernels, and the scratch the backend gives the
 * recurrent and batch matmul layers. Plain C on integers (stdint only, no CMSIS-NN header), so
 * cmx-gen compiles cmx_nn_layout.c for the machine it lowers on and asks it
 * (cmx_gen/lower/delegate/kernel_numbers.py): the plan sizes and lays out with the very functions
 * the firmware links, no formula restated in Python. The plan check (kernels/backend/cmx_plan_check.c)
 * holds every plan to them before a layer runs.
 *
 * The plain defines below are read by the plan too (cmx_gen's kernel_facts.py): keep each a plain
 * integer. */
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* cmx_conv_row_s8 */
#define CMX_SLACK 4 /* int16 values past a chunk that a zero-padded weight row may read */

/* cmx_depthwise_3x3_s8's planar and grouped paths (DSP cores without Helium): shapes and scratch */
#define CMX_DW_BAND 8        /* output rows a band of the planar path */
#define CMX_DW_GROUP_BAND 2  /* ... and of the grouped path: its lead is a band's rows */
#define CMX_DW_PLANAR_WIDTH 8 /* the fewest output columns it takes: narrower rows pay the plane per row */
#define CMX_DW_PLANAR_NARROW 6 /* ... and rows of this many where fast and full (cmx_dw_plane_rows3) */
#define CMX_DW_PLANAR_THREE 3  /* ... and of this many (a MobileNet's 3 x 3 maps: a block of three a row) */
#define CMX_DW_GROUPED_WIDTH 4 /* the fewest output columns the grouped path takes: on rows of 3 its band's padding costs more */
#define CMX_DW_GROUP 4       /* channels a group of the grouped path (its code is written for four) */
#define CMX_DW_PLANE_ROW 64 /* int16 values a plane row holds: a constant, so a row is an immediate offset */
#define CMX_DW_STEP 4        /* channels of a pixel the walk finishes at a time (DSP and portable code) */
#define CMX_DW_STEP_MVE 8    /* ... on Helium (pixel8: one int16x8 vector a tap); the last c % 8 four or fewer */

/* cmx_fully_connected_s8 (and cmx_conv_helium_s8's weights): G, the columns of a row stored side by
 * side with its block's other rows */
#define CMX_FC_GROUP_MVE 16
#define CMX_FC_GROUP_DSP 4
#if defined(ARM_MATH_MVEI)
#define CMX_FC_GROUP CMX_FC_GROUP_MVE
#else
#define CMX_FC_GROUP CMX_FC_GROUP_DSP
#endif

/* cmx_fully_connected_s4 */
#define CMX_FC_S4_GROUP 8 /* columns a word */
#define CMX_FC_S4_ROWS 4  /* rows a block, their words side by side */

/* cmx_conv_row_s8's layer (cmx_nn.h says what it computes). */
typedef struct {
  int32_t positions;    /* output positions of an output row */
  int32_t in_positions; /* input positions of an input row */
  int32_t in_ch;
  int32_t out_ch;
  int32_t kernel;    /* kernel positions of a kernel row */
  int32_t stride;    /* input positions between two output positions */
  int32_t pad;       /* zero positions before the first input position */
  int32_t dilation;  /* input positions between two taps; > 1 needs dilation * in_ch even and rows 1 */
  int32_t rows;      /* kernel rows: 1 for a 1-D or 1x1 convolution */
  int32_t out_rows;  /* output rows: 1 for a 1-D or 1x1 convolution */
  int32_t in_rows;   /* input rows: 1 for a 1-D or 1x1 convolution */
  int32_t row_stride; /* input rows between two output rows */
  int32_t row_pad;   /* zero rows above the first input row */
  int32_t wide;      /* 1: the weights are int16 (twice the bytes; no widening in the inner loop); 2: int8, widened
                        into the scratch once a call (as 1 after that); not dilated */
  int32_t row_bytes; /* weight bytes per output channel (cmx_conv_row_s8_row_bytes) */
  int32_t chunk;     /* output positions per widened chunk (even, >= 2) */
  int32_t input_offset;
  int32_t output_offset;
  int32_t act_min;
  int32_t act_max;
} cmx_conv_row_params;

/**
 * @brief int16 values a widened column of a 2-D convolution holds: rows * in_ch, and one zero more where
 *        that is odd and the stride odd (an RGB stem at stride 1: every column then starts on a word, so
 *        the 2 x 2 blocks read both columns of a pair in assembly); rows * in_ch for a 1-D one. Inline:
 *        the kernel reads it for every chunk.
 * @param[in] p  the layer's parameters (sizes >= 1)
 * @return       the values
 */
static inline int32_t cmx_conv_row_s8_column(const cmx_conv_row_params* p) {
  const int32_t values = p->rows * p->in_ch;
  return values + (p->rows > 1 && (values & 1) && (p->stride & 1));
}

/**
 * @brief Weight bytes per output channel: kernel * cmx_conv_row_s8_column rounded up to 4; dilated, each
 *        tap's in_ch rounded up to 4.
 * @param[in] p  the layer's parameters (sizes >= 1)
 * @return       the bytes, the value p->row_bytes must hold
 */
int32_t cmx_conv_row_s8_row_bytes(const cmx_conv_row_params* p);

/**
 * @brief The widened chunk's bytes (p->chunk positions' fields) and a few past it a zero-padded weight
 *        row may read.
 * @param[in] p  the layer's parameters (chunk >= 1)
 * @return       bytes
 */
int32_t cmx_conv_row_s8_chunk_bytes(const cmx_conv_row_params* p);

/**
 * @brief Whether cmx_conv_row_s8 may run a layer's positions three at a time (cmx_row_triples_s8, on the
 *        DSP cores, where it is also fast and full with a bias): a 1x1 layer of stride 1 without padding, an
 *        even count of output channels and a multiple of 16 inputs (the loop takes four groups of four). The
 *        plan gives such a layer chunks of 6 positions (own_kernels.py).
 * @param[in] p  the layer's parameters
 * @return       1 or 0
 */
int32_t cmx_conv_row_s8_triples(const cmx_conv_row_params* p);

/* Where wide 2's staged weights start in the scratch: the chunk's bytes rounded up to a word. */
int32_t cmx_conv_row_s8_staged_at(const cmx_conv_row_params* p);

/**
 * @brief Scratch cmx_conv_row_s8 needs: one widened chunk (cmx_conv_row_s8_chunk_bytes); with wide 2,
 *        then (from a word) the weights widened to int16 and the layer's constants
 *        (cmx_conv_row_s8_constants_words).
 * @param[in] p  the layer's parameters, row_bytes set
 * @return       bytes of scratch
 */
int32_t cmx_conv_row_s8_scratch_bytes(const cmx_conv_row_params* p);

/* cmx_conv_row_s8's constants: a record of CMX_ROW_PAIR_WORDS int32 a channel pair (an odd last channel's
 * second half zeros), its two biases, its two multipliers and its two shift words, each the right shift
 * (-shift, CMSIS-NN's sign) in its low byte and the output offset above (cmx_right_and_offset): the
 * assembly's triples and blocks read a pair's constants by one pointer and three LDRDs, no shift negated
 * and no offset loaded, where three arrays took three pointers (VWW ~-95 K cycles on the M4). In the
 * plan: the same bytes as the bias, multiplier and shift arrays they replace. */
#define CMX_ROW_PAIR_WORDS 6

/* A right shift and the output offset in one word: the shift in the low byte (ASR by a register reads
 * only that), the offset above it (ASR #8 gives it back). */
static inline int32_t cmx_right_and_offset(int32_t right_shift, int32_t offset) { return offset * 256 + right_shift; }

/* the int32 words of an out_ch-channel layer's constants */
int32_t cmx_conv_row_s8_constants_words(int32_t out_ch);
/* channel c's bias, multiplier and shift (CMSIS-NN's sign) in constants k */
static inline int32_t cmx_row_bias(const int32_t* k, int32_t c) { return k[c / 2 * CMX_ROW_PAIR_WORDS + (c & 1)]; }
static inline int32_t cmx_row_mult(const int32_t* k, int32_t c) { return k[c / 2 * CMX_ROW_PAIR_WORDS + 2 + (c & 1)]; }
static inline int32_t cmx_row_shift_word(const int32_t* k, int32_t c) { /* cmx_right_and_offset's word */
  return k[c / 2 * CMX_ROW_PAIR_WORDS + 4 + (c & 1)];
}
static inline int32_t cmx_row_shift(const int32_t* k, int32_t c) {
  return -(int32_t)(int8_t)(uint8_t)(uint32_t)cmx_row_shift_word(k, c);
}

/**
 * @brief Lays a layer's bias, multipliers and shifts out as cmx_conv_row_s8's constants (above).
 * @param[in]  p      the layer's parameters (out_ch, output_offset)
 * @param[in]  bias   caller: [out_ch], or NULL for none (zeros)
 * @param[in]  mult   caller: [out_ch]
 * @param[in]  shift  caller: [out_ch], each in [-31, 31]
 * @param[out] out    caller: cmx_conv_row_s8_constants_words(p->out_ch) int32
 */
void cmx_conv_row_s8_constants(const cmx_conv_row_params* p, const int32_t* bias, const int32_t* mult,
                               const int32_t* shift, int32_t* out);

/**
 * @brief cmx_conv_row_s8_constants read back.
 * @param[in]  out_ch  the layer's output channels
 * @param[in]  k       the constants
 * @param[out] bias, mult, shift  caller: [out_ch] each
 */
void cmx_conv_row_s8_constants_read(int32_t out_ch, const int32_t* k, int32_t* bias, int32_t* mult, int32_t* shift);

/**
 * @brief Lays a CMSIS-NN filter out as cmx_conv_row_s8 reads it: each run (the field, column by column
 *        as the kernel widens it, or a dilated tap's in_ch) padded with zeros to four, every group of
 *        four stored (w0, w2, w1, w3) so one SXTB16 and one SXTB16 ROR 8 give the pairs (w0, w1) and
 *        (w2, w3) (wide 1: int16 values in order), the rows of each channel pair interleaved four
 *        values at a time (one LDRD reads both), an odd last channel's row on its own.
 * @param[in]  p       the layer's parameters, row_bytes set
 * @param[in]  filter  caller: [out_ch][rows * kernel * in_ch] int8
 * @param[out] out     caller: out_ch * row_bytes values: bytes, or int16 when p->wide is 1 (2-byte aligned)
 */
void cmx_conv_row_s8_weights(const cmx_conv_row_params* p, const int8_t* filter, int8_t* out);

/* A stride-1 shape of CMX_DW_PLANAR_NARROW or CMX_DW_PLANAR_THREE outputs a row: cmx_depthwise_3x3_s8's
 * planar path takes it where fast and full (cmx_dw_plane_rows3: blocks of three outputs), else the grouped
 * path or the walk; its scratch is the larger of the plane and the grouped path's band. */
static inline int cmx_dw3x3_planar_narrow(int32_t stride_h, int32_t stride_w, int32_t out_w) {
  return stride_w == 1 && stride_h == 1 && (out_w == CMX_DW_PLANAR_NARROW || out_w == CMX_DW_PLANAR_THREE);
}

/* Whether cmx_depthwise_3x3_s8's planar path may take this shape (stride 1, rows of CMX_DW_PLANAR_WIDTH to
 * CMX_DW_PLANE_ROW - 3 outputs, or a narrow one: cmx_dw3x3_planar_narrow); else the grouped path, where the
 * channels come in fours. */
static inline int cmx_dw3x3_planar(int32_t stride_h, int32_t stride_w, int32_t out_w) {
  return cmx_dw3x3_planar_narrow(stride_h, stride_w, out_w) ||
         (stride_w == 1 && stride_h == 1 && out_w >= CMX_DW_PLANAR_WIDTH && out_w + 3 <= CMX_DW_PLANE_ROW);
}

/* The same, linked (for the plan). */
int cmx_dw3x3_planar_path(int32_t stride_h, int32_t stride_w, int32_t out_w);

/* Whether cmx_depthwise_3x3_s8's grouped path can take this layer (channels a multiple of CMX_DW_GROUP, rows
 * of CMX_DW_GROUPED_WIDTH outputs or more): the plan gives it scratch, the kernel runs it on that scratch. */
static inline int cmx_dw3x3_grouped(int32_t channels, int32_t out_w) {
  return channels % CMX_DW_GROUP == 0 && out_w >= CMX_DW_GROUPED_WIDTH;
}

/* The grouped path's band: its input rows (padding included) and columns. */
static inline int32_t cmx_dw3x3_grouped_rows(int32_t out_h, int32_t stride_h) {
  const int32_t band = out_h < CMX_DW_GROUP_BAND ? out_h : CMX_DW_GROUP_BAND;
  return (band - 1) * stride_h + 3;
}

static inline int32_t cmx_dw3x3_grouped_width(int32_t out_w, int32_t stride_w) { return (out_w - 1) * stride_w + 3; }

/**
 * @brief Scratch of cmx_depthwise_3x3_s8's banded paths on a DSP core without Helium, one output channel
 *        per input channel: the planar path's plane (a band's input rows of one channel as int16), else
 *        the grouped path's band (a band's input rows, padding included, of four channels as int16;
 *        channels a multiple of four, rows of CMX_DW_GROUPED_WIDTH outputs or more), else 0 (the walk).
 * @return bytes of scratch
 */
int32_t cmx_dw3x3_band_scratch_bytes(int32_t channels, int32_t out_h, int32_t out_w, int32_t stride_h,
                                     int32_t stride_w);

/**
 * @brief Output rows a band of the banded path that takes this shape (planar or grouped): how far the
 *        kernel's writes run ahead of its reads.
 */
int32_t cmx_dw3x3_band_rows(int32_t stride_h, int32_t stride_w, int32_t out_w);

/* cmx_conv_helium_s8 reads each position's field in place (its input, no scratch): a 1x1 convolution of
 * stride 1 without padding. */
static inline int cmx_conv_helium_s8_in_place(int32_t kernel_h, int32_t kernel_w, int32_t stride_h, int32_t stride_w,
                                              int32_t pad_h, int32_t pad_w) {
  return kernel_h == 1 && kernel_w == 1 && stride_h == 1 && stride_w == 1 && pad_h == 0 && pad_w == 0;
}

/**
 * @brief Scratch of cmx_conv_helium_s8: none for a 1x1 convolution of stride 1 without padding (read in
 *        place), else one position's field (kernel rows x columns x channels, to a multiple of 4).
 * @return bytes of scratch
 */
int32_t cmx_conv_helium_s8_field_bytes(int32_t kernel_h, int32_t kernel_w, int32_t in_ch, int32_t stride_h,
                                       int32_t stride_w, int32_t pad_h, int32_t pad_w);

/**
 * @brief Lays a fully connected filter out as cmx_fully_connected_s8 reads it with G = group: rows in
 *        blocks of four, each G columns (each row padded with zeros to a multiple of G) of a block's rows
 *        side by side (row r's G bytes, then row r + 1's, ...); the last rows % 4 rows each on its own.
 * @param[in]  rows, cols  >= 1
 * @param[in]  group       CMX_FC_GROUP_DSP or CMX_FC_GROUP_MVE (the core's CMX_FC_GROUP)
 * @param[in]  filter      caller: [rows][cols] int8
 * @param[out] out         caller: cmx_fully_connected_s8_layout_bytes(rows, cols, group) bytes
 */
void cmx_fully_connected_s8_layout(int32_t rows, int32_t cols, int32_t group, const int8_t* filter, int8_t* out);

/* The bytes cmx_fully_connected_s8_layout lays `rows` x `cols` out in (each row padded to `group`). */
int32_t cmx_fully_connected_s8_layout_bytes(int32_t rows, int32_t cols, int32_t group);

/* The same on this core (CMX_FC_GROUP): also cmx_conv_helium_s8's weights. */
static inline int32_t cmx_fully_connected_s8_weight_bytes(int32_t rows, int32_t cols) {
  return cmx_fully_connected_s8_layout_bytes(rows, cols, CMX_FC_GROUP);
}

static inline void cmx_fully_connected_s8_weights(int32_t rows, int32_t cols, const int8_t* filter, int8_t* out) {
  cmx_fully_connected_s8_layout(rows, cols, CMX_FC_GROUP, filter, out);
}

/**
 * @brief Lays 4-bit weights out as cmx_fully_connected_s4 reads them: each weight plus 8 in a nibble;
 *        each row's columns in groups of 8 a word (byte k: column k low, column 4 + k high; missing
 *        columns 8), the words of a block of four rows side by side (group by group), the last
 *        rows % 4 rows each on its own.
 * @param[in]  rows, cols  >= 1
 * @param[in]  values      caller: [rows][cols] int8 in [-8, 7]
 * @param[out] out         caller: cmx_fully_connected_s4_weight_bytes(rows, cols) bytes
 */
void cmx_fully_connected_s4_weights(int32_t rows, int32_t cols, const int8_t* values, uint8_t* out);

/* The bytes cmx_fully_connected_s4_weights lays `rows` x `cols` out in: a word per 8 columns a row. */
int32_t cmx_fully_connected_s4_weight_bytes(int32_t rows, int32_t cols);

/**
 * @brief The channel constants as cmx_conv_helium_s8 reads them: per block of four channels their four
 *        kernel sums, four multipliers, four shifts; then each of the last rows % 4 channels' sum,
 *        multiplier and shift. One pointer walks them.
 * @param[in]  rows                             output channels, >= 1
 * @param[in]  kernel_sum, multiplier, shift    caller: [rows] int32 each
 * @param[out] out                              caller: 3 x rows int32
 */
void cmx_conv_helium_s8_constants(int32_t rows, const int32_t* kernel_sum, const int32_t* multiplier,
                                  const int32_t* shift, int32_t* out);

/**
 * @brief Scratch the backend gives an LSTM layer: arm_lstm_unidirectional_s8's / _s16's context (the
 *        int16 cell state and two int16 gate buffers, batch x hidden each), and for a backward one the
 *        input and output in reverse step order (elements of `element` bytes). In int64: the plan check
 *        sizes an untrusted plan with it.
 */
int64_t cmx_lstm_scratch_bytes(int32_t batch, int32_t steps, int32_t input_size, int32_t hidden, int32_t reverse,
                               int32_t element);

/* Scratch of cmx_gru_s8: its four int16 gate rows and its int8 zero state, to a word. */
int32_t cmx_gru_scratch_bytes(int32_t hidden);

/**
 * @brief Scratch the backend gives a batch matmul: b transposed (unless it already is; `element` bytes a
 *        value, to a word), then for the int8 kernel (element 1) arm_batch_matmul_s8's column sums
 *        (int32 each); arm_batch_matmul_s16 wants none.
 */
int64_t cmx_bmm_scratch_bytes(int32_t batches, int32_t inner, int32_t cols, int32_t transposed, int32_t element);

/* ... and where its column sums start: b transposed's bytes, to a word. */
int64_t cmx_bmm_transposed_bytes(int32_t batches, int32_t inner, int32_t cols, int32_t transposed, int32_t element);

#ifdef __cplusplus
}
#endif
