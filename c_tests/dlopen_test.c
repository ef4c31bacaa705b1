/* Loads the shared library at run time, as toolchains that dlopen it do,
 * and solves the paper's example through dlsym'd entry points.
 * Usage: dlopen_test <path of libminimalloc.so> */
#undef NDEBUG
#include <assert.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <minimalloc.h>

#include "check.h"

/* ISO C has no conversion between object and function pointers; POSIX
 * makes them the same size, so dlsym's result is copied bytewise. */
#define LOAD(lib, var, name)                 \
  do {                                       \
    void *symbol_ = dlsym(lib, #name);       \
    assert(symbol_ != NULL);                 \
    memcpy(&(var), &symbol_, sizeof(var));   \
  } while (0)

typedef const char *(*version_fn)(void);
typedef minimalloc_problem *(*problem_new_fn)(int64_t);
typedef minimalloc_status (*add_buffer_fn)(minimalloc_problem *, int64_t, int64_t, int64_t, int64_t,
                                           size_t *);
typedef minimalloc_status (*solve_fn)(const minimalloc_problem *, uint64_t, minimalloc_solution **);
typedef minimalloc_status (*offsets_fn)(const minimalloc_solution *, int64_t *, size_t);
typedef int64_t (*height_fn)(const minimalloc_solution *);
typedef void (*solution_free_fn)(minimalloc_solution *);
typedef void (*problem_free_fn)(minimalloc_problem *);

int main(int argc, char **argv) {
  static const test_buffer paper[5] = {{0, 3, 4}, {3, 9, 4}, {0, 9, 4}, {9, 21, 4}, {0, 21, 4}};
  version_fn version;
  problem_new_fn problem_new;
  add_buffer_fn add_buffer;
  solve_fn solve;
  offsets_fn offsets_of;
  height_fn height;
  solution_free_fn solution_free;
  problem_free_fn problem_free;
  int64_t offsets[5];
  size_t i, index;
  minimalloc_problem *p;
  minimalloc_solution *s = NULL;
  void *lib;

  assert(argc == 2);
  lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  LOAD(lib, version, minimalloc_version);
  LOAD(lib, problem_new, minimalloc_problem_new);
  LOAD(lib, add_buffer, minimalloc_problem_add_buffer);
  LOAD(lib, solve, minimalloc_solve);
  LOAD(lib, offsets_of, minimalloc_solution_offsets);
  LOAD(lib, height, minimalloc_solution_height);
  LOAD(lib, solution_free, minimalloc_solution_free);
  LOAD(lib, problem_free, minimalloc_problem_free);

  assert(strcmp(version(), MINIMALLOC_VERSION) == 0);
  p = problem_new(12);
  for (i = 0; i < 5; i++) {
    assert(add_buffer(p, paper[i].lower, paper[i].upper, paper[i].size, 1, &index) ==
           MINIMALLOC_STATUS_OK);
  }
  assert(solve(p, 0, &s) == MINIMALLOC_STATUS_OK);
  assert(height(s) == 12);
  assert(offsets_of(s, offsets, 5) == MINIMALLOC_STATUS_OK);
  assert(placement_is_valid(paper, offsets, 5, 12));
  solution_free(s);
  problem_free(p);
  assert(dlclose(lib) == 0);
  printf("dlopen_test: ok\n");
  return 0;
}
