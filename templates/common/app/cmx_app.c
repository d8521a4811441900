/*
 * cmx_app.c - the application helpers of cmx_app.h, over the model API (cmx.h) and the platform
 * layer (cmx_platform.h). No heap, no stdio: lines are built in a fixed buffer.
 */
#include "cmx_app.h"
#include "cmx_models.h" /* CMX_NUM_MODELS: an app of several names the model on each call line */

#include <string.h>

#include "cmx_platform.h"

/* --- a line builder (newlib's printf lacks %zu and costs heap) --- */
typedef struct {
  char buf[200];
  size_t n;
} line_t;

static void put_s(line_t* l, const char* t) {
  while (*t && l->n + 1 < sizeof(l->buf)) l->buf[l->n++] = *t++;
  l->buf[l->n] = '\0';
}

static void put_u(line_t* l, uint64_t v) {
  char tmp[24];
  int i = 0;
  do {
    tmp[i++] = (char)('0' + v % 10u);
    v /= 10u;
  } while (v);
  while (i && l->n + 1 < sizeof(l->buf)) l->buf[l->n++] = tmp[--i];
  l->buf[l->n] = '\0';
}

/* A value with up to 3 decimals, trailing zeros trimmed: -1.5, 0, 0.125 */
static void put_f(line_t* l, float v) {
  if (v != v) {
    put_s(l, "nan");
    return;
  }
  if (v < 0) {
    put_s(l, "-");
    v = -v;
  }
  if (v > 1e15f) {
    put_s(l, "inf");
    return;
  }
  uint64_t milli = (uint64_t)((double)v * 1000.0 + 0.5);
  put_u(l, milli / 1000u);
  uint32_t frac = (uint32_t)(milli % 1000u);
  if (frac) {
    char d[5] = {'.', (char)('0' + frac / 100u), (char)('0' + frac / 10u % 10u), (char)('0' + frac % 10u), 0};
    int end = 3;
    while (d[end] == '0') d[end--] = 0;
    put_s(l, d);
  }
}

static void print_line(line_t* l) {
  cmx_platform_puts(l->buf);
  cmx_platform_puts("\n");
}

int cmx_app_init(void) { return cmx_platform_init(); }
uint64_t cmx_app_counter(void) { return cmx_platform_counter(); }
const char* cmx_app_counter_name(void) { return cmx_platform_counter_name(); }

void cmx_app_puts(const char* text) {
  cmx_platform_puts(text);
  cmx_platform_puts("\n");
}

void cmx_app_exit(int status) { cmx_platform_exit(status); }

cmx_app_input cmx_app_default_input(cmx_model* model) {
  cmx_app_input source = CMX_APP_INPUT_HOST;
  for (size_t i = 0; i < cmx_num_inputs(model); ++i) {
    cmx_tensor in;
    if (cmx_input(model, i, &in) != CMX_OK) return CMX_APP_INPUT_END;
    /* an input in the caller's buffer has no room here to read the host's bytes into */
    const int host = source == CMX_APP_INPUT_HOST && cmx_platform_read && !in.caller_buffer;
    int got = host ? cmx_platform_read(in.data, (uint32_t)in.nbytes) : 0;
    if (got < 0) return CMX_APP_INPUT_END;
    if (got == 0) {
      const void* ref;
      size_t nbytes;
      if (cmx_reference_input(model, i, &ref, &nbytes) != CMX_OK || nbytes != in.nbytes) return CMX_APP_INPUT_END;
      if (cmx_input_bind(model, i, ref, nbytes) != CMX_OK) return CMX_APP_INPUT_END;
      source = CMX_APP_INPUT_REFERENCE;
    }
  }
  return source;
}

/* Element k of a tensor, dequantized when it has a scale. */
static float value_at(const cmx_tensor* t, size_t k) {
  float v;
  switch (t->dtype) {
    case CMX_DTYPE_FLOAT32: return ((const float*)t->data)[k];
    case CMX_DTYPE_INT8: v = (float)((const int8_t*)t->data)[k]; break;
    case CMX_DTYPE_UINT8: v = (float)((const uint8_t*)t->data)[k]; break;
    case CMX_DTYPE_INT16: v = (float)((const int16_t*)t->data)[k]; break;
    case CMX_DTYPE_INT32: v = (float)((const int32_t*)t->data)[k]; break;
    default: return 0.0f;
  }
  return t->scale > 0.0f ? t->scale * (v - (float)t->zero_point) : v;
}

