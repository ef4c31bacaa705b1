"""minimalloc: static memory allocation for machine-learning compilers.

Give every buffer (a lifetime and a size) an offset so that buffers alive
at the same time never overlap: below a capacity, or as low as possible
within a deadline, with a proven lower bound::

    import minimalloc
    r = minimalloc.plan([0, 3, 0, 9, 0], [3, 9, 9, 21, 21], [4, 4, 4, 4, 4], capacity=12)
    r.offsets, r.height   # array([8, 8, 4, 4, 0]), 12 (for example)

The work is done by the minimalloc C library (the wheel carries it),
called through its C ABI with the GIL released.
"""

from ._api import (
    CancelToken,
    InvalidInputError,
    MinimallocError,
    PlacementError,
    PoolReport,
    Problem,
    Result,
    Status,
    UnsupportedError,
    plan,
    version,
)
from ._csv import read_csv, write_csv

__version__ = version()

__all__ = [
    "CancelToken",
    "InvalidInputError",
    "MinimallocError",
    "PlacementError",
    "PoolReport",
    "Problem",
    "Result",
    "Status",
    "UnsupportedError",
    "plan",
    "read_csv",
    "write_csv",
    "version",
    "__version__",
]
