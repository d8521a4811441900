/* A test case read from a file by the kernels' host harnesses (own_host.c, gru_host.c,
 * numbers_host.c): int32 words and blocks of bytes; a short read is a malformed case (exit 3). */
#ifndef CMX_CASE_IO_H
#define CMX_CASE_IO_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The next word into *v; 0 at the end of the file (a harness that reads cases until then). */
static inline int case_more(FILE* f, int32_t* v) { return fread(v, 4, 1, f) == 1; }

static inline int32_t case_word(FILE* f) {
  int32_t v = 0;
  if (!case_more(f, &v)) exit(3);
  return v;
}

/* n bytes, malloc'd (at least one, so n = 0 is a valid pointer). */
static inline void* case_block(FILE* f, size_t n) {
  void* p = malloc(n ? n : 1);
  if (fread(p, 1, n, f) != n) exit(3);
  return p;
}

#endif
