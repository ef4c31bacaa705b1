/* The compiler model through the header alone: an XLA-style repacking
 * problem (colocated blocks of different sizes and lifetimes, a maximum
 * size, an alignment), a separation, why a capacity cannot be met, and a
 * progress callback that stops a long minimisation early.
 * Built with -std=c99 -Wall -Wextra -Werror -pedantic, asserts on.
 * Usage: model_test <CSV of a long minimisation> <full|tiny>
 * (the tiny build must refuse links and callbacks as unsupported). */
#undef NDEBUG
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <minimalloc.h>

#include "check.h"

/* A block of the repacker: lifetime [start, end), size, colocation ring. */
typedef struct {
  int64_t start, end, size;
  int ring;
} block;

/* Three rings (buffers aliased across while loops and in-place updates)
 * and loose blocks; ring -1 is none. */
static const block blocks[] = {
    {0, 10, 64, 0},  {10, 20, 32, 0}, {20, 30, 96, 0}, /* ring 0 grows and shrinks */
    {5, 15, 48, 1},  {15, 25, 40, 1},                  /* ring 1 */
    {0, 30, 32, -1}, {12, 18, 128, -1}, {26, 30, 16, -1},
    {2, 8, 24, 2},   {8, 12, 24, 2},  {12, 16, 8, 2},  /* ring 2 */
};
#define NBLOCKS (sizeof blocks / sizeof blocks[0])
#define ALIGNMENT 32
#define MAX_SIZE 512

/* Independent check: rings share one offset; blocks of different rings
 * (or loose ones) alive together do not share a byte; all aligned and
 * below the maximum size. */
static void check_repacking(const int64_t *offset, int64_t height) {
  size_t i, j;
  int64_t top = 0;
  for (i = 0; i < NBLOCKS; i++) {
    assert(offset[i] >= 0 && offset[i] % ALIGNMENT == 0);
    assert(offset[i] + blocks[i].size <= MAX_SIZE);
    if (offset[i] + blocks[i].size > top) top = offset[i] + blocks[i].size;
    for (j = i + 1; j < NBLOCKS; j++) {
      int same_ring = blocks[i].ring >= 0 && blocks[i].ring == blocks[j].ring;
      int together = blocks[i].start < blocks[j].end && blocks[j].start < blocks[i].end;
      int share = offset[i] < offset[j] + blocks[j].size && offset[j] < offset[i] + blocks[i].size;
      if (same_ring) {
        assert(offset[i] == offset[j]);
      } else {
        assert(!(together && share));
      }
    }
  }
  assert(top == height);
}

