/* Size helpers used by board DTS files and overlays (same meaning as Zephyr's dts/common/mem.h). */
#ifndef CMX_STUB_MEM_H
#define CMX_STUB_MEM_H
#define DT_SIZE_K(x) ((x) * 1024)
#define DT_SIZE_M(x) (DT_SIZE_K(x) * 1024)
#endif
