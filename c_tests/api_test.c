/* Every function of the C API and every error path. Built with
 * -std=c99 -Wall -Wextra -Werror -pedantic, asserts on, also under
 * AddressSanitizer (which also reports leaks).
 * Usage: api_test <path of a CSV whose search runs long at its capacity> <capacity> <full|tiny>
 * (the tiny build has the exact search only: minimising and the heuristics
 * must be refused there as unsupported). */
#undef NDEBUG
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <minimalloc.h>

#include "check.h"

static int has(const char *text, const char *part) {
  return text != NULL && strstr(text, part) != NULL;
}

/* The paper's running example: fits 12, not 11. */
static const test_buffer paper[5] = {{0, 3, 4}, {3, 9, 4}, {0, 9, 4}, {9, 21, 4}, {0, 21, 4}};

static minimalloc_problem *paper_problem(int64_t capacity) {
  size_t i, index = 99;
  minimalloc_problem *p = minimalloc_problem_new(capacity);
  assert(p != NULL);
  for (i = 0; i < 5; i++) {
    assert(minimalloc_problem_add_buffer(p, paper[i].lower, paper[i].upper, paper[i].size, 1,
                                         &index) == MINIMALLOC_STATUS_OK);
    assert(index == i);
  }
  return p;
}

static void test_names(void) {
  int s;
  assert(strcmp(minimalloc_version(), MINIMALLOC_VERSION) == 0);
  assert(MINIMALLOC_ABI_VERSION >= 2);
  assert(strcmp(minimalloc_status_str(MINIMALLOC_STATUS_OK), "ok") == 0);
  for (s = MINIMALLOC_STATUS_OK; s <= MINIMALLOC_STATUS_UNSUPPORTED; s++) {
    const char *name = minimalloc_status_str((minimalloc_status)s);
    assert(name != NULL && name[0] != '\0' && strcmp(name, "unknown status") != 0);
  }
  assert(strcmp(minimalloc_status_str((minimalloc_status)42), "unknown status") == 0);
  assert(strcmp(minimalloc_status_str((minimalloc_status)-1), "unknown status") == 0);
}