static void test_repacking(int tiny) {
  minimalloc_problem *p = minimalloc_problem_new(MAX_SIZE);
  minimalloc_options *o = minimalloc_options_new();
  minimalloc_solution *s = NULL;
  int64_t offset[NBLOCKS];
  size_t i, j, index, ring[NBLOCKS], n;
  assert(p != NULL && o != NULL);
  for (i = 0; i < NBLOCKS; i++) {
    assert(minimalloc_problem_add_buffer(p, blocks[i].start, blocks[i].end, blocks[i].size,
                                         ALIGNMENT, &index) == MINIMALLOC_STATUS_OK);
  }
  for (j = 0; j < 3; j++) {
    n = 0;
    for (i = 0; i < NBLOCKS; i++) {
      if (blocks[i].ring == (int)j) ring[n++] = i;
    }
    if (tiny) {
      assert(minimalloc_problem_colocate(p, ring, n) == MINIMALLOC_STATUS_UNSUPPORTED);
      minimalloc_options_free(o);
      minimalloc_problem_free(p);
      return;
    }
    assert(minimalloc_problem_colocate(p, ring, n) == MINIMALLOC_STATUS_OK);
  }
  /* The repacker fits below the maximum size, as low as it can. */
  assert(minimalloc_options_set_objective(o, MINIMALLOC_OBJECTIVE_MINIMIZE) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_options_set_timeout_ms(o, 2000) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solve_with(p, o, &s) == MINIMALLOC_STATUS_OK && s != NULL);
  assert(minimalloc_solution_len(s) == NBLOCKS);
  assert(minimalloc_solution_offsets(s, offset, NBLOCKS) == MINIMALLOC_STATUS_OK);
  check_repacking(offset, minimalloc_solution_height(s));
  assert(minimalloc_solution_lower_bound(s) <= minimalloc_solution_height(s));
  printf("model_test: repacked %u blocks in 3 rings to height %lld (lower bound %lld)\n",
         (unsigned)NBLOCKS, (long long)minimalloc_solution_height(s),
         (long long)minimalloc_solution_lower_bound(s));
  minimalloc_solution_free(s);
  /* Bad links change nothing and say why. */
  ring[0] = 0;
  ring[1] = 99;
  assert(minimalloc_problem_colocate(p, ring, 2) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(strstr(minimalloc_problem_last_error(p), "buffer 99 does not exist") != NULL);
  ring[1] = 1; /* blocks 0 and 1 are colocated */
  assert(minimalloc_problem_separate(p, ring, 2) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(strstr(minimalloc_problem_last_error(p), "both colocated and separated") != NULL);
  assert(minimalloc_problem_colocate(p, NULL, 2) == MINIMALLOC_STATUS_NULL_POINTER);
  assert(minimalloc_problem_colocate(NULL, ring, 2) == MINIMALLOC_STATUS_NULL_POINTER);
  /* A separation: block 7 may not share a byte with block 8 although
   * they are never alive together. */
  ring[0] = 7;
  ring[1] = 8;
  assert(minimalloc_problem_separate(p, ring, 2) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solve_with(p, o, &s) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solution_offsets(s, offset, NBLOCKS) == MINIMALLOC_STATUS_OK);
  check_repacking(offset, minimalloc_solution_height(s));
  assert(offset[7] + blocks[7].size <= offset[8] || offset[8] + blocks[8].size <= offset[7]);
  minimalloc_solution_free(s);
  minimalloc_options_free(o);
  minimalloc_problem_free(p);
}

/* The paper's example at capacity 11: b1, b3 and b5 (0, 2, 4) need 12
 * bytes at time 0. */
static void test_conflict(int tiny) {
  static const test_buffer paper[5] = {{0, 3, 4}, {3, 9, 4}, {0, 9, 4}, {9, 21, 4}, {0, 21, 4}};
  minimalloc_problem *p = minimalloc_problem_new(11);
  minimalloc_options *o = minimalloc_options_new();
  minimalloc_solution *s = NULL;
  size_t i, index, count = 99, conflict[8];
  int irreducible = -1;
  for (i = 0; i < 5; i++) {
    assert(minimalloc_problem_add_buffer(p, paper[i].lower, paper[i].upper, paper[i].size, 1,
                                         &index) == MINIMALLOC_STATUS_OK);
  }
  assert(minimalloc_solve_with(p, o, &s) == MINIMALLOC_STATUS_INFEASIBLE);
  if (tiny) {
    assert(minimalloc_solution_conflict(s, NULL, 0, &count, NULL) == MINIMALLOC_STATUS_UNSUPPORTED);
    minimalloc_solution_free(s);
    minimalloc_options_free(o);
    minimalloc_problem_free(p);
    return;
  }
  assert(minimalloc_solution_conflict(s, NULL, 0, &count, NULL) == MINIMALLOC_STATUS_OK);
  {
    assert(count == 3);
    assert(minimalloc_solution_conflict(s, conflict, 8, &count, &irreducible) ==
           MINIMALLOC_STATUS_OK);
    assert(conflict[0] == 0 && conflict[1] == 2 && conflict[2] == 4 && irreducible == 1);
  }
  assert(minimalloc_solution_conflict(s, NULL, 1, &count, NULL) == MINIMALLOC_STATUS_NULL_POINTER);
  assert(minimalloc_solution_conflict(NULL, NULL, 0, &count, NULL) == MINIMALLOC_STATUS_NULL_POINTER);
  minimalloc_solution_free(s);
  /* Solved: no conflict. */
  minimalloc_problem_free(p);
  p = minimalloc_problem_new(12);
  for (i = 0; i < 5; i++) {
    assert(minimalloc_problem_add_buffer(p, paper[i].lower, paper[i].upper, paper[i].size, 1,
                                         &index) == MINIMALLOC_STATUS_OK);
  }
  assert(minimalloc_solve_with(p, o, &s) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solution_conflict(s, NULL, 0, &count, NULL) == MINIMALLOC_STATUS_OK && count == 0);
  minimalloc_solution_free(s);
  minimalloc_options_free(o);
  minimalloc_problem_free(p);
}

/* What the callback saw, and when it stops the solve. */
typedef struct {
  int calls;
  int64_t last_height;
  int64_t lower_bound;
  uint64_t stop_after_us;
  uint64_t last_us;
} watch;

static int on_progress(void *user, int64_t height, int64_t lower_bound, uint64_t elapsed_us) {
  watch *w = (watch *)user;
  w->calls++;
  /* Heights only go down once there is one; time only goes forward. */
  if (height >= 0 && w->last_height >= 0) assert(height <= w->last_height);
  if (height >= 0) w->last_height = height;
  assert(elapsed_us >= w->last_us);
  w->last_us = elapsed_us;
  w->lower_bound = lower_bound;
  return elapsed_us >= w->stop_after_us; /* nonzero: stop */
}

static void test_progress(const char *long_csv, int tiny) {
  test_buffer *b = NULL;
  size_t n = read_csv(long_csv, &b), i, index;
  minimalloc_problem *p = minimalloc_problem_new(INT64_MAX);
  minimalloc_options *o = minimalloc_options_new();
  minimalloc_solution *s = NULL;
  watch w = {0, -1, 0, 300000, 0};
  assert(n > 0 && p != NULL && o != NULL);
  for (i = 0; i < n; i++) {
    assert(minimalloc_problem_add_buffer(p, b[i].lower, b[i].upper, b[i].size, 1, &index) ==
           MINIMALLOC_STATUS_OK);
  }
  if (tiny) {
    assert(minimalloc_options_set_progress(o, on_progress, &w) == MINIMALLOC_STATUS_UNSUPPORTED);
    free(b);
    minimalloc_options_free(o);
    minimalloc_problem_free(p);
    return;
  }
  /* A minimisation with a 60 s timeout, stopped by the callback at 0.3 s. */
  assert(minimalloc_options_set_objective(o, MINIMALLOC_OBJECTIVE_MINIMIZE) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_options_set_timeout_ms(o, 60000) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_options_set_progress(o, on_progress, &w) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solve_with(p, o, &s) == MINIMALLOC_STATUS_OK && s != NULL);
  assert(w.calls >= 3);
  assert(minimalloc_solution_elapsed_us(s) < 10000000); /* long before 60 s */
  assert(minimalloc_solution_stopped(s) == MINIMALLOC_STATUS_CANCELLED);
  assert(w.last_height == minimalloc_solution_height(s) || w.last_us >= w.stop_after_us);
  assert(w.lower_bound <= minimalloc_solution_height(s));
  {
    int64_t *offsets = (int64_t *)malloc(n * sizeof *offsets);
    int64_t top = minimalloc_solution_height(s);
    assert(offsets != NULL);
    assert(minimalloc_solution_offsets(s, offsets, n) == MINIMALLOC_STATUS_OK);
    assert(placement_is_valid(b, offsets, n, top));
    free(offsets);
  }
  printf("model_test: the callback stopped a minimisation after %d calls, %.3f s, height %lld\n",
         w.calls, minimalloc_solution_elapsed_us(s) / 1e6, (long long)minimalloc_solution_height(s));
  minimalloc_solution_free(s);
  /* The stop was for that solve only; without the callback the next runs. */
  assert(minimalloc_options_set_progress(o, NULL, NULL) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_options_set_timeout_ms(o, 200) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solve_with(p, o, &s) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solution_elapsed_us(s) >= 150000);
  assert(minimalloc_solution_stopped(s) == MINIMALLOC_STATUS_TIMEOUT);
  minimalloc_solution_free(s);
  assert(minimalloc_options_set_progress(NULL, on_progress, &w) == MINIMALLOC_STATUS_NULL_POINTER);
  free(b);
  minimalloc_options_free(o);
  minimalloc_problem_free(p);
}

/* Two pools: a small fast one every buffer prefers, a large one; the
 * 600-byte buffer cannot fit the first and spills, as does whatever the
 * first cannot hold at once. */
static void test_pools(int tiny) {
  static const test_buffer b[5] = {{0, 10, 600}, {0, 5, 200}, {5, 10, 200}, {0, 10, 300}, {2, 8, 100}};
  minimalloc_problem *p = minimalloc_problem_new(INT64_MAX);
  minimalloc_options *o = minimalloc_options_new();
  minimalloc_solution *s = NULL;
  size_t i, j, index, sram, dram, pool_of[5], count;
  int64_t address[5], height, bound;
  for (i = 0; i < 5; i++) {
    assert(minimalloc_problem_add_buffer(p, b[i].lower, b[i].upper, b[i].size, 1, &index) ==
           MINIMALLOC_STATUS_OK);
  }
  if (tiny) {
    assert(minimalloc_problem_add_pool(p, "sram", 512, 0, 64, &sram) == MINIMALLOC_STATUS_UNSUPPORTED);
    minimalloc_options_free(o);
    minimalloc_problem_free(p);
    return;
  }
  assert(minimalloc_problem_add_pool(p, "sram", 512, 0x1000, 64, &sram) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_problem_add_pool(p, "dram", 4096, 0x100000, 64, &dram) == MINIMALLOC_STATUS_OK);
  assert(sram == 0 && dram == 1);
  assert(minimalloc_problem_add_pool(p, "bad", 0, 0, 1, &index) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(strstr(minimalloc_problem_last_error(p), "capacity must be positive") != NULL);
  index = 7;
  assert(minimalloc_problem_set_pools(p, 0, &index, 1) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(strstr(minimalloc_problem_last_error(p), "pool 7 does not exist") != NULL);
  assert(minimalloc_solve_with(p, o, &s) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solution_offsets(s, address, 5) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solution_pools(s, pool_of, 5) == MINIMALLOC_STATUS_OK);
  assert(pool_of[0] == dram); /* 600 bytes never fit 512 */
  for (i = 0; i < 5; i++) {
    int64_t base = pool_of[i] == sram ? 0x1000 : 0x100000;
    int64_t cap = pool_of[i] == sram ? 512 : 4096;
    assert(address[i] >= base && (address[i] - base) % 64 == 0);
    assert(address[i] - base + b[i].size <= cap);
    for (j = i + 1; j < 5; j++) {
      int together = b[i].lower < b[j].upper && b[j].lower < b[i].upper;
      int share = address[i] < address[j] + b[j].size && address[j] < address[i] + b[i].size;
      assert(pool_of[i] != pool_of[j] || !(together && share));
    }
  }
  for (i = 0; i < 2; i++) {
    assert(minimalloc_solution_pool_report(s, i, &height, &bound, &count) == MINIMALLOC_STATUS_OK);
    assert(bound <= height && height <= (i == sram ? 512 : 4096));
    printf("model_test: pool %u holds %u buffers, height %lld, lower bound %lld\n", (unsigned)i,
           (unsigned)count, (long long)height, (long long)bound);
  }
  assert(minimalloc_solution_pool_report(s, 2, NULL, NULL, NULL) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  minimalloc_solution_free(s);
  /* Buffer 0 may only go to sram: nothing can take it. */
  index = sram;
  assert(minimalloc_problem_set_pools(p, 0, &index, 1) == MINIMALLOC_STATUS_OK);
  s = NULL;
  assert(minimalloc_solve_with(p, o, &s) == MINIMALLOC_STATUS_INFEASIBLE);
  assert(minimalloc_solution_pools(s, pool_of, 5) == MINIMALLOC_STATUS_INFEASIBLE);
  minimalloc_solution_free(s);
  minimalloc_options_free(o);
  minimalloc_problem_free(p);
}

/* Reuse penalties: a, b and c one after another, d alive beside b and c,
 * room for two side by side: b and c must share (they pay 1), a may go
 * above b (paying 5) or beside d (paying nothing). The objective pays 1,
 * proven; fitting alone reports what its placement pays, bound 0. Bad
 * penalties are refused and change nothing; the tiny build has none. */
static void test_penalties(int tiny) {
  static const test_buffer b[4] = {{0, 2, 64}, {2, 4, 64}, {4, 6, 64}, {2, 6, 64}};
  minimalloc_problem *p = minimalloc_problem_new(128);
  minimalloc_options *o = minimalloc_options_new();
  minimalloc_solution *s = NULL;
  size_t i, index;
  int64_t offset[4], cost = -1, least = -1;
  for (i = 0; i < 4; i++) {
    assert(minimalloc_problem_add_buffer(p, b[i].lower, b[i].upper, b[i].size, 1, &index) ==
           MINIMALLOC_STATUS_OK);
  }
  if (tiny) {
    assert(minimalloc_problem_penalize(p, 0, 1, 5) == MINIMALLOC_STATUS_UNSUPPORTED);
    assert(minimalloc_options_set_objective(o, MINIMALLOC_OBJECTIVE_PENALTY) ==
           MINIMALLOC_STATUS_UNSUPPORTED);
    minimalloc_options_free(o);
    minimalloc_problem_free(p);
    return;
  }
  assert(minimalloc_problem_penalize(p, 0, 1, 5) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_problem_penalize(p, 2, 1, 1) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_problem_penalize(p, 1, 1, 1) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(strstr(minimalloc_problem_last_error(p), "two different buffers") != NULL);
  assert(minimalloc_problem_penalize(p, 0, 1, -2) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(strstr(minimalloc_problem_last_error(p), "must not be negative") != NULL);
  assert(minimalloc_problem_penalize(p, 0, 4, 1) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(minimalloc_problem_penalize(p, 1, 2, INT64_MAX) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(strstr(minimalloc_problem_last_error(p), "past 2^63-1") != NULL);
  assert(minimalloc_problem_penalize(NULL, 0, 1, 1) == MINIMALLOC_STATUS_NULL_POINTER);
  assert(minimalloc_options_set_objective(o, MINIMALLOC_OBJECTIVE_PENALTY) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solve_with(p, o, &s) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solution_offsets(s, offset, 4) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solution_penalty(s, &cost, &least) == MINIMALLOC_STATUS_OK);
  assert(cost == 1 && least == 1 && offset[0] != offset[1] && offset[1] == offset[2]);
  assert(minimalloc_solution_optimal(s) == 1);
  assert(minimalloc_solution_penalty(s, NULL, &least) == MINIMALLOC_STATUS_NULL_POINTER);
  assert(minimalloc_solution_penalty(NULL, &cost, &least) == MINIMALLOC_STATUS_NULL_POINTER);
  minimalloc_solution_free(s);
  s = NULL;
  assert(minimalloc_options_set_objective(o, MINIMALLOC_OBJECTIVE_FIT) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solve_with(p, o, &s) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solution_offsets(s, offset, 4) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solution_penalty(s, &cost, &least) == MINIMALLOC_STATUS_OK);
  assert(least == 0);
  assert(cost == (offset[0] == offset[1] ? 5 : 0) + 1);
  minimalloc_solution_free(s);
  minimalloc_options_free(o);
  minimalloc_problem_free(p);
}

int main(int argc, char **argv) {
  int tiny;
  assert(argc == 3);
  tiny = strcmp(argv[2], "tiny") == 0;
  assert(tiny || strcmp(argv[2], "full") == 0);
  test_repacking(tiny);
  test_conflict(tiny);
  test_pools(tiny);
  test_penalties(tiny);
  test_progress(argv[1], tiny);
  printf("model_test: ok\n");
  return 0;
}
