#!/usr/bin/env python3
"""Converts a DSA-RP instance (the JSON of tonibohnlein/dsa-solver's
`benchmarks/minimalloc-dsa-rp/`) to minimalloc's CSV: one row per buffer,
one penalty label per priced pair, the pool's capacity in the file name.

    scripts/dsa-rp-to-csv.py A.json benchmarks/dsa-rp/

Only what those instances use is converted (one pool without reserved
ranges, one live interval per buffer, no constraints); anything else is
refused rather than dropped.
"""
import json
import pathlib
import sys


def convert(path: pathlib.Path, out_dir: pathlib.Path) -> pathlib.Path:
    problem = json.loads(path.read_text())["problem"]
    (pool,) = problem["pools"]
    if pool["reserved_ranges"]:
        sys.exit(f"{path}: reserved ranges are not converted")
    if any(problem["constraints"].values()):
        sys.exit(f"{path}: constraints are not converted")
    buffers = problem["buffers"]
    cells: list[list[str]] = [[] for _ in buffers]
    index = {b["id"]: i for i, b in enumerate(buffers)}
    for k, pair in enumerate(problem["cost_model"]["reuse_penalties"]):
        for end in ("first", "second"):
            cells[index[pair[end]]].append(f"p{k}:{pair['cost']}")
    rows = ["id,lower,upper,size,alignment,penalty"]
    for b, cell in zip(buffers, cells):
        (live,) = b["live_intervals"]
        if b["allowed_pools"] != [pool["id"]]:
            sys.exit(f"{path}: buffer {b['id']} names another pool")
        rows.append(
            f"{b['name']},{live['lower']},{live['upper']},{b['size']},"
            f"{b['alignment']},{' '.join(cell)}"
        )
    out = out_dir / f"{path.stem}.{pool['capacity']}.csv"
    out.write_text("\n".join(rows) + "\n")
    return out


if __name__ == "__main__":
    *inputs, out_dir = sys.argv[1:]
    for name in inputs:
        print(convert(pathlib.Path(name), pathlib.Path(out_dir)))
