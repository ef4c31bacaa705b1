/* A client that includes only <minimalloc.h> and uses the fixed
 * signatures: it must build with -std=c99 -Wall -Werror and -lminimalloc. */
#include <minimalloc.h>

int main(void) {
  size_t index, n;
  int64_t offsets[2];
  minimalloc_solution *solution = NULL;
  minimalloc_status status;
  minimalloc_problem *problem = minimalloc_problem_new(8);
  if (problem == NULL) return 1;
  if (minimalloc_problem_add_buffer(problem, 0, 4, 4, 1, &index) != MINIMALLOC_STATUS_OK) return 2;
  if (minimalloc_problem_add_buffer(problem, 2, 6, 4, 4, &index) != MINIMALLOC_STATUS_OK) return 3;
  status = minimalloc_solve(problem, 0, &solution);
  if (status != MINIMALLOC_STATUS_OK) return 4;
  n = minimalloc_solution_len(solution);
  if (n != 2 || minimalloc_solution_offsets(solution, offsets, n) != MINIMALLOC_STATUS_OK) return 5;
  if (offsets[0] == offsets[1] || minimalloc_solution_height(solution) != 8) return 6;
  if (minimalloc_status_str(status)[0] == '\0' || minimalloc_version()[0] == '\0') return 7;
  minimalloc_solution_free(solution);
  minimalloc_problem_free(problem);
  return 0;
}
