/*
 * cmx_cycles: a QEMU TCG plugin that records what cmx-gen's cycle estimate prices
 * (cmx_gen/device/cycles/), inside the measured region only.
 *
 *   -plugin cmx_cycles.so,begin=0x<addr>,end=0x<addr>,out=<file>[,region=0x<lo>:0x<hi>]...
 *                         [,mark=0x<lo>:0x<hi>] [,cache=<region>:<line bytes>:<lines>:<data lines>]...
 *
 * The region opens when the block at `begin` runs (cmx_measure_begin, called just before the
 * inference's first counter read) and closes at the block at `end`. For each translated block it
 * writes its address, its instruction count and byte size, how often it ran and how often the next
 * block that ran was not the one that follows it in memory (its last instruction branched: taken);
 * then the loads and stores into each region given (the board's memories), and those in none, and
 * how often the region opened (all counts are its sum).
 *
 * With `mark=`, the profile image's marks cut the region into segments: a load from byte k of the
 * marks array (the runner's cmx_profile_mark(k); the API has no register reads, so the key is the
 * address) closes the segment since the previous mark and gives it key k. Each segment is written
 * as it closes (`segment <key>`, its blocks' runs and taken branches, its loads and stores per
 * region); what runs after the last mark closes as key -1 with the region.
 *
 * With `cache=`, a region sits behind a flash accelerator (ST's ART): an instruction cache of
 * <lines> lines and a data cache of <data lines>, each line <line bytes> (a power of two), each fully
 * associative and least-recently-used first out. Each block that runs fetches the lines its bytes
 * span; each load reads one. Per cached region it writes the instruction lines missed right after the
 * line before them (what a prefetch of the next line can hide), those missed elsewhere (after a
 * branch), and the data lines missed (`cache <region> <sequential> <branched> <data>`, per segment
 * `scache`): the estimate prices each with the region's wait states.
 *
 * Debian's QEMU 7.2 runs plugins but ships no qemu-plugin.h: the declarations below are the few of
 * plugin API version 1 this file uses.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
typedef uint32_t qemu_plugin_meminfo_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
enum qemu_plugin_mem_rw { QEMU_PLUGIN_MEM_R = 1, QEMU_PLUGIN_MEM_W, QEMU_PLUGIN_MEM_RW };
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_mem_cb_t)(unsigned int vcpu_index, qemu_plugin_meminfo_t info, uint64_t vaddr,
                                          void *userdata);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
                                          enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_mem_cb_t cb,
                                      enum qemu_plugin_cb_flags flags, enum qemu_plugin_mem_rw rw, void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
bool qemu_plugin_mem_is_store(qemu_plugin_meminfo_t info);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define MAX_REGIONS 8

struct block {
  uint64_t vaddr, end; /* [vaddr, end): the block's bytes */
  uint64_t insns, runs, taken;
  uint64_t seg_runs, seg_taken; /* the same, in the open segment */
  struct block *next;           /* every translation, for the report */
  struct block *next_dirty;     /* the blocks the open segment ran */
  bool dirty;
};

static struct block *blocks;
static struct block *previous; /* the block that ran last inside the region */
static uint64_t begin_at, end_at;
static bool measuring;
static uint64_t opened; /* how often the region opened */
static int regions;
static uint64_t region_lo[MAX_REGIONS], region_hi[MAX_REGIONS];
static uint64_t loads[MAX_REGIONS + 1], stores[MAX_REGIONS + 1]; /* the last: in no region given */
static char out_path[4096];
static uint64_t mark_lo, mark_hi; /* the marks array: [mark_lo, mark_hi) */
static struct block *dirty;       /* the open segment's blocks */
static uint64_t seg_loads[MAX_REGIONS + 1], seg_stores[MAX_REGIONS + 1];
static FILE *segments; /* the segments so far, copied into the report at exit */

struct lru {
  uint64_t *line, *used; /* each way's line (address >> shift, + 1: 0 is empty) and when last used */
  int ways;
};
struct accelerator {
  unsigned shift;          /* log2 of the line's bytes */
  struct lru code, data;
  uint64_t last;           /* the last instruction line fetched (+ 1) */
  uint64_t missed[3];      /* sequential, branched, data */
  uint64_t seg_missed[3];
};
static struct accelerator *accel[MAX_REGIONS];
static bool accelerated; /* any cache= given: only then does a block's run follow its lines */
static uint64_t lru_clock;

/* Whether `line` was in the cache; it is now, the oldest line out. */
static bool lru_hit(struct lru *c, uint64_t line) {
  int oldest = 0;
  lru_clock++;
  for (int i = 0; i < c->ways; i++) {
    if (c->line[i] == line + 1) {
      c->used[i] = lru_clock;
      return true;
    }
    if (c->used[i] < c->used[oldest]) oldest = i;
  }
  c->line[oldest] = line + 1;
  c->used[oldest] = lru_clock;
  return false;
}

