// The header included twice in one translation unit and compiled as C++.
#include <minimalloc.h>
#include <minimalloc.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

int main() {
  minimalloc_problem *p = minimalloc_problem_new(12);
  std::size_t index = 0;
  const std::int64_t spans[5][3] = {{0, 3, 4}, {3, 9, 4}, {0, 9, 4}, {9, 21, 4}, {0, 21, 4}};
  for (const auto &b : spans) {
    if (minimalloc_problem_add_buffer(p, b[0], b[1], b[2], 1, &index) != MINIMALLOC_STATUS_OK) return 1;
  }
  minimalloc_solution *s = nullptr;
  minimalloc_status status = minimalloc_solve(p, 0, &s);
  if (status != MINIMALLOC_STATUS_OK || minimalloc_solution_height(s) != 12) {
    std::fprintf(stderr, "%s\n", minimalloc_status_str(status));
    return 1;
  }
  minimalloc_solution_free(s);
  minimalloc_problem_free(p);
  std::printf("double_include: ok (%s)\n", minimalloc_version());
  return std::strcmp(minimalloc_version(), MINIMALLOC_VERSION) == 0 ? 0 : 1;
}
