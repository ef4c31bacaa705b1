#!/usr/bin/env python3
"""Two families the planner's own generator (`minimalloc gen`) does not make,
written as CSV to check that a method is not shaped on that generator.

  lognormal    buffers issued in program order (0-2 steps apart); 3% live
               for 10-80% of the program, the rest a lognormal number of
               steps; sizes log-uniform 64 B-4 MiB, independent of lifetimes.
  light-long   the same order; 5% live for 5-50% of the program but are
               small (16 B-4 KiB), the rest live 1-30 steps and are large
               (64 KiB-16 MiB): no heavy long-lived layer.

Usage: scripts/probe-families.py FAMILY BUFFERS SEED > file.csv
"""

import math
import random
import sys


def lognormal(rng, n):
    t = 0
    for _ in range(n):
        t += rng.choice([0, 1, 1, 2])
        if rng.random() < 0.03:
            life = int(rng.uniform(0.1, 0.8) * n)
        else:
            life = max(1, int(rng.lognormvariate(1.5, 1.0)))
        size = int(math.exp(rng.uniform(math.log(64), math.log(4 << 20))))
        yield t, t + life, size


def light_long(rng, n):
    t = 0
    for _ in range(n):
        t += rng.choice([0, 1, 1, 2])
        if rng.random() < 0.05:
            life = int(rng.uniform(0.05, 0.5) * n)
            size = rng.randint(16, 4096)
        else:
            life = rng.randint(1, 30)
            size = int(math.exp(rng.uniform(math.log(1 << 16), math.log(16 << 20))))
        yield t, t + life, size


FAMILIES = {"lognormal": lognormal, "light-long": light_long}


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in FAMILIES:
        sys.exit(__doc__)
    family, n, seed = FAMILIES[sys.argv[1]], int(sys.argv[2]), int(sys.argv[3])
    out = sys.stdout
    out.write("id,lower,upper,size\n")
    for i, (lower, upper, size) in enumerate(family(random.Random(seed), n)):
        out.write(f"{i},{lower},{upper},{size}\n")


if __name__ == "__main__":
    main()
