/* Sizes, alignments, capacities and bases at the edge of int64_t through
 * the C API: what could overflow is refused with INVALID_ARGUMENT and a
 * message, changing nothing; what is accepted is placed validly. */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "minimalloc.h"

static void expect_refused(minimalloc_status st, const minimalloc_problem *p, const char *words) {
  assert(st == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(strstr(minimalloc_problem_last_error(p), words) != NULL);
}

int main(void) {
  const int64_t big = INT64_MAX;
  size_t at;
  minimalloc_problem *p = minimalloc_problem_new(big);
  minimalloc_options *o = minimalloc_options_new();
  minimalloc_solution *s = NULL;
  int64_t offset;
  assert(p && o);

  /* Two buffers of 2^63 - 1 bytes: the second is refused. */
  assert(minimalloc_problem_add_buffer(p, 0, 2, big, 1, &at) == MINIMALLOC_STATUS_OK);
  expect_refused(minimalloc_problem_add_buffer(p, 0, 2, big, 1, &at), p, "buffer 1");
  assert(minimalloc_problem_len(p) == 1);
  assert(minimalloc_options_set_objective(o, MINIMALLOC_OBJECTIVE_MINIMIZE) ==
         MINIMALLOC_STATUS_OK);
  assert(minimalloc_solve_with(p, o, &s) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solution_offsets(s, &offset, 1) == MINIMALLOC_STATUS_OK && offset == 0);
  assert(minimalloc_solution_height(s) == big);
  minimalloc_solution_free(s);
  s = NULL;

  /* A base whose sum with the height overflows is refused; one that just
   * fits gives the last address. */
  assert(minimalloc_options_set_base(o, big) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solve_with(p, o, &s) == MINIMALLOC_STATUS_INVALID_ARGUMENT);
  assert(strstr(minimalloc_solution_error(s), "overflows") != NULL);
  minimalloc_solution_free(s);
  s = NULL;
  minimalloc_problem_free(p);

  p = minimalloc_problem_new(big);
  assert(minimalloc_problem_add_buffer(p, 0, 1, 8, 1, &at) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_options_set_base(o, big - 8) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solve_with(p, o, &s) == MINIMALLOC_STATUS_OK);
  assert(minimalloc_solution_offsets(s, &offset, 1) == MINIMALLOC_STATUS_OK);
  assert(offset == big - 8);
  minimalloc_solution_free(s);
  s = NULL;

  /* Alignment padding counts: two buffers aligned to 2^62. */
  assert(minimalloc_problem_add_buffer(p, 0, 1, 8, (int64_t)1 << 62, &at) == MINIMALLOC_STATUS_OK);
  expect_refused(minimalloc_problem_add_buffer(p, 0, 1, 8, (int64_t)1 << 62, &at), p,
                 "alignment padding");
  assert(minimalloc_problem_len(p) == 2);
  minimalloc_problem_free(p);

  /* Three of 2^62 alive together: the second already passes the bound. */
  p = minimalloc_problem_new(big);
  assert(minimalloc_problem_add_buffer(p, 0, 2, (int64_t)1 << 62, 1, &at) ==
         MINIMALLOC_STATUS_OK);
  expect_refused(minimalloc_problem_add_buffer(p, 0, 2, (int64_t)1 << 62, 1, &at), p,
                 "2^63 - 1");
  minimalloc_problem_free(p);

  /* Negative and zero values are refused as such. */
  p = minimalloc_problem_new(big);
  expect_refused(minimalloc_problem_add_buffer(p, 0, 2, -1, 1, &at), p, "size");
  expect_refused(minimalloc_problem_add_buffer(p, 0, 2, 1, 0, &at), p, "alignment");
  expect_refused(minimalloc_problem_add_buffer(p, INT64_MIN, INT64_MAX, 1, 1, &at), p, "buffer 0");
  assert(minimalloc_problem_len(p) == 0);
  minimalloc_problem_free(p);
  assert(minimalloc_problem_new(0) == NULL && minimalloc_problem_new(INT64_MIN) == NULL);

  minimalloc_options_free(o);
  printf("extremes_test: ok\n");
  return 0;
}