static void missed(struct accelerator *a, int kind) {
  a->missed[kind]++;
  a->seg_missed[kind]++;
}

/* The instruction lines a block's run fetches from a cached region. */
static void fetch(const struct block *b) {
  for (int i = 0; i < regions; i++) {
    struct accelerator *a = accel[i];
    if (a == NULL || b->vaddr < region_lo[i] || b->vaddr >= region_hi[i]) continue;
    for (uint64_t line = b->vaddr >> a->shift; line <= (b->end - 1) >> a->shift; line++) {
      if (!lru_hit(&a->code, line)) missed(a, a->last != 0 && line == a->last ? 0 : 1); /* last: previous + 1 */
      a->last = line + 1;
    }
    return;
  }
}

static void touch(struct block *b) {
  if (b->dirty) return;
  b->dirty = true;
  b->next_dirty = dirty;
  dirty = b;
}

/* Close the open segment under `key`. */
static void close_segment(long long key) {
  if (segments == NULL) segments = tmpfile();
  if (segments == NULL) return;
  fprintf(segments, "segment %lld\n", key);
  for (struct block *b = dirty; b != NULL; b = b->next_dirty) {
    if (b->seg_runs || b->seg_taken)
      fprintf(segments, "sblock %llx %llu %llu %llu %llu\n", (unsigned long long)b->vaddr,
              (unsigned long long)b->insns, (unsigned long long)(b->end - b->vaddr),
              (unsigned long long)b->seg_runs, (unsigned long long)b->seg_taken);
    b->seg_runs = b->seg_taken = 0;
    b->dirty = false;
  }
  dirty = NULL;
  for (int i = 0; i <= regions; i++) {
    if (seg_loads[i] || seg_stores[i])
      fprintf(segments, "smemory %d %llu %llu\n", i < regions ? i : -1, (unsigned long long)seg_loads[i],
              (unsigned long long)seg_stores[i]);
    seg_loads[i] = seg_stores[i] = 0;
    if (accel[i] != NULL) {
      uint64_t *m = accel[i]->seg_missed;
      if (m[0] || m[1] || m[2])
        fprintf(segments, "scache %d %llu %llu %llu\n", i, (unsigned long long)m[0], (unsigned long long)m[1],
                (unsigned long long)m[2]);
      m[0] = m[1] = m[2] = 0;
    }
  }
}

static void block_ran(unsigned int vcpu, void *udata) {
  struct block *b = udata;
  (void)vcpu;
  if (b->vaddr == end_at && measuring) {
    measuring = false;
    if (mark_hi) close_segment(-1);
  }
  if (b->vaddr == begin_at) {
    opened += !measuring;
    measuring = true;
    previous = NULL;
  }
  if (!measuring) return;
  b->runs++;
  b->seg_runs++;
  touch(b);
  if (previous != NULL && previous->end != b->vaddr) {
    previous->taken++;
    previous->seg_taken++;
    touch(previous);
  }
  previous = b;
  if (accelerated) fetch(b);
}

static void memory_access(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata) {
  int i = 0;
  (void)vcpu;
  (void)udata;
  if (!measuring) return;
  while (i < regions && !(vaddr >= region_lo[i] && vaddr < region_hi[i])) i++;
  if (qemu_plugin_mem_is_store(info)) stores[i]++, seg_stores[i]++;
  else {
    loads[i]++, seg_loads[i]++;
    if (i < regions && accel[i] != NULL && !lru_hit(&accel[i]->data, vaddr >> accel[i]->shift)) missed(accel[i], 2);
  }
  if (vaddr >= mark_lo && vaddr < mark_hi && !qemu_plugin_mem_is_store(info)) {
    close_segment((long long)(vaddr - mark_lo));
  }
}

/* An instruction's bytes from its first halfword (Thumb: 32 bits where bits 15-11 are 0b11101,
 * 0b11110 or 0b11111). Not qemu_plugin_insn_size: QEMU 7.2 gives the instruction before a page
 * edge the first halfword of the next one too (read to see whether that one crosses the edge), and
 * the block it closes then seemed to end two bytes past where the next one starts: a taken branch
 * counted where the code falls through (+3 % on KWS's estimate, by where the linker put a loop). */
static uint64_t thumb_size(const struct qemu_plugin_insn *insn) {
  const uint8_t *bytes = qemu_plugin_insn_data(insn);
  const unsigned first = bytes[0] | (unsigned)bytes[1] << 8;
  return (first >> 11) >= 0x1d ? 4 : 2;
}

