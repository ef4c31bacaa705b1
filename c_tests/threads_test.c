/* Eight threads solve eight problems at once, and each result is checked
 * and compared with a solve of the same problem on one thread (results
 * are deterministic); then eight threads solve with one shared `const`
 * options handle, each reading its own figures from its own solution;
 * then a long solve is cancelled through its token from another thread
 * while a solve with the same options but no token is left alone.
 * Usage: threads_test <CSV whose search runs long at its capacity> <capacity> */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <minimalloc.h>

#include "check.h"

#define THREADS 8
#define BUFFERS 120

typedef struct {
  unsigned seed;
  test_buffer buffers[BUFFERS];
  int64_t capacity;
  int64_t offsets[BUFFERS];
  minimalloc_status status;
} job;

static unsigned next(unsigned *x) {
  *x = *x * 1103515245u + 12345u;
  return (*x >> 8) & 0xffffu;
}

/* Activations of a random network: short lifetimes, mixed sizes. */
static void make(job *j) {
  unsigned x = j->seed;
  size_t i;
  int64_t load = 0;
  for (i = 0; i < BUFFERS; i++) {
    int64_t lower = (int64_t)(next(&x) % 100);
    j->buffers[i].lower = lower;
    j->buffers[i].upper = lower + 1 + (int64_t)(next(&x) % 12);
    j->buffers[i].size = 16 * (1 + (int64_t)(next(&x) % 64));
    load += j->buffers[i].size;
  }
  j->capacity = load; /* generous: always feasible */
}

/* The max load of a job: the most bytes alive at one time. */
static int64_t max_load(const job *j) {
  int64_t t, best = 0;
  size_t i;
  for (t = 0; t < 120; t++) {
    int64_t load = 0;
    for (i = 0; i < BUFFERS; i++) {
      if (j->buffers[i].lower <= t && t < j->buffers[i].upper) load += j->buffers[i].size;
    }
    if (load > best) best = load;
  }
  return best;
}

static minimalloc_problem *problem_of(const job *j) {
  size_t i, index;
  minimalloc_problem *p = minimalloc_problem_new(j->capacity);
  assert(p != NULL);
  for (i = 0; i < BUFFERS; i++) {
    assert(minimalloc_problem_add_buffer(p, j->buffers[i].lower, j->buffers[i].upper,
                                         j->buffers[i].size, 16, &index) == MINIMALLOC_STATUS_OK);
  }
  return p;
}

/* Solves `j` (with `options`, or with minimalloc_solve for NULL); the
 * offsets go to `offsets`, the solution's figures are checked against
 * the job's own. */
static minimalloc_status solve(job *j, const minimalloc_options *options, int64_t *offsets) {
  minimalloc_solution *s = NULL;
  minimalloc_status status;
  minimalloc_problem *p = problem_of(j);
  status = options ? minimalloc_solve_with(p, options, &s) : minimalloc_solve(p, 0, &s);
  assert(s != NULL && minimalloc_solution_status(s) == status);
  if (status == MINIMALLOC_STATUS_OK) {
    assert(minimalloc_solution_offsets(s, offsets, BUFFERS) == MINIMALLOC_STATUS_OK);
    /* This job's bound, not another thread's. */
    assert(minimalloc_solution_lower_bound(s) >= max_load(j));
    assert(minimalloc_solution_height(s) >= minimalloc_solution_lower_bound(s));
    assert(minimalloc_solution_optimal(s) ==
           (minimalloc_solution_height(s) == minimalloc_solution_lower_bound(s)));
    assert(strcmp(minimalloc_solution_error(s), "") == 0);
  }
  minimalloc_solution_free(s);
  minimalloc_problem_free(p);
  return status;
}

static const minimalloc_options *shared_options = NULL;

static void *run(void *arg) {
  job *j = (job *)arg;
  j->status = solve(j, shared_options, j->offsets);
  return NULL;
}

/* Runs every job on a thread of its own, all at once, then checks each
 * against a solve of its own on this thread. */
