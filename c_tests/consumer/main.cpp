// Plans a small graph's buffers through the installed C API.
#include <minimalloc.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

struct Free {
  void operator()(minimalloc_problem *p) const { minimalloc_problem_free(p); }
  void operator()(minimalloc_solution *s) const { minimalloc_solution_free(s); }
};

int main() {
  std::unique_ptr<minimalloc_problem, Free> problem(minimalloc_problem_new(64));
  const std::vector<std::int64_t> lower = {0, 1, 2, 3}, upper = {2, 3, 4, 5}, size = {32, 32, 32, 32};
  std::size_t first = 0;
  if (minimalloc_problem_add_buffers(problem.get(), lower.data(), upper.data(), size.data(), nullptr,
                                     lower.size(), &first) != MINIMALLOC_STATUS_OK) {
    std::fprintf(stderr, "%s\n", minimalloc_problem_last_error(problem.get()));
    return 1;
  }
  minimalloc_solution *raw = nullptr;
  minimalloc_status status = minimalloc_solve(problem.get(), 1000, &raw);
  std::unique_ptr<minimalloc_solution, Free> solution(raw);
  if (status != MINIMALLOC_STATUS_OK) {
    std::fprintf(stderr, "%s\n", minimalloc_status_str(status));
    return 1;
  }
  std::vector<std::int64_t> offsets(minimalloc_solution_len(solution.get()));
  minimalloc_solution_offsets(solution.get(), offsets.data(), offsets.size());
  for (std::size_t i = 0; i + 1 < offsets.size(); i++) {
    if (offsets[i] == offsets[i + 1]) return 2;  // neighbours are alive together
  }
  std::printf("consumer: height %lld with minimalloc %s\n",
              static_cast<long long>(minimalloc_solution_height(solution.get())), minimalloc_version());
  return 0;
}
