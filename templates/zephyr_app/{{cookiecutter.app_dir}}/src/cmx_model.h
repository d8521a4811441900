/*
 * Pool sizes from Kconfig. The runner includes "cmx_model.h"; src/ comes first on the include
 * path, so this wrapper takes the generated model/cmx_model.h and replaces its pool sizes with
 * the Kconfig values (CONFIG_* from Zephyr's autoconf.h; defaults are the same numbers, from the
 * program's plan). Planned-buffer sizes are fixed by the program and stay as generated.
 */
#ifndef CMX_ZEPHYR_MODEL_H
#define CMX_ZEPHYR_MODEL_H

#include_next "cmx_model.h"

#if defined(CONFIG_EXECUTORCH_METHOD_ALLOCATOR_POOL_SIZE)
#undef CMX_METHOD_POOL_BYTES
#define CMX_METHOD_POOL_BYTES ((unsigned)CONFIG_EXECUTORCH_METHOD_ALLOCATOR_POOL_SIZE)
#endif
#if defined(CONFIG_EXECUTORCH_TEMP_ALLOCATOR_POOL_SIZE)
#undef CMX_TEMP_POOL_BYTES
#define CMX_TEMP_POOL_BYTES ((unsigned)CONFIG_EXECUTORCH_TEMP_ALLOCATOR_POOL_SIZE)
#endif

#endif /* CMX_ZEPHYR_MODEL_H */