static void put_top_k(line_t* l, const cmx_tensor* t) {
  enum { K = 3 };
  size_t best[K];
  size_t found = 0;
  for (size_t k = 0; k < t->numel; ++k) {
    size_t at = found < K ? found++ : K;
    while (at > 0 && value_at(t, best[at - 1]) < value_at(t, k)) {
      if (at < K) best[at] = best[at - 1];
      --at;
    }
    if (at < K) best[at] = k;
  }
  put_s(l, " top=");
  for (size_t i = 0; i < found; ++i) {
    if (i) put_s(l, ",");
    put_u(l, best[i]);
    put_s(l, ":");
    put_f(l, value_at(t, best[i]));
  }
}

static void put_summary(line_t* l, const cmx_tensor* t) {
  float lo = 0.0f, hi = 0.0f;
  double sum = 0.0;
  for (size_t k = 0; k < t->numel; ++k) {
    float v = value_at(t, k);
    if (k == 0 || v < lo) lo = v;
    if (k == 0 || v > hi) hi = v;
    sum += v;
  }
  put_s(l, " min=");
  put_f(l, lo);
  put_s(l, " max=");
  put_f(l, hi);
  put_s(l, " mean=");
  put_f(l, t->numel ? (float)(sum / (double)t->numel) : 0.0f);
}

/* `cmx-gen: out <output> <offset> <hex>`, 32 bytes a line (as the check's CMX_DUMP_OUTPUTS). */
static void print_bytes(size_t index, const uint8_t* bytes, size_t nbytes) {
  static const char digits[] = "0123456789abcdef";
  for (size_t at = 0; at < nbytes; at += 32u) {
    line_t l = {{0}, 0};
    put_s(&l, "cmx-gen: out ");
    put_u(&l, index);
    put_s(&l, " ");
    put_u(&l, at);
    put_s(&l, " ");
    for (size_t k = at; k < at + 32u && k < nbytes; ++k) {
      const char pair[3] = {digits[bytes[k] >> 4], digits[bytes[k] & 15u], 0};
      put_s(&l, pair);
    }
    print_line(&l);
  }
}

void cmx_app_print_call(cmx_model* model, uint32_t call, cmx_app_input input, uint64_t count, int bytes) {
  line_t l = {{0}, 0};
  cmx_stats s;
  cmx_get_stats(model, &s);
  put_s(&l, "cmx-gen: call ");
  put_u(&l, call);
  put_s(&l, input == CMX_APP_INPUT_HOST ? " input=host " : " input=reference ");
  put_s(&l, cmx_platform_counter_name());
  put_s(&l, "=");
  put_u(&l, count);
  put_s(&l, " method=");
  put_u(&l, s.method_used);
  put_s(&l, "/");
  put_u(&l, s.method_size);
  put_s(&l, " planned=");
  put_u(&l, s.planned_used);
  put_s(&l, "/");
  put_u(&l, s.planned_size);
  put_s(&l, " temp=");
  put_u(&l, s.temp_used);
  put_s(&l, "/");
  put_u(&l, s.temp_size);
  cmx_tensor out;
  if (cmx_output(model, 0, &out) == CMX_OK) {
    if (cmx_num_outputs(model) == 1 && out.numel >= 2 && out.numel <= 1000) {
      put_top_k(&l, &out);
    } else {
      put_summary(&l, &out);
    }
  }
#if CMX_NUM_MODELS > 1
  put_s(&l, " model=");
  put_s(&l, cmx_name(model));
#endif
  print_line(&l);
  for (size_t i = 0; bytes && i < cmx_num_outputs(model); ++i) {
    if (cmx_output(model, i, &out) == CMX_OK) print_bytes(i, (const uint8_t*)out.data, out.nbytes);
  }
}

void cmx_app_print_error(cmx_model* model, const char* what, cmx_status status) {
  static const char digits[] = "0123456789abcdef";
  line_t l = {{0}, 0};
  uint32_t detail = cmx_error_detail(model);
  char hex[11] = {'0', 'x'};
  int n = 2;
  for (int shift = 28; shift >= 0; shift -= 4) {
    uint32_t d = (detail >> shift) & 0xFu;
    if (d || n > 2 || shift == 0) hex[n++] = digits[d];
  }
  hex[n] = '\0';
  put_s(&l, "cmx-gen: FAIL error=");
  put_s(&l, cmx_status_name(status));
  put_s(&l, ":");
  put_s(&l, hex);
  put_s(&l, " at=");
  put_s(&l, what);
  print_line(&l);
}

void cmx_app_print_done(uint32_t calls) {
  line_t l = {{0}, 0};
  put_s(&l, "cmx-gen: done calls=");
  put_u(&l, calls);
  uint32_t stack_used = 0, stack_size = 0; /* the high-water mark over every call, where measured */
  if (cmx_platform_stack && cmx_platform_stack(&stack_used, &stack_size) == 0) {
    put_s(&l, " stack=");
    put_u(&l, stack_used);
    put_s(&l, "/");
    put_u(&l, stack_size);
  }
  print_line(&l);
}
