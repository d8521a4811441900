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

{%- if cookiecutter.model_slots %}

/* placement = "slot": the firmware reads its model slots at the addresses model/cmx_model.h gives
 * (from the board file, where `cmx-gen model-image`, `run` and `flash --model-only` write them); the
 * devicetree declares them as partitions cmx_slot_<name> (boards/<board>.overlay). Both must say
 * the same, or an image would be written where the firmware does not look. */
#if defined(__ZEPHYR__)
#include <zephyr/devicetree.h>
#include <zephyr/toolchain.h>
#define CMX_DT_SLOT_BASE(label) (DT_REG_ADDR(DT_GPARENT(DT_NODELABEL(label))) + DT_REG_ADDR(DT_NODELABEL(label)))
{%- for s in cookiecutter.model_slots %}
BUILD_ASSERT(CMX_DT_SLOT_BASE(cmx_slot_{{ s.name }}) == CMX_SLOT_{{ s.name | upper }}_BASE &&
                 DT_REG_SIZE(DT_NODELABEL(cmx_slot_{{ s.name }})) == CMX_SLOT_{{ s.name | upper }}_SIZE,
             "partition cmx_slot_{{ s.name }} is not model slot {{ s.name }} of the board file: move the slot in the board "
             "file's model_slots and run cmx-gen regen, rather than editing the overlay");
{%- if s.weights %}
BUILD_ASSERT(CMX_DT_SLOT_BASE(cmx_weight_{{ s.name }}) == CMX_SLOT_{{ s.name | upper }}_WEIGHTS_BASE &&
                 DT_REG_SIZE(DT_NODELABEL(cmx_weight_{{ s.name }})) == CMX_SLOT_{{ s.name | upper }}_WEIGHTS_SIZE,
             "partition cmx_weight_{{ s.name }} is not the weights area of model slot {{ s.name }} in the board file: "
             "move it in the board file's model_slots and run cmx-gen regen, rather than editing the overlay");
{%- endif %}
{%- endfor %}
#endif
{%- endif %}

#endif /* CMX_ZEPHYR_MODEL_H */