static void test_null_and_free(void) {
  size_t index;
  int64_t offsets[1];
  minimalloc_solution *s = NULL;
  assert(minimalloc_problem_new(0) == NULL);
  assert(minimalloc_problem_new(-7) == NULL);
  minimalloc_problem_free(NULL);
  minimalloc_solution_free(NULL);
  minimalloc_options_free(NULL);
  assert(minimalloc_problem_add_buffer(NULL, 0, 1, 1, 1, &index) == MINIMALLOC_STATUS_NULL_POINTER);
  assert(minimalloc_problem_add_buffers(NULL, NULL, NULL, NULL, NULL, 0, &index) ==
         MINIMALLOC_STATUS_NULL_POINTER);
  assert(minimalloc_problem_add_gap(NULL, 0, 1, 2) == MINIMALLOC_STATUS_NULL_POINTER);
  assert(minimalloc_problem_add_gap_window(NULL, 0, 1, 2, 0, 1) == MINIMALLOC_STATUS_NULL_POINTER);
  assert(minimalloc_problem_set_offset(NULL, 0, 0) == MINIMALLOC_STATUS_NULL_POINTER);
  assert(minimalloc_problem_set_hint(NULL, 0, 0) == MINIMALLOC_STATUS_NULL_POINTER);
  assert(minimalloc_problem_len(NULL) == 0);
  assert(minimalloc_problem_last_error(NULL) == NULL);
  assert(minimalloc_solve(NULL, 0, &s) == MINIMALLOC_STATUS_NULL_POINTER);
  assert(minimalloc_solve_with(NULL, NULL, &s) == MINIMALLOC_STATUS_NULL_POINTER);
  assert(s == NULL);
  assert(minimalloc_solution_len(NULL) == 0);
  assert(minimalloc_solution_height(NULL) == -1);
  assert(minimalloc_solution_offsets(NULL, offsets, 1) == MINIMALLOC_STATUS_NULL_POINTER);
  assert(minimalloc_solution_status(NULL) == MINIMALLOC_STATUS_NULL_POINTER);
  assert(minimalloc_solution_stopped(NULL) == MINIMALLOC_STATUS_NULL_POINTER);
  assert(strcmp(minimalloc_solution_error(NULL), "null pointer") == 0);
  assert(minimalloc_solution_lower_bound(NULL) == -1);
  assert(minimalloc_solution_optimal(NULL) == 0);
  assert(minimalloc_solution_nodes(NULL) == 0);
  assert(minimalloc_solution_elapsed_us(NULL) == 0);
  minimalloc_cancel_free(NULL);
  assert(minimalloc_cancel_request(NULL) == MINIMALLOC_STATUS_NULL_POINTER);
  assert(minimalloc_cancel_reset(NULL) == MINIMALLOC_STATUS_NULL_POINTER);
  assert(minimalloc_cancel_requested(NULL) == 0);
  assert(minimalloc_options_set_cancel(NULL, NULL) == MINIMALLOC_STATUS_NULL_POINTER);
  assert(minimalloc_options_set_timeout_ms(NULL, 5) == MINIMALLOC_STATUS_NULL_POINTER);
  assert(minimalloc_options_set_node_limit(NULL, 5) == MINIMALLOC_STATUS_NULL_POINTER);
  assert(minimalloc_options_last_error(NULL) == NULL);
  assert(minimalloc_options_set_objective(NULL, MINIMALLOC_OBJECTIVE_FIT) ==
         MINIMALLOC_STATUS_NULL_POINTER);
  assert(minimalloc_options_set_strategy(NULL, MINIMALLOC_STRATEGY_AUTO) ==
         MINIMALLOC_STATUS_NULL_POINTER);
  assert(minimalloc_options_set_seed(NULL, 1) == MINIMALLOC_STATUS_NULL_POINTER);
  assert(minimalloc_options_set_threads(NULL, 1) == MINIMALLOC_STATUS_NULL_POINTER);
  assert(minimalloc_options_set_restarts(NULL, 1) == MINIMALLOC_STATUS_NULL_POINTER);
  assert(minimalloc_options_set_base(NULL, 0) == MINIMALLOC_STATUS_NULL_POINTER);
  assert(minimalloc_problem_set_lifetime(NULL, MINIMALLOC_LIFETIME_INCLUSIVE) ==
         MINIMALLOC_STATUS_NULL_POINTER);
}

