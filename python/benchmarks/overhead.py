"""How much of a plan() call is Python, and how much the C library.

For each size, builds a training-step-like instance with numpy (lifetimes
over 10,000 steps, sizes from 64 B to 8 MiB), calls minimalloc.plan() and
splits its wall time into the library's own solve time (Result.elapsed,
measured inside the C call) and the rest: Python's checks and conversion
of the arrays, the C calls that copy them in, the options, the thread
that keeps Ctrl-C responsive, and the copy of the offsets out.

    python python/benchmarks/overhead.py [--sizes 100000,1000000] [--runs 3] [--timeout 1]

Prints one row per size with the medians over the runs: the wall time of
plan(), the library's solve time, the rest (total minus solve), and how
much of that rest Problem.add_many alone takes (numpy checks and the C
call that validates and copies the buffers in).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import minimalloc


def instance(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    steps = 10_000
    lower = rng.integers(0, steps, n)
    length = np.minimum(rng.geometric(1 / 200, n), steps)
    upper = np.minimum(lower + length, steps + 1)
    size = np.exp2(rng.uniform(6, 23, n)).astype(np.int64)
    return lower.astype(np.int64), upper.astype(np.int64), size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=1.0)
    args = parser.parse_args()
    print(
        f"{'buffers':>9} {'total s':>9} {'C solve s':>10} {'rest s':>9} {'rest %':>7} "
        f"{'of it add_many s':>17} {'height/lower bound':>19}"
    )
    for n in (int(s) for s in args.sizes.split(",")):
        lower, upper, size = instance(n)
        totals, solves, ratios, adds = [], [], [], []
        for _ in range(args.runs):
            # The checks and the copy into the library alone.
            start = time.perf_counter()
            minimalloc.Problem().add_many(lower, upper, size)
            adds.append(time.perf_counter() - start)
            start = time.perf_counter()
            r = minimalloc.plan(lower, upper, size, minimize=True, timeout=args.timeout, threads=1)
            total = time.perf_counter() - start
            assert r.solved and r.offsets is not None and len(r.offsets) == n
            totals.append(total)
            solves.append(r.elapsed)
            ratios.append(r.height / r.lower_bound)
        total = statistics.median(totals)
        solve = statistics.median(solves)
        python = statistics.median(t - s for t, s in zip(totals, solves))
        print(
            f"{n:>9} {total:>9.3f} {solve:>10.3f} {python:>9.3f} {100 * python / total:>6.1f}% "
            f"{statistics.median(adds):>17.3f} {statistics.median(ratios):>19.5f}"
        )


if __name__ == "__main__":
    main()