static void translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
  struct block *b = calloc(1, sizeof *b);
  size_t n = qemu_plugin_tb_n_insns(tb);
  (void)id;
  if (b == NULL) return;
  b->vaddr = b->end = qemu_plugin_tb_vaddr(tb);
  b->insns = n;
  for (size_t i = 0; i < n; i++) {
    struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
    b->end += thumb_size(insn);
    qemu_plugin_register_vcpu_mem_cb(insn, memory_access, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, NULL);
  }
  b->next = blocks;
  blocks = b;
  qemu_plugin_register_vcpu_tb_exec_cb(tb, block_ran, QEMU_PLUGIN_CB_NO_REGS, b);
}

static void report(qemu_plugin_id_t id, void *udata) {
  FILE *f = fopen(out_path, "w");
  (void)id;
  (void)udata;
  if (f == NULL) return;
  fprintf(f, "cmx-cycles 1\nopened %llu\n", (unsigned long long)opened);
  for (struct block *b = blocks; b != NULL; b = b->next)
    if (b->runs) fprintf(f, "block %llx %llu %llu %llu %llu\n", (unsigned long long)b->vaddr,
                         (unsigned long long)b->insns, (unsigned long long)(b->end - b->vaddr),
                         (unsigned long long)b->runs, (unsigned long long)b->taken);
  for (int i = 0; i <= regions; i++)
    fprintf(f, "memory %d %llu %llu\n", i < regions ? i : -1, (unsigned long long)loads[i],
            (unsigned long long)stores[i]);
  for (int i = 0; i < regions; i++)
    if (accel[i] != NULL)
      fprintf(f, "cache %d %llu %llu %llu\n", i, (unsigned long long)accel[i]->missed[0],
              (unsigned long long)accel[i]->missed[1], (unsigned long long)accel[i]->missed[2]);
  if (segments != NULL) {
    char buf[65536];
    size_t n;
    rewind(segments);
    while ((n = fread(buf, 1, sizeof buf, segments)) > 0) fwrite(buf, 1, n, f);
    fclose(segments);
  }
  fclose(f);
}

static bool lru_init(struct lru *c, long ways) {
  c->ways = (int)ways;
  c->line = calloc((size_t)ways, sizeof *c->line);
  c->used = calloc((size_t)ways, sizeof *c->used);
  return ways > 0 && ways <= 4096 && c->line != NULL && c->used != NULL;
}

/* cache=<region>:<line bytes>:<lines>:<data lines> (the region's index among the region= given before). */
static bool add_accelerator(const char *spec) {
  char *rest;
  long index = strtol(spec, &rest, 0), bytes, lines, data;
  if (*rest != ':' || index < 0 || index >= regions || accel[index] != NULL) return false;
  bytes = strtol(rest + 1, &rest, 0);
  if (*rest != ':' || bytes < 4 || (bytes & (bytes - 1)) != 0) return false;
  lines = strtol(rest + 1, &rest, 0);
  if (*rest != ':') return false;
  data = strtol(rest + 1, &rest, 0);
  if (*rest != '\0') return false;
  struct accelerator *a = calloc(1, sizeof *a);
  if (a == NULL || !lru_init(&a->code, lines) || !lru_init(&a->data, data)) return false;
  while ((1L << a->shift) < bytes) a->shift++;
  accel[index] = a;
  accelerated = true;
  return true;
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
                                                               char **argv) {
  (void)info;
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i];
    if (strncmp(arg, "begin=", 6) == 0) begin_at = strtoull(arg + 6, NULL, 0);
    else if (strncmp(arg, "end=", 4) == 0) end_at = strtoull(arg + 4, NULL, 0);
    else if (strncmp(arg, "out=", 4) == 0) snprintf(out_path, sizeof out_path, "%s", arg + 4);
    else if (strncmp(arg, "region=", 7) == 0 && regions < MAX_REGIONS) {
      char *rest;
      region_lo[regions] = strtoull(arg + 7, &rest, 0);
      region_hi[regions] = *rest == ':' ? strtoull(rest + 1, NULL, 0) : 0;
      regions++;
    } else if (strncmp(arg, "mark=", 5) == 0) {
      char *rest;
      mark_lo = strtoull(arg + 5, &rest, 0);
      mark_hi = *rest == ':' ? strtoull(rest + 1, NULL, 0) : 0;
    } else if (strncmp(arg, "cache=", 6) == 0) {
      if (!add_accelerator(arg + 6)) {
        fprintf(stderr, "cmx_cycles: cache=<region>:<line bytes, a power of two>:<lines>:<data lines>, not %s\n", arg);
        return -1;
      }
    } else {
      fprintf(stderr, "cmx_cycles: unknown argument %s\n", arg);
      return -1;
    }
  }
  if (!out_path[0] || !begin_at || !end_at) {
    fprintf(stderr, "cmx_cycles: needs begin=, end= and out=\n");
    return -1;
  }
  qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
  qemu_plugin_register_atexit_cb(id, report, NULL);
  return 0;
}
