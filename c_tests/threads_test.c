/* Eight threads solve eight problems at once, and each result is checked
 * and compared with a solve of the same problem on one thread (results
 * are deterministic); then a long solve is cancelled from another thread.
 * Usage: threads_test <CSV whose search runs long at its capacity> <capacity> */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

static minimalloc_status solve(job *j, int64_t *offsets) {
  size_t i, index;
  minimalloc_solution *s = NULL;
  minimalloc_status status;
  minimalloc_problem *p = minimalloc_problem_new(j->capacity);
  assert(p != NULL);
  for (i = 0; i < BUFFERS; i++) {
    assert(minimalloc_problem_add_buffer(p, j->buffers[i].lower, j->buffers[i].upper,
                                         j->buffers[i].size, 16, &index) == MINIMALLOC_STATUS_OK);
  }
  status = minimalloc_solve(p, 0, &s);
  if (status == MINIMALLOC_STATUS_OK) {
    assert(minimalloc_solution_offsets(s, offsets, BUFFERS) == MINIMALLOC_STATUS_OK);
    minimalloc_solution_free(s);
  }
  minimalloc_problem_free(p);
  return status;
}

static void *run(void *arg) {
  job *j = (job *)arg;
  j->status = solve(j, j->offsets);
  return NULL;
}

typedef struct {
  const minimalloc_problem *problem;
  minimalloc_options *options;
  minimalloc_status status;
} long_solve;

static void *run_long(void *arg) {
  long_solve *l = (long_solve *)arg;
  minimalloc_solution *s = NULL;
  l->status = minimalloc_solve_with(l->problem, l->options, &s);
  minimalloc_solution_free(s);
  return NULL;
}

int main(int argc, char **argv) {
  static job jobs[THREADS];
  pthread_t threads[THREADS];
  int64_t again[BUFFERS];
  size_t i, k, n, index;
  test_buffer *b = NULL;
  minimalloc_problem *hard;
  minimalloc_options *options;
  long_solve l;
  pthread_t solver;
  struct timespec pause = {0, 100 * 1000 * 1000};

  assert(argc == 3);
  for (k = 0; k < THREADS; k++) {
    jobs[k].seed = 1000u + (unsigned)k;
    make(&jobs[k]);
    assert(pthread_create(&threads[k], NULL, run, &jobs[k]) == 0);
  }
  for (k = 0; k < THREADS; k++) {
    assert(pthread_join(threads[k], NULL) == 0);
    assert(jobs[k].status == MINIMALLOC_STATUS_OK);
    assert(placement_is_valid(jobs[k].buffers, jobs[k].offsets, BUFFERS, jobs[k].capacity));
    for (i = 0; i < BUFFERS; i++) assert(jobs[k].offsets[i] % 16 == 0);
    assert(solve(&jobs[k], again) == MINIMALLOC_STATUS_OK);
    for (i = 0; i < BUFFERS; i++) assert(again[i] == jobs[k].offsets[i]);
  }

  /* One long solve, cancelled from this thread while it runs. */
  n = read_csv(argv[1], &b);
  assert(n > 0);
  hard = minimalloc_problem_new(strtoll(argv[2], NULL, 10));
  for (i = 0; i < n; i++) {
    assert(minimalloc_problem_add_buffer(hard, b[i].lower, b[i].upper, b[i].size, 1, &index) ==
           MINIMALLOC_STATUS_OK);
  }
  free(b);
  options = minimalloc_options_new();
  l.problem = hard;
  l.options = options;
  l.status = MINIMALLOC_STATUS_INTERNAL;
  assert(pthread_create(&solver, NULL, run_long, &l) == 0);
  nanosleep(&pause, NULL);
  assert(minimalloc_options_cancel(options) == MINIMALLOC_STATUS_OK);
  assert(pthread_join(solver, NULL) == 0);
  assert(l.status == MINIMALLOC_STATUS_CANCELLED);
  assert(minimalloc_options_nodes(options) > 0);
  minimalloc_options_free(options);
  minimalloc_problem_free(hard);
  printf("threads_test: ok\n");
  return 0;
}
