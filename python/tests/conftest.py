"""Shared helpers: where the repository's benchmarks are, and a validator
that every placement the tests see goes through."""

from __future__ import annotations

import pathlib
from typing import Optional, Sequence, Tuple

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

# The paper's running example: fits 12, not 11.
PAPER = ([0, 3, 0, 9, 0], [3, 9, 9, 21, 21], [4, 4, 4, 4, 4])


def pieces(lower: int, upper: int, gaps: Sequence[Tuple[int, int, Optional[Tuple[int, int]]]], size: int):
    """The (start, end, bottom, top) stretches in which a buffer uses
    memory, relative to its offset: its lifetime minus its gaps, plus the
    windows of the gaps that have one."""
    out = []
    start = lower
    for gl, gu, window in sorted(gaps):
        if start < gl:
            out.append((start, gl, 0, size))
        if window is not None:
            out.append((gl, gu, window[0], window[1]))
        start = gu
    if start < upper:
        out.append((start, upper, 0, size))
    return out


def check_placement(
    lower,
    upper,
    size,
    offsets,
    *,
    capacity: Optional[int] = None,
    alignment=None,
    gaps=None,
    base: int = 0,
) -> int:
    """Asserts that `offsets` is a valid placement (half-open lifetimes);
    returns its height. Quadratic: for the tests' small inputs."""
    n = len(lower)
    assert offsets is not None and len(offsets) == n
    offsets = np.asarray(offsets, dtype=np.int64) - base
    alignment = [1] * n if alignment is None else alignment
    gaps = gaps or {}
    spans = []
    for i in range(n):
        assert offsets[i] >= 0, f"buffer {i} below the base"
        assert offsets[i] % alignment[i] == 0, f"buffer {i} misaligned"
        if capacity is not None:
            assert offsets[i] + size[i] <= capacity, f"buffer {i} above the capacity"
        spans.append(pieces(lower[i], upper[i], gaps.get(i, []), size[i]))
    for i in range(n):
        for j in range(i + 1, n):
            for (s1, e1, b1, t1) in spans[i]:
                for (s2, e2, b2, t2) in spans[j]:
                    if s1 < e2 and s2 < e1:
                        lo1, hi1 = offsets[i] + b1, offsets[i] + t1
                        lo2, hi2 = offsets[j] + b2, offsets[j] + t2
                        assert hi1 <= lo2 or hi2 <= lo1, f"buffers {i} and {j} overlap"
    return int(max((offsets[i] + size[i] for i in range(n)), default=0))


@pytest.fixture
def paper():
    return PAPER
