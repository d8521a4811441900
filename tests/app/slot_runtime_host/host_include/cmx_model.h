/* The app's model/cmx_model.h as the host harness builds it: the method pool four times the
 * target's. On a 64-bit host the runtime's objects (pointers, spans) in the method pool are about
 * twice their Cortex-M size; the slot's own needs are still checked against the target's figure
 * (the header's method_pool_bytes <= the firmware's), so nothing the check decides changes. */
#ifndef CMX_HOST_MODEL_H
#define CMX_HOST_MODEL_H

#include_next "cmx_model.h"

#ifdef __cplusplus
constexpr unsigned cmx_target_method_pool_bytes = CMX_METHOD_POOL_BYTES;
#undef CMX_METHOD_POOL_BYTES
#define CMX_METHOD_POOL_BYTES (4u * cmx_target_method_pool_bytes)
#endif

#endif /* CMX_HOST_MODEL_H */
