/* Random programs of C-ABI calls (see abi_ops.c), for a run under ASan and
 * UBSan: `abi_random [programs] [seed]`. Prints how many it ran. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "abi_ops.h"

static uint64_t next(uint64_t *state) {
  uint64_t x = *state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *state = x;
}

int main(int argc, char **argv) {
  unsigned long programs = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;
  uint64_t state = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
  unsigned long i;
  uint8_t bytes[512];
  if (state == 0) state = 1;
  for (i = 0; i < programs; i++) {
    size_t n = (size_t)(next(&state) % sizeof bytes), k;
    for (k = 0; k < n; k++) bytes[k] = (uint8_t)next(&state);
    minimalloc_abi_drive(bytes, n);
  }
  {
    minimalloc_abi_counts c = minimalloc_abi_counted();
    printf("%lu random programs of C-ABI calls: %lu operations, %lu solves (%lu placed), "
           "%.1f buffers a problem on average\n",
           programs, c.calls, c.solves, c.solved, c.calls ? (double)c.buffers / c.calls : 0.0);
  }
  return 0;
}
