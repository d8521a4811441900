/* The plan cmx-gen's CMSIS-NN backend runs: the C side of cmx_gen/lower/delegate/plan.py (the
 * records' fields generated from plan_fields.py; tests/lower/test_delegate.py holds the header's
 * constants equal).
 *
 * Little-endian int32 words, read in place from the program in flash. Every record starts with
 * op, size (bytes of the record) and debug (the instruction id it reports as); CMSIS-NN's own
 * parameter structs are stored exactly as CMSIS-NN lays them out, so the runtime passes pointers
 * into the plan. A tensor operand >= 0 is a byte offset into the working memory, < 0 the
 * delegate argument -1-x; a constant is a byte offset from the plan's start, -1 none. Between the
 * header and the first record (layers_offset), one int32 per input, then per output, says where the
 * program placed it in the working memory (-1: apart; the runtime uses their arguments only), then one
 * uint32 per input, then per output, its bytes: what init checks every record against and execute
 * checks each argument against (cmx_plan_check). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "arm_nn_types.h"
#include "cmx_nn.h"

#define CMX_PLAN_MAGIC 0x50584D43u /* "CMXP" */
#define CMX_PLAN_VERSION 8u
#define CMX_PLAN_CORE_BYTES 16
#define CMX_PLAN_MAX_ARGS 16 /* inputs, the working memory, outputs */

/* The layer kinds' op codes (CMX_OP_<KIND>) and the lists every dispatch expands, generated from
 * their records (cmx_gen/data/backend_layers.yaml). */
#include "cmx_plan_kinds.h"

typedef struct {
  uint32_t magic;
  uint32_t version;
  char core[CMX_PLAN_CORE_BYTES];
  uint32_t n_layers;
  uint32_t n_inputs;
  uint32_t n_outputs;
  uint32_t work_bytes;
  uint32_t layers_offset;
  uint32_t data_offset;
  uint32_t plan_bytes;
} cmx_plan_header;

typedef struct {
  int32_t op;
  int32_t size;
  int32_t debug;
} cmx_layer_head;

/* Each kind's record, cmx_layer_<kind>: the head, then its fields, generated from their one list
 * (cmx_gen/lower/delegate/plan_fields.py), which plan.py packs. */
#include "cmx_plan_records.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 0 when the plan is safe to run: its sections inside its `plan_bytes`, every record of a kind this
 * runtime has and as long as its kind, and every record's tensors inside the working memory or their
 * argument's bytes, constants inside the plan's data (aligned), scratch at least the kernel's size,
 * shapes that agree (cmx_plan_check.c says what each kernel reads). Else 1 when the header is bad,
 * 2 + i when layer i is, and *why (may be NULL) says what. Checked once, at init. */
int32_t cmx_plan_check(const uint8_t* plan, size_t plan_bytes, const char** why);

#ifdef __cplusplus
}
#endif
