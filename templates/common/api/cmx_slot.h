/*
 * cmx_slot.h - a model slot: the program, its reference I/O and what it needs, as one blob in a
 * flash region of its own (placement = "slot"), checked before anything in it is parsed.
 *
 * The layout is this header's (cmx_gen/program/slot_image.py writes it; tests/program/
 * test_slot_image.py compiles this file on the host and holds the two equal). Little-endian, every
 * offset from the slot's first byte:
 *
 *   cmx_slot_header   magic, format, total_bytes, header_bytes, sha256, then the hashed fields
 *   the program       16-byte aligned (Program::load wants 8), pte_offset / pte_bytes
 *   reference data    each reference tensor's bytes, 4-byte aligned
 *
 * sha256 is the SHA-256 of bytes [CMX_SLOT_HASHED_FROM, total_bytes): every field after it and the
 * whole payload. A slot being written, cut short or with one flipped bit fails it; nothing else in
 * the slot is read before it passed. What it proves is integrity: authenticity (who made the blob)
 * is the product's (cmx_slot_authenticate, a weak hook).
 *
 * Weights outside the slot: with weights_bytes > 0 the slot holds the program only up to its
 * segments (its header and flatbuffer: pte_bytes is the program's segment base) and the segments,
 * the weights and plans its delegates carry, are the first weights_bytes of the slot's weights area
 * (memory-mapped storage the board file names: external flash, DDR), read in place;
 * weights_sha256 is their SHA-256, checked with the slot.
 *
 * Private to cmx/api: applications read slots through cmx.h (cmx_slot_state).
 */
#ifndef CMX_SLOT_H
#define CMX_SLOT_H

#include <stddef.h>
#include <stdint.h>

#include "cmx.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CMX_SLOT_MAGIC 0x53584D43u /* "CMXS" */
#define CMX_SLOT_FORMAT 3u
#define CMX_SLOT_MAX_IO 8
#define CMX_SLOT_MAX_PLANNED 4
#define CMX_SLOT_NAME_BYTES 32
#define CMX_SLOT_CORE_BYTES 16
#define CMX_SLOT_HASHED_FROM 48u

/* One input or output: its reference bytes (offset into the slot, 0 with no bytes) and quantization. */
typedef struct {
  uint32_t offset;
  uint32_t nbytes;
  uint32_t numel;
  int32_t dtype;       /* ExecuTorch ScalarType */
  float scale;         /* the check's error unit: the output's quantization step, 0: its own unit */
  int32_t zero_point;
  float io_scale;      /* --io int8: real = io_scale * (q - io_zero_point); 0: float I/O */
  int32_t io_zero_point;
  float io_inv_scale;  /* 1/io_scale rounded once, as torch's quantize_per_tensor multiplies by it */
} cmx_slot_tensor;

typedef struct {
  uint32_t magic;
  uint32_t format;
  uint32_t total_bytes;  /* header and payload */
  uint32_t header_bytes; /* sizeof(cmx_slot_header) */
  uint8_t sha256[32];
  /* hashed from here (CMX_SLOT_HASHED_FROM) */
  uint32_t sequence; /* the firmware runs the highest that verifies and passes its self-check */
  char core[CMX_SLOT_CORE_BYTES];
  char isa[8];       /* "MVE", "DSP", "SCALAR": the kernels' weight layouts */
  char name[CMX_SLOT_NAME_BYTES];
  uint32_t plan_version; /* cmx_plan.h CMX_PLAN_VERSION of the backend plans inside; 0: none */
  uint32_t kinds;        /* bit k: the plans use backend layer kind k (cmx_plan.h cmx_plan_op), k < 32 */
  uint32_t kinds_high;   /* bit k - 32: kind k, k from 32 to 63 */
  uint32_t method_pool_bytes;
  uint32_t temp_pool_bytes;
  uint32_t planned_count;
  uint32_t planned_sizes[CMX_SLOT_MAX_PLANNED];
  uint32_t num_inputs;
  uint32_t num_outputs;
  uint32_t pte_offset;
  uint32_t pte_bytes;
  float tolerance;        /* the self-check's largest accepted error (0: bit-exact) */
  uint32_t has_reference; /* 0: no expected outputs (no self-check possible) */
  uint32_t reference_bundle;
  cmx_slot_tensor inputs[CMX_SLOT_MAX_IO];
  cmx_slot_tensor outputs[CMX_SLOT_MAX_IO];
  uint32_t weights_bytes; /* the program's segments in the weights area; 0: the whole program is here */
  uint8_t weights_sha256[32];
} cmx_slot_header;

/* What the firmware was built to run: a slot that needs more is refused before it is parsed. */
typedef struct {
  const char* core;
  const char* isa;
  uint32_t plan_version;
  uint64_t kinds; /* the backend's compiled-in layer kinds: bit k for kind k */
  uint32_t method_pool_bytes;
  uint32_t temp_pool_bytes;
  uint32_t planned_pool_bytes; /* the pool the planned buffers are cut from, each rounded to 16 */
  uint32_t num_inputs;
  uint32_t num_outputs;
  float max_tolerance; /* the most error the model's self-check may accept (0: bit-exact) */
} cmx_slot_fit;

/* Check the slot at `slot` (`size` bytes of flash), and its weights area `weights` (`weights_size`
 * bytes; NULL, 0 for a slot without one), against the firmware: CMX_OK and *header set, or
 * CMX_E_SLOT_EMPTY (no magic: erased or never written), CMX_E_SLOT_CORRUPT (length, hash or a field
 * outside the slot; weights longer than their area or not the ones hashed), CMX_E_SLOT_INCOMPATIBLE
 * (another core, code path, plan version, I/O count, a layer kind this firmware lacks, no reference
 * for the self-check or a tolerance above the firmware's, or weights outside the slot where the
 * firmware has no weights area) or CMX_E_SLOT_TOO_LARGE (more pool than
 * the firmware has). The weights are hashed last, after every cheaper check passed. */
cmx_status cmx_slot_verify(const uint8_t* slot, size_t size, const uint8_t* weights, size_t weights_size,
                           const cmx_slot_fit* fit, const cmx_slot_header** header);

/* SHA-256 of `n` bytes (FIPS 180-4). */
void cmx_sha256(const uint8_t* data, size_t n, uint8_t digest[32]);

/* The product's own check of a slot that verified (a signature with its key): nonzero refuses it
 * (CMX_E_SLOT_REJECTED). Weak: without one every slot that verifies is taken. */
int cmx_slot_authenticate(const uint8_t* slot, size_t nbytes, uint32_t slot_index);

#ifdef __cplusplus
}
#endif

#endif /* CMX_SLOT_H */