static void run_all(job *jobs, const minimalloc_options *options) {
  pthread_t threads[THREADS];
  int64_t again[BUFFERS];
  size_t i, k;
  shared_options = options;
  for (k = 0; k < THREADS; k++) {
    assert(pthread_create(&threads[k], NULL, run, &jobs[k]) == 0);
  }
  for (k = 0; k < THREADS; k++) {
    assert(pthread_join(threads[k], NULL) == 0);
    assert(jobs[k].status == MINIMALLOC_STATUS_OK);
    assert(placement_is_valid(jobs[k].buffers, jobs[k].offsets, BUFFERS, jobs[k].capacity));
    for (i = 0; i < BUFFERS; i++) assert(jobs[k].offsets[i] % 16 == 0);
    assert(solve(&jobs[k], options, again) == MINIMALLOC_STATUS_OK);
    for (i = 0; i < BUFFERS; i++) assert(again[i] == jobs[k].offsets[i]);
  }
}

typedef struct {
  const minimalloc_problem *problem;
  const minimalloc_options *options;
  minimalloc_status status;
  uint64_t nodes;
} long_solve;

static void *run_long(void *arg) {
  long_solve *l = (long_solve *)arg;
  minimalloc_solution *s = NULL;
  l->status = minimalloc_solve_with(l->problem, l->options, &s);
  assert(minimalloc_solution_stopped(s) == MINIMALLOC_STATUS_CANCELLED);
  l->nodes = minimalloc_solution_nodes(s);
  minimalloc_solution_free(s);
  return NULL;
}

int main(int argc, char **argv) {
  static job jobs[THREADS];
  size_t i, k, n, index;
  test_buffer *b = NULL;
  minimalloc_problem *hard;
  minimalloc_options *options, *shared;
  minimalloc_cancel *token;
  long_solve l;
  pthread_t solver;
  struct timespec pause = {0, 100 * 1000 * 1000};
  int64_t offsets[BUFFERS];

  assert(argc == 3);
  for (k = 0; k < THREADS; k++) {
    jobs[k].seed = 1000u + (unsigned)k;
    make(&jobs[k]);
  }
  run_all(jobs, NULL);
  /* One options handle shared by every thread: minimising, a fixed number
   * of restarts (results that do not depend on timing). */
  shared = minimalloc_options_new();
  assert(minimalloc_options_set_objective(shared, MINIMALLOC_OBJECTIVE_MINIMIZE) ==
         MINIMALLOC_STATUS_OK);
  assert(minimalloc_options_set_restarts(shared, 4) == MINIMALLOC_STATUS_OK);
  run_all(jobs, shared);

  /* One long solve, cancelled through its token from this thread while
   * it runs; the same options without the token are not cancelled. */
  n = read_csv(argv[1], &b);
  assert(n > 0);
  hard = minimalloc_problem_new(strtoll(argv[2], NULL, 10));
  for (i = 0; i < n; i++) {
    assert(minimalloc_problem_add_buffer(hard, b[i].lower, b[i].upper, b[i].size, 1, &index) ==
           MINIMALLOC_STATUS_OK);
  }
  free(b);
  options = minimalloc_options_new();
  token = minimalloc_cancel_new();
  assert(minimalloc_options_set_cancel(options, token) == MINIMALLOC_STATUS_OK);
  l.problem = hard;
  l.options = options;
  l.status = MINIMALLOC_STATUS_INTERNAL;
  assert(pthread_create(&solver, NULL, run_long, &l) == 0);
  nanosleep(&pause, NULL);
  assert(minimalloc_cancel_request(token) == MINIMALLOC_STATUS_OK);
  assert(pthread_join(solver, NULL) == 0);
  assert(l.status == MINIMALLOC_STATUS_CANCELLED);
  assert(l.nodes > 0);
  assert(solve(&jobs[0], shared, offsets) == MINIMALLOC_STATUS_OK);
  minimalloc_cancel_free(token);
  minimalloc_options_free(options);
  minimalloc_options_free(shared);
  minimalloc_problem_free(hard);
  printf("threads_test: ok\n");
  return 0;
}
