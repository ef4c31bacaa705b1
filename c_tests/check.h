/* Helpers shared by the C tests: an independent check that a placement
 * is valid, and a reader for the reference CSV (id,lower,upper,size). */
#ifndef MINIMALLOC_C_TESTS_CHECK_H
#define MINIMALLOC_C_TESTS_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int64_t lower, upper, size;
} test_buffer;

/* 1 if no two buffers alive at the same time share a byte and all fit
 * below capacity, else 0. Quadratic: for test sizes only. */
static inline int placement_is_valid(const test_buffer *b, const int64_t *offset, size_t n,
                              int64_t capacity) {
  size_t i, j;
  for (i = 0; i < n; i++) {
    if (offset[i] < 0 || offset[i] + b[i].size > capacity) return 0;
    for (j = i + 1; j < n; j++) {
      int live_together = b[i].lower < b[j].upper && b[j].lower < b[i].upper;
      int share_bytes = offset[i] < offset[j] + b[j].size && offset[j] < offset[i] + b[i].size;
      if (live_together && share_bytes) return 0;
    }
  }
  return 1;
}

/* Reads id,lower,upper,size rows (the header is skipped) into a new array;
 * returns the count, or 0 on error. */
static inline size_t read_csv(const char *path, test_buffer **out) {
  FILE *f = fopen(path, "r");
  char line[256];
  size_t n = 0, cap = 64;
  test_buffer *b = (test_buffer *)malloc(cap * sizeof *b);
  if (!f || !b) {
    if (f) fclose(f);
    free(b);
    return 0;
  }
  if (!fgets(line, sizeof line, f)) n = 0;
  while (fgets(line, sizeof line, f)) {
    long long id, lower, upper, size;
    if (sscanf(line, "%lld,%lld,%lld,%lld", &id, &lower, &upper, &size) != 4) continue;
    if (n == cap) {
      test_buffer *more = (test_buffer *)realloc(b, 2 * cap * sizeof *b);
      if (!more) break;
      b = more;
      cap *= 2;
    }
    b[n].lower = lower;
    b[n].upper = upper;
    b[n].size = size;
    n++;
  }
  fclose(f);
  *out = b;
  return n;
}

#endif