static void test_bad_buffers(void) {
  size_t index = 77;
  minimalloc_problem *p = paper_problem(12);
  const char *why;
  assert(strcmp(minimalloc_problem_last_error(p), "") == 0);
  assert(minimalloc_problem_add_buffer(p, 0, 1, 1, 1, NULL) == MINIMALLOC_STATUS_NULL_POINTER);
  assert(minimalloc_problem_add_buffer(p, 0, 5, 0, 1, &index) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  why = minimalloc_problem_last_error(p);
  assert(has(why, "buffer 5") && has(why, "size must be positive, got 0"));
  assert(index == 77); /* out-parameters are written only on success */
  assert(minimalloc_problem_add_buffer(p, 5, 5, 4, 1, &index) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(has(minimalloc_problem_last_error(p), "upper lifetime [5, 5) is empty"));
  assert(minimalloc_problem_add_buffer(p, 7, 3, 4, 1, &index) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(minimalloc_problem_add_buffer(p, -1, 3, 4, 1, &index) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(has(minimalloc_problem_last_error(p), "lower must not be negative, got -1"));
  assert(minimalloc_problem_add_buffer(p, 0, 3, 4, 0, &index) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(has(minimalloc_problem_last_error(p), "alignment must be positive, got 0"));
  assert(minimalloc_problem_add_buffer(p, 0, 3, 4, -8, &index) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  /* Gaps, offsets and hints on an index that does not exist. */
  assert(minimalloc_problem_add_gap(p, 5, 1, 2) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(has(minimalloc_problem_last_error(p), "buffer 5 does not exist (the problem has 5 buffers)"));
  assert(minimalloc_problem_add_gap_window(p, 99, 1, 2, 0, 1) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(minimalloc_problem_set_offset(p, 5, 0) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(minimalloc_problem_set_hint(p, (size_t)-1, 0) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  /* Offset + size past int64 and past the capacity; misaligned. */
  assert(minimalloc_problem_set_offset(p, 0, INT64_MAX - 1) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(has(minimalloc_problem_last_error(p), "overflows a 64-bit offset"));
  assert(minimalloc_problem_set_offset(p, 0, 10) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(has(minimalloc_problem_last_error(p), "offset 10 + size 4 exceeds the capacity 12"));
  assert(minimalloc_problem_set_hint(p, 0, 9) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  /* Gaps outside the lifetime or overlapping; windows outside the buffer. */
  assert(minimalloc_problem_add_gap(p, 2, 5, 12) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(has(minimalloc_problem_last_error(p), "outside the lifetime"));
  assert(minimalloc_problem_add_gap(p, 2, 2, 5) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_problem_add_gap(p, 2, 4, 6) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(has(minimalloc_problem_last_error(p), "overlaps"));
  assert(minimalloc_problem_add_gap_window(p, 2, 6, 7, 3, 9) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(has(minimalloc_problem_last_error(p), "window [3, 9)"));
  /* Nothing of the failures stuck. */
  assert(minimalloc_problem_len(p) == 5);
  minimalloc_problem_free(p);
}

static void test_solve_paper(void) {
  int64_t offsets[6] = {-9, -9, -9, -9, -9, 12345};
  int64_t few[4] = {-1, -1, -1, -1};
  size_t i;
  minimalloc_problem *p = paper_problem(12);
  minimalloc_solution *s = NULL;
  assert(minimalloc_solve(p, 0, NULL) == MINIMALLOC_STATUS_NULL_POINTER);
  assert(minimalloc_solve(p, 0, &s) == MINIMALLOC_STATUS_OK);
  assert(s != NULL);
  assert(minimalloc_solution_status(s) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solution_stopped(s) == MINIMALLOC_STATUS_OK);
  assert(strcmp(minimalloc_solution_error(s), "") == 0);
  assert(minimalloc_solution_len(s) == 5);
  assert(minimalloc_solution_height(s) == 12);
  assert(minimalloc_solution_lower_bound(s) == 12 && minimalloc_solution_optimal(s) == 1);
  assert(minimalloc_solution_offsets(s, NULL, 5) == MINIMALLOC_STATUS_NULL_POINTER);
  assert(minimalloc_solution_offsets(s, few, 4) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  for (i = 0; i < 4; i++) assert(few[i] == -1);
  assert(minimalloc_solution_offsets(s, offsets, 6) == MINIMALLOC_STATUS_OK);
  assert(offsets[5] == 12345); /* only len(solution) written */
  assert(placement_is_valid(paper, offsets, 5, 12));
  minimalloc_solution_free(s);
  minimalloc_problem_free(p);

  /* Capacity 11: proven infeasible; the solution says so and holds no
   * offsets. */
  p = paper_problem(11);
  s = NULL;
  assert(minimalloc_solve(p, 0, &s) == MINIMALLOC_STATUS_INFEASIBLE);
  assert(s != NULL && minimalloc_solution_status(s) == MINIMALLOC_STATUS_INFEASIBLE);
  assert(has(minimalloc_solution_error(s), "no placement fits capacity 11"));
  assert(minimalloc_solution_len(s) == 0 && minimalloc_solution_height(s) == -1);
  assert(minimalloc_solution_lower_bound(s) >= 12 && minimalloc_solution_optimal(s) == 0);
  offsets[0] = -9;
  assert(minimalloc_solution_offsets(s, offsets, 6) == MINIMALLOC_STATUS_INFEASIBLE);
  assert(offsets[0] == -9);
  minimalloc_solution_free(s);
  minimalloc_problem_free(p);
}

static void test_empty_and_batch(void) {
  const int64_t lower[4] = {0, 2, 4, 6}, upper[4] = {3, 5, 7, 9}, size[4] = {8, 8, 8, 8};
  const int64_t bad_size[4] = {8, 8, -1, 8}, align[4] = {1, 8, 8, 4};
  int64_t offsets[4];
  test_buffer b[4];
  size_t first = 99, i;
  minimalloc_problem *p = minimalloc_problem_new(16);
  minimalloc_solution *s = NULL;
  /* An empty problem solves with height 0. */
  assert(minimalloc_solve(p, 0, &s) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solution_len(s) == 0 && minimalloc_solution_height(s) == 0);
  assert(minimalloc_solution_offsets(s, NULL, 0) == MINIMALLOC_STATUS_OK);
  minimalloc_solution_free(s);
  /* Batches are all or nothing. */
  assert(minimalloc_problem_add_buffers(p, lower, upper, size, NULL, 0, NULL) ==
         MINIMALLOC_STATUS_NULL_POINTER);
  assert(minimalloc_problem_add_buffers(p, lower, NULL, size, NULL, 4, &first) ==
         MINIMALLOC_STATUS_NULL_POINTER);
  assert(minimalloc_problem_add_buffers(p, lower, upper, bad_size, NULL, 4, &first) ==
         MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(has(minimalloc_problem_last_error(p), "buffer 2"));
  assert(minimalloc_problem_len(p) == 0 && first == 99);
  assert(minimalloc_problem_add_buffers(p, NULL, NULL, NULL, NULL, 0, &first) == MINIMALLOC_STATUS_OK);
  assert(first == 0);
  assert(minimalloc_problem_add_buffers(p, lower, upper, size, align, 4, &first) == MINIMALLOC_STATUS_OK);
  assert(first == 0 && minimalloc_problem_len(p) == 4);
  s = NULL;
  assert(minimalloc_solve(p, 0, &s) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solution_offsets(s, offsets, 4) == MINIMALLOC_STATUS_OK);
  for (i = 0; i < 4; i++) {
    b[i].lower = lower[i];
    b[i].upper = upper[i];
    b[i].size = size[i];
    assert(offsets[i] % align[i] == 0);
  }
  assert(placement_is_valid(b, offsets, 4, 16));
  minimalloc_solution_free(s);
  minimalloc_problem_free(p);
}

static void test_gaps_fixed_hints(void) {
  /* Two long buffers of 8 at capacity 16 leave no room for a third... */
  int64_t offsets[3];
  size_t i;
  minimalloc_problem *p = minimalloc_problem_new(16);
  minimalloc_solution *s = NULL;
  assert(minimalloc_problem_add_buffer(p, 0, 10, 8, 1, &i) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_problem_add_buffer(p, 0, 10, 8, 1, &i) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_problem_add_buffer(p, 4, 6, 8, 1, &i) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solve(p, 0, &s) == MINIMALLOC_STATUS_INFEASIBLE);
  minimalloc_solution_free(s);
  /* ...unless one of them is dead during [3, 7), ... */
  assert(minimalloc_problem_add_gap(p, 1, 3, 7) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_problem_set_offset(p, 0, 8) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solve(p, 0, &s) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solution_offsets(s, offsets, 3) == MINIMALLOC_STATUS_OK);
  assert(offsets[0] == 8); /* fixed */
  assert(offsets[1] == 0 && offsets[2] == 0);
  minimalloc_solution_free(s);
  /* ...or keeps only a window of itself that leaves room. */
  assert(minimalloc_problem_set_offset(p, 0, -1) == MINIMALLOC_STATUS_OK); /* released */
  assert(minimalloc_problem_add_gap_window(p, 0, 2, 8, 0, 4) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_problem_set_hint(p, 2, 8) == MINIMALLOC_STATUS_OK);
  s = NULL;
  assert(minimalloc_solve(p, 0, &s) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solution_height(s) <= 16);
  minimalloc_solution_free(s);
  minimalloc_problem_free(p);
}

static minimalloc_problem *problem_from_csv(const char *path, int64_t capacity) {
  test_buffer *b = NULL;
  size_t n = read_csv(path, &b), i, index;
  minimalloc_problem *p = minimalloc_problem_new(capacity);
  assert(n > 0 && p != NULL);
  for (i = 0; i < n; i++) {
    assert(minimalloc_problem_add_buffer(p, b[i].lower, b[i].upper, b[i].size, 1, &index) ==
           MINIMALLOC_STATUS_OK);
  }
  free(b);
  return p;
}

static void test_options(const char *long_csv, int64_t long_capacity) {
  minimalloc_problem *p = paper_problem(12), *hard = problem_from_csv(long_csv, long_capacity);
  minimalloc_options *o = minimalloc_options_new();
  minimalloc_solution *s = NULL;
  assert(o != NULL);
  assert(minimalloc_solve_with(p, NULL, &s) == MINIMALLOC_STATUS_NULL_POINTER);
  assert(minimalloc_solve_with(p, o, NULL) == MINIMALLOC_STATUS_NULL_POINTER);
  assert(minimalloc_solve_with(p, o, &s) == MINIMALLOC_STATUS_OK);
  assert(strcmp(minimalloc_options_last_error(o), "") == 0);
  minimalloc_solution_free(s);
  s = NULL;
  /* A node limit ends a long search without a proof. */
  assert(minimalloc_options_set_node_limit(o, 200) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solve_with(hard, o, &s) == MINIMALLOC_STATUS_NOT_FOUND);
  assert(has(minimalloc_solution_error(s), "no placement found"));
  assert(minimalloc_solution_nodes(s) > 0 && minimalloc_solution_len(s) == 0);
  /* Options are input only: the failure is on the solution, not on them. */
  assert(strcmp(minimalloc_options_last_error(o), "") == 0);
  minimalloc_solution_free(s);
  assert(minimalloc_options_set_node_limit(o, 0) == MINIMALLOC_STATUS_OK);
  /* A timeout ends it too, and says so. */
  assert(minimalloc_options_set_timeout_ms(o, 50) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solve_with(hard, o, &s) == MINIMALLOC_STATUS_TIMEOUT);
  assert(has(minimalloc_solution_error(s), "timed out after"));
  assert(minimalloc_solution_stopped(s) == MINIMALLOC_STATUS_TIMEOUT);
  assert(minimalloc_solution_elapsed_us(s) >= 50000);
  minimalloc_solution_free(s);
  assert(minimalloc_solve(hard, 30, &s) == MINIMALLOC_STATUS_TIMEOUT);
  minimalloc_solution_free(s);
  /* A requested token stops every solve that carries it until it is
   * reset; options without it solve. */
  {
    minimalloc_cancel *c = minimalloc_cancel_new();
    assert(c != NULL && minimalloc_cancel_requested(c) == 0);
    assert(minimalloc_options_set_cancel(o, c) == MINIMALLOC_STATUS_OK);
    assert(minimalloc_cancel_request(c) == MINIMALLOC_STATUS_OK);
    assert(minimalloc_cancel_requested(c) == 1);
    assert(minimalloc_solve_with(p, o, &s) == MINIMALLOC_STATUS_CANCELLED);
    assert(minimalloc_solution_stopped(s) == MINIMALLOC_STATUS_CANCELLED);
    assert(minimalloc_solution_len(s) == 0);
    minimalloc_solution_free(s);
    assert(minimalloc_cancel_reset(c) == MINIMALLOC_STATUS_OK);
    assert(minimalloc_solve_with(p, o, &s) == MINIMALLOC_STATUS_OK);
    minimalloc_solution_free(s);
    /* The options keep their share: freed first, the token still works. */
    assert(minimalloc_cancel_request(c) == MINIMALLOC_STATUS_OK);
    minimalloc_cancel_free(c);
    assert(minimalloc_solve_with(p, o, &s) == MINIMALLOC_STATUS_CANCELLED);
    minimalloc_solution_free(s);
    assert(minimalloc_options_set_cancel(o, NULL) == MINIMALLOC_STATUS_OK);
    assert(minimalloc_solve_with(p, o, &s) == MINIMALLOC_STATUS_OK);
    minimalloc_solution_free(s);
  }
  /* Infeasibility is explained. */
  minimalloc_problem_free(p);
  p = paper_problem(11);
  s = NULL;
  assert(minimalloc_solve_with(p, o, &s) == MINIMALLOC_STATUS_INFEASIBLE);
  assert(has(minimalloc_solution_error(s), "no placement fits capacity 11"));
  assert(has(minimalloc_last_error(), "no placement fits capacity 11"));
  minimalloc_solution_free(s);
  minimalloc_options_free(o);
  minimalloc_problem_free(p);
  minimalloc_problem_free(hard);
}

/* Solves with `o` and checks the placement of the paper's example against
 * `capacity`; returns the height. */
static int64_t solve_paper_with(minimalloc_problem *p, minimalloc_options *o, int64_t capacity,
                                int64_t *offsets) {
  minimalloc_solution *s = NULL;
  int64_t height;
  assert(minimalloc_solve_with(p, o, &s) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solution_offsets(s, offsets, 5) == MINIMALLOC_STATUS_OK);
  assert(placement_is_valid(paper, offsets, 5, capacity));
  height = minimalloc_solution_height(s);
  minimalloc_solution_free(s);
  return height;
}

static void test_objective_and_strategies(const char *long_csv, int64_t long_capacity, int tiny) {
  int64_t offsets[5], again[5];
  int strategy, i;
  minimalloc_problem *p = paper_problem(100);
  minimalloc_options *o = minimalloc_options_new();
  minimalloc_solution *s = NULL;
  /* Values that name nothing are refused and change nothing. */
  assert(minimalloc_options_set_objective(o, (minimalloc_objective)7) ==
         MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(has(minimalloc_options_last_error(o), "unknown objective 7"));
  assert(minimalloc_options_set_strategy(o, (minimalloc_strategy)10) ==
         MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(has(minimalloc_options_last_error(o), "unknown strategy 10"));
  assert(minimalloc_options_set_strategy(o, (minimalloc_strategy)-1) ==
         MINIMALLOC_STATUS_INVALID_ARGUMENT);
  /* Fitting reports the max load as its lower bound. */
  assert(minimalloc_solve_with(p, o, &s) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solution_lower_bound(s) == 12);
  minimalloc_solution_free(s);
  /* The exact search alone is in every build. */
  assert(minimalloc_options_set_strategy(o, MINIMALLOC_STRATEGY_EXACT) == MINIMALLOC_STATUS_OK);
  assert(solve_paper_with(p, o, 100, offsets) <= 100);
  if (tiny) {
    assert(minimalloc_options_set_objective(o, MINIMALLOC_OBJECTIVE_MINIMIZE) ==
           MINIMALLOC_STATUS_UNSUPPORTED);
    assert(has(minimalloc_options_last_error(o), "not in this build"));
    assert(minimalloc_options_set_strategy(o, MINIMALLOC_STRATEGY_FIRST_FIT) ==
           MINIMALLOC_STATUS_UNSUPPORTED);
    assert(solve_paper_with(p, o, 100, offsets) <= 100); /* still fit, exact */
    minimalloc_options_free(o);
    minimalloc_problem_free(p);
    return;
  }
  /* Minimising under a loose capacity: the max load 12, proven. */
  assert(minimalloc_options_set_objective(o, MINIMALLOC_OBJECTIVE_MINIMIZE) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_options_set_strategy(o, MINIMALLOC_STRATEGY_AUTO) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solve_with(p, o, &s) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solution_height(s) == 12);
  assert(minimalloc_solution_lower_bound(s) == 12 && minimalloc_solution_optimal(s) == 1);
  minimalloc_solution_free(s);
  /* Each heuristic alone, with restarts on two threads: valid, and the
   * same offsets for the same seed on one thread. */
  for (strategy = MINIMALLOC_STRATEGY_SKYLINE; strategy <= MINIMALLOC_STRATEGY_COALESCING;
       strategy++) {
    assert(minimalloc_options_set_strategy(o, (minimalloc_strategy)strategy) ==
           MINIMALLOC_STATUS_OK);
    assert(minimalloc_options_set_seed(o, 3) == MINIMALLOC_STATUS_OK);
    assert(minimalloc_options_set_restarts(o, 9) == MINIMALLOC_STATUS_OK);
    assert(minimalloc_options_set_threads(o, 2) == MINIMALLOC_STATUS_OK);
    assert(solve_paper_with(p, o, 100, offsets) >= 12);
    assert(minimalloc_options_set_threads(o, 1) == MINIMALLOC_STATUS_OK);
    solve_paper_with(p, o, 100, again);
    for (i = 0; i < 5; i++) assert(offsets[i] == again[i]);
  }
  /* A large search cut short still answers, with an honest bound (the
   * capacity, twice the max load, only bounds it from above). */
  minimalloc_problem_free(p);
  p = problem_from_csv(long_csv, 2 * long_capacity);
  assert(minimalloc_options_set_strategy(o, MINIMALLOC_STRATEGY_AUTO) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_options_set_timeout_ms(o, 200) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solve_with(p, o, &s) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solution_height(s) <= 2 * long_capacity);
  assert(minimalloc_solution_lower_bound(s) >= long_capacity); /* the max load */
  assert(minimalloc_solution_height(s) >= minimalloc_solution_lower_bound(s));
  assert(minimalloc_solution_optimal(s) ==
         (minimalloc_solution_height(s) == minimalloc_solution_lower_bound(s)));
  minimalloc_solution_free(s);
  minimalloc_options_free(o);
  minimalloc_problem_free(p);
}

static void test_base_and_lifetimes(void) {
  int64_t offsets[5], shifted[5];
  size_t i, index = 77;
  test_buffer b[5];
  minimalloc_problem *p = paper_problem(12), *q;
  minimalloc_options *o = minimalloc_options_new();
  minimalloc_solution *s = NULL;
  /* A base address shifts every offset, not the height. */
  solve_paper_with(p, o, 12, offsets);
  assert(minimalloc_options_set_base(o, -8) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(has(minimalloc_options_last_error(o), "must not be negative"));
  assert(minimalloc_options_set_base(o, 4096) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solve_with(p, o, &s) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solution_height(s) == 12);
  assert(minimalloc_solution_offsets(s, shifted, 5) == MINIMALLOC_STATUS_OK);
  for (i = 0; i < 5; i++) assert(shifted[i] == offsets[i] + 4096);
  minimalloc_solution_free(s);
  /* A base that would misalign a buffer, or overflow, is refused. */
  assert(minimalloc_problem_add_buffer(p, 30, 31, 8, 64, &index) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_options_set_base(o, 4100) == MINIMALLOC_STATUS_OK);
  s = NULL;
  assert(minimalloc_solve_with(p, o, &s) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(has(minimalloc_solution_error(s), "alignment 64") && minimalloc_solution_len(s) == 0);
  minimalloc_solution_free(s);
  minimalloc_problem_free(p);
  p = paper_problem(12);
  assert(minimalloc_options_set_base(o, INT64_MAX - 12) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solve_with(p, o, &s) == MINIMALLOC_STATUS_OK); /* base + height fits */
  minimalloc_solution_free(s);
  s = NULL;
  assert(minimalloc_options_set_base(o, INT64_MAX - 11) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solve_with(p, o, &s) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(has(minimalloc_solution_error(s), "overflows") && minimalloc_solution_len(s) == 0);
  minimalloc_solution_free(s);
  minimalloc_problem_free(p);
  minimalloc_options_free(o);

  /* The paper's example written with inclusive ends, then with exclusive
   * starts, is the same problem. */
  for (i = 0; i < 5; i++) b[i] = paper[i];
  q = minimalloc_problem_new(12);
  assert(minimalloc_problem_set_lifetime(q, (minimalloc_lifetime)3) ==
         MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(has(minimalloc_problem_last_error(q), "unknown lifetime convention"));
  assert(minimalloc_problem_set_lifetime(q, MINIMALLOC_LIFETIME_INCLUSIVE) == MINIMALLOC_STATUS_OK);
  for (i = 0; i < 3; i++) {
    assert(minimalloc_problem_add_buffer(q, b[i].lower, b[i].upper - 1, b[i].size, 1, &index) ==
           MINIMALLOC_STATUS_OK);
  }
  assert(minimalloc_problem_set_lifetime(q, MINIMALLOC_LIFETIME_EXCLUSIVE) == MINIMALLOC_STATUS_OK);
  for (i = 3; i < 5; i++) {
    assert(minimalloc_problem_add_buffer(q, b[i].lower - 1, b[i].upper, b[i].size, 1, &index) ==
           MINIMALLOC_STATUS_OK);
  }
  s = NULL;
  assert(minimalloc_solve(q, 0, &s) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solution_offsets(s, offsets, 5) == MINIMALLOC_STATUS_OK);
  assert(placement_is_valid(paper, offsets, 5, 12));
  minimalloc_solution_free(s);
  /* An inclusive end at INT64_MAX has no half-open form; gaps convert too. */
  assert(minimalloc_problem_set_lifetime(q, MINIMALLOC_LIFETIME_INCLUSIVE) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_problem_add_buffer(q, 0, INT64_MAX, 4, 1, &index) ==
         MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(has(minimalloc_problem_last_error(q), "does not fit in 64 bits"));
  assert(minimalloc_problem_add_gap(q, 4, 5, INT64_MAX) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(has(minimalloc_problem_last_error(q), "buffer 4") &&
         has(minimalloc_problem_last_error(q), "gap 0"));
  /* Buffer 4 lives [0, 21): an inclusive gap [5, 20] is [5, 21). */
  assert(minimalloc_problem_add_gap(q, 4, 5, 20) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_problem_add_gap(q, 4, 2, 3) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_problem_add_gap(q, 4, 3, 4) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(has(minimalloc_problem_last_error(q), "overlaps"));
  assert(minimalloc_problem_len(q) == 5);
  minimalloc_problem_free(q);
}

/* The last errors: a handle's describes its most recent failing call and
 * a success clears it; the thread's covers calls with no handle. */
static void test_last_errors(void) {
  size_t index = 0;
  int64_t offsets[1];
  minimalloc_solution *s = NULL;
  minimalloc_options *o;
  minimalloc_problem *p;
  const char *why;
  assert(minimalloc_problem_new(0) == NULL);
  why = minimalloc_last_error();
  assert(has(why, "capacity must be positive, got 0"));
  p = paper_problem(11);
  assert(strcmp(minimalloc_last_error(), "") == 0);
  /* No id "" for buffers made through the C API, which have none. */
  assert(minimalloc_problem_add_buffer(p, 0, 5, 0, 1, &index) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  why = minimalloc_problem_last_error(p);
  assert(has(why, "buffer 5: size must be positive, got 0") && !has(why, "id"));
  assert(strcmp(minimalloc_last_error(), why) == 0);
  assert(minimalloc_problem_set_hint(p, 0, 4) == MINIMALLOC_STATUS_OK);
  assert(strcmp(minimalloc_problem_last_error(p), "") == 0);
  assert(strcmp(minimalloc_last_error(), "") == 0);
  /* A NULL pointer. */
  assert(minimalloc_problem_add_buffer(p, 0, 5, 4, 1, NULL) == MINIMALLOC_STATUS_NULL_POINTER);
  assert(strcmp(minimalloc_problem_last_error(p), "null pointer") == 0);
  assert(minimalloc_solve(NULL, 0, &s) == MINIMALLOC_STATUS_NULL_POINTER && s == NULL);
  assert(strcmp(minimalloc_last_error(), "null pointer") == 0);
  /* A failed solve: its solution says why, and so does the thread. */
  assert(minimalloc_solve(p, 0, &s) == MINIMALLOC_STATUS_INFEASIBLE && s != NULL);
  assert(has(minimalloc_last_error(), "no placement fits capacity 11"));
  assert(strcmp(minimalloc_solution_error(s), minimalloc_last_error()) == 0);
  minimalloc_solution_free(s);
  minimalloc_problem_free(p);
  p = paper_problem(12);
  assert(minimalloc_solve(p, 0, &s) == MINIMALLOC_STATUS_OK && s != NULL);
  assert(strcmp(minimalloc_last_error(), "") == 0);
  assert(minimalloc_solution_offsets(s, offsets, 1) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(strcmp(minimalloc_last_error(), "invalid argument") == 0);
  minimalloc_solution_free(s);
  /* Options: a refused value, then a success clears it. */
  o = minimalloc_options_new();
  assert(o != NULL);
  assert(minimalloc_options_set_objective(o, (minimalloc_objective)7) ==
         MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(has(minimalloc_options_last_error(o), "unknown objective 7"));
  assert(has(minimalloc_last_error(), "unknown objective 7"));
  assert(minimalloc_options_set_seed(o, 3) == MINIMALLOC_STATUS_OK);
  assert(strcmp(minimalloc_options_last_error(o), "") == 0);
  minimalloc_options_free(o);
  minimalloc_problem_free(p);
}

int main(int argc, char **argv) {
  int tiny;
  assert(argc == 4);
  tiny = strcmp(argv[3], "tiny") == 0;
  assert(tiny || strcmp(argv[3], "full") == 0);
  test_names();
  test_null_and_free();
  test_bad_buffers();
  test_solve_paper();
  test_empty_and_batch();
  test_gaps_fixed_hints();
  test_options(argv[1], strtoll(argv[2], NULL, 10));
  test_objective_and_strategies(argv[1], strtoll(argv[2], NULL, 10), tiny);
  test_base_and_lifetimes();
  test_last_errors();
  printf("api_test: ok\n");
  return 0;
}
