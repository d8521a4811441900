/* The sizes and layouts of cmx_nn_layout.h: linked into the firmware (the kernels and the plan check
 * call them) and compiled for the lowering machine, where cmx-gen's plan asks them
 * (cmx_gen/lower/delegate/kernel_numbers.py). Plain C: no CMSIS-NN header, no intrinsic. */
#include "cmx_nn_layout.h"

#include <string.h>

int32_t cmx_conv_row_s8_row_bytes(const cmx_conv_row_params* p) {
  return p->dilation > 1 ? p->kernel * ((p->in_ch + 3) & ~3) : (p->kernel * cmx_conv_row_s8_column(p) + 3) & ~3;
}

int32_t cmx_conv_row_s8_chunk_bytes(const cmx_conv_row_params* p) {
  const int32_t positions = (p->chunk - 1) * p->stride + (p->kernel - 1) * p->dilation + 1;
  return (positions * cmx_conv_row_s8_column(p) + CMX_SLACK) * (int32_t)sizeof(int16_t);
}

int32_t cmx_conv_row_s8_triples(const cmx_conv_row_params* p) {
  return p->kernel == 1 && p->stride == 1 && p->pad == 0 && p->rows == 1 && p->dilation == 1 && p->out_ch >= 2 &&
         p->out_ch % 2 == 0 && p->in_ch % 16 == 0;
}

int32_t cmx_conv_row_s8_staged_at(const cmx_conv_row_params* p) { return (cmx_conv_row_s8_chunk_bytes(p) + 3) & ~3; }

int32_t cmx_conv_row_s8_scratch_bytes(const cmx_conv_row_params* p) {
  if (p->wide == 2) { /* the weights as int16, then the constants */
    return cmx_conv_row_s8_staged_at(p) + p->out_ch * p->row_bytes * (int32_t)sizeof(int16_t) +
           cmx_conv_row_s8_constants_words(p->out_ch) * (int32_t)sizeof(int32_t);
  }
  return cmx_conv_row_s8_chunk_bytes(p);
}

int32_t cmx_conv_row_s8_constants_words(int32_t out_ch) { return (out_ch + 1) / 2 * CMX_ROW_PAIR_WORDS; }

void cmx_conv_row_s8_constants(const cmx_conv_row_params* p, const int32_t* bias, const int32_t* mult,
                               const int32_t* shift, int32_t* out) {
  memset(out, 0, (size_t)cmx_conv_row_s8_constants_words(p->out_ch) * sizeof(int32_t));
  for (int32_t c = 0; c < p->out_ch; ++c) { /* the words cmx_row_bias, _mult and _shift_word read */
    int32_t* pair = out + c / 2 * CMX_ROW_PAIR_WORDS + (c & 1);
    pair[0] = bias != NULL ? bias[c] : 0;
    pair[2] = mult[c];
    pair[4] = cmx_right_and_offset(-shift[c], p->output_offset);
  }
}

void cmx_conv_row_s8_constants_read(int32_t out_ch, const int32_t* k, int32_t* bias, int32_t* mult, int32_t* shift) {
  for (int32_t c = 0; c < out_ch; ++c) {
    bias[c] = cmx_row_bias(k, c), mult[c] = cmx_row_mult(k, c), shift[c] = cmx_row_shift(k, c);
  }
}

void cmx_conv_row_s8_weights(const cmx_conv_row_params* p, const int8_t* filter, int8_t* out) {
  static const int8_t order[4] = {0, 2, 1, 3};
  const int32_t cols = p->rows * p->kernel * p->in_ch;
  const int32_t column = p->dilation > 1 ? p->in_ch : cmx_conv_row_s8_column(p); /* a widened column's values */
  const int32_t run = p->dilation > 1 ? p->in_ch : p->kernel * column;         /* values per run */
  const int32_t run_bytes = p->dilation > 1 ? (run + 3) & ~3 : p->row_bytes; /* values per padded run */
  int16_t* wide = (int16_t*)(void*)out;
  for (int32_t c = 0; c < p->out_ch; ++c) {
    const int32_t pair = c / 2, second = c & 1, paired = second || c + 1 < p->out_ch;
    for (int32_t i = 0; i < p->row_bytes; ++i) {
      const int32_t at = p->wide == 1 ? i : (i & ~3) + order[i & 3]; /* value of the padded row */
      const int32_t k = at / run_bytes, j = at % run_bytes;
      int8_t v = 0;
      if (j < run) {
        /* run value j of tap k: filter [c][ky][kx][ch] read column by column (kx, ky, ch), a column's
         * padding zero */
        const int32_t at_field = k * run + j, kx = at_field / column, r = at_field % column;
        if (r < p->rows * p->in_ch) v = filter[c * cols + ((r / p->in_ch) * p->kernel + kx) * p->in_ch + r % p->in_ch];
      }
      const int32_t to = paired ? pair * 2 * p->row_bytes + (i / 4) * 8 + second * 4 + (i & 3) : c * p->row_bytes + i;
      if (p->wide == 1) {
        wide[to] = v;
      } else {
        out[to] = v;
      }
    }
  }
}

int cmx_dw3x3_planar_path(int32_t stride_h, int32_t stride_w, int32_t out_w) {
  return cmx_dw3x3_planar(stride_h, stride_w, out_w);
}

