#!/usr/bin/env python3
"""Lists the files under src/ longer than 600 lines and exits 1 if any is:
past that, a file holds more than one idea; split it along a seam you can
name."""
import os
import sys

LIMIT = 600
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
long = []
for dirpath, _, names in os.walk(ROOT):
    for name in names:
        if name.endswith(".rs"):
            path = os.path.join(dirpath, name)
            with open(path) as f:
                lines = sum(1 for _ in f)
            if lines > LIMIT:
                long.append((lines, os.path.relpath(path, ROOT)))
for lines, rel in sorted(long, reverse=True):
    print(f"src/{rel}: {lines} lines (more than {LIMIT})")
if not long:
    print(f"no file under src/ over {LIMIT} lines")
sys.exit(1 if long else 0)