int32_t cmx_dw3x3_band_scratch_bytes(int32_t channels, int32_t out_h, int32_t out_w, int32_t stride_h,
                                     int32_t stride_w) {
  const int32_t band = out_h < CMX_DW_BAND ? out_h : CMX_DW_BAND;
  const int32_t plane = (band + 2) * CMX_DW_PLANE_ROW * (int32_t)sizeof(int16_t);
  if (cmx_dw3x3_planar(stride_h, stride_w, out_w) && !cmx_dw3x3_planar_narrow(stride_h, stride_w, out_w)) return plane;
  int32_t grouped = 0;
  if (cmx_dw3x3_grouped(channels, out_w)) {
    grouped = cmx_dw3x3_grouped_rows(out_h, stride_h) * cmx_dw3x3_grouped_width(out_w, stride_w) * CMX_DW_GROUP *
              (int32_t)sizeof(int16_t);
  }
  /* a narrow planar shape: the plane, or the grouped path's band where the layer is not fast and full */
  if (cmx_dw3x3_planar_narrow(stride_h, stride_w, out_w)) return plane > grouped ? plane : grouped;
  return grouped;
}

int32_t cmx_dw3x3_band_rows(int32_t stride_h, int32_t stride_w, int32_t out_w) {
  return cmx_dw3x3_planar(stride_h, stride_w, out_w) ? CMX_DW_BAND : CMX_DW_GROUP_BAND;
}

int32_t cmx_conv_helium_s8_field_bytes(int32_t kernel_h, int32_t kernel_w, int32_t in_ch, int32_t stride_h,
                                       int32_t stride_w, int32_t pad_h, int32_t pad_w) {
  const int in_place = cmx_conv_helium_s8_in_place(kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w);
  return in_place ? 0 : (kernel_h * kernel_w * in_ch + 3) & ~3;
}

void cmx_fully_connected_s8_layout(int32_t rows, int32_t cols, int32_t group, const int8_t* filter, int8_t* out) {
  const int32_t padded = (cols + group - 1) / group * group, blocks = rows / 4;
  for (int32_t r = 0; r < rows; ++r) {
    for (int32_t i = 0; i < padded; ++i) {
      const int32_t at = r < blocks * 4 ? ((r / 4) * padded + (i / group) * group) * 4 + (r % 4) * group + i % group
                                        : r * padded + i;
      out[at] = i < cols ? filter[r * cols + i] : 0;
    }
  }
}

int32_t cmx_fully_connected_s8_layout_bytes(int32_t rows, int32_t cols, int32_t group) {
  return rows * ((cols + group - 1) / group * group);
}

int32_t cmx_fully_connected_s4_weight_bytes(int32_t rows, int32_t cols) {
  return rows * ((cols + CMX_FC_S4_GROUP - 1) / CMX_FC_S4_GROUP) * 4;
}

void cmx_fully_connected_s4_weights(int32_t rows, int32_t cols, const int8_t* values, uint8_t* out) {
  const int32_t groups = (cols + CMX_FC_S4_GROUP - 1) / CMX_FC_S4_GROUP, blocks = rows / CMX_FC_S4_ROWS;
  for (int32_t r = 0; r < rows; ++r) {
    for (int32_t g = 0; g < groups; ++g) {
      const int32_t word = r < blocks * CMX_FC_S4_ROWS
                               ? ((r / CMX_FC_S4_ROWS) * groups + g) * CMX_FC_S4_ROWS + r % CMX_FC_S4_ROWS
                               : r * groups + g;
      for (int32_t k = 0; k < 4; ++k) {
        const int32_t lo = g * CMX_FC_S4_GROUP + k, hi = lo + 4;
        const int32_t u_lo = (lo < cols ? values[r * cols + lo] : 0) + 8;
        const int32_t u_hi = (hi < cols ? values[r * cols + hi] : 0) + 8;
        out[word * 4 + k] = (uint8_t)(u_lo | (u_hi << 4));
      }
    }
  }
}

void cmx_conv_helium_s8_constants(int32_t rows, const int32_t* kernel_sum, const int32_t* multiplier,
                                  const int32_t* shift, int32_t* out) {
  const int32_t blocks = rows >> 2;
  for (int32_t b = 0; b < blocks; ++b, out += 12) {
    for (int32_t i = 0; i < 4; ++i) {
      out[i] = kernel_sum[4 * b + i];
      out[4 + i] = multiplier[4 * b + i];
      out[8 + i] = shift[4 * b + i];
    }
  }
  for (int32_t at = 4 * blocks; at < rows; ++at, out += 3) {
    out[0] = kernel_sum[at];
    out[1] = multiplier[at];
    out[2] = shift[at];
  }
}

int64_t cmx_lstm_scratch_bytes(int32_t batch, int32_t steps, int32_t input_size, int32_t hidden, int32_t reverse,
                               int32_t element) {
  const int64_t b = batch, context = 3 * b * hidden * (int64_t)sizeof(int16_t);
  return context + (reverse ? element * b * steps * ((int64_t)input_size + hidden) : 0);
}

int32_t cmx_gru_scratch_bytes(int32_t hidden) {
  return (4 * hidden * (int32_t)sizeof(int16_t) + hidden + 3) & ~3;
}

int64_t cmx_bmm_transposed_bytes(int32_t batches, int32_t inner, int32_t cols, int32_t transposed, int32_t element) {
  return transposed ? 0 : ((int64_t)element * batches * inner * cols + 3) & ~(int64_t)3;
}

int64_t cmx_bmm_scratch_bytes(int32_t batches, int32_t inner, int32_t cols, int32_t transposed, int32_t element) {
  const int64_t sums = element == 1 ? (int64_t)cols * (int64_t)sizeof(int32_t) : 0;
  return cmx_bmm_transposed_bytes(batches, inner, cols, transposed, element) + sums;
}
