"""The Python face of the minimalloc C library.

Every call goes through the C ABI declared in include/minimalloc.h (cffi
wraps it; cffi releases the GIL for the length of each C call). Arrays go
in and out as numpy int64 buffers, without copies when they already are.
"""

from __future__ import annotations

import enum
import math
import threading
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from ._native import ffi, lib

INT64_MAX = (1 << 63) - 1

ArrayLike = Union[Sequence[int], npt.NDArray[np.integer], Iterable[int]]


class Status(enum.Enum):
    """How a solve ended."""

    SOLVED = "solved"
    """Every buffer has an offset (below the capacity, or as low as found)."""
    INFEASIBLE = "infeasible"
    """Proven: no placement fits the capacity."""
    TIMED_OUT = "timed out"
    """The timeout passed before any placement was found."""
    CANCELLED = "cancelled"
    """The solve was cancelled before any placement was found."""
    NOT_FOUND = "not found"
    """No placement found and no proof that none exists."""


_STATUS = {
    lib.MINIMALLOC_STATUS_OK: Status.SOLVED,
    lib.MINIMALLOC_STATUS_INFEASIBLE: Status.INFEASIBLE,
    lib.MINIMALLOC_STATUS_TIMEOUT: Status.TIMED_OUT,
    lib.MINIMALLOC_STATUS_CANCELLED: Status.CANCELLED,
    lib.MINIMALLOC_STATUS_NOT_FOUND: Status.NOT_FOUND,
}

_LIFETIMES = {
    "half-open": lib.MINIMALLOC_LIFETIME_HALF_OPEN,
    "inclusive": lib.MINIMALLOC_LIFETIME_INCLUSIVE,
    "exclusive": lib.MINIMALLOC_LIFETIME_EXCLUSIVE,
}

_STRATEGIES = {
    "auto": lib.MINIMALLOC_STRATEGY_AUTO,
    "exact": lib.MINIMALLOC_STRATEGY_EXACT,
    "skyline": lib.MINIMALLOC_STRATEGY_SKYLINE,
    "first-fit": lib.MINIMALLOC_STRATEGY_FIRST_FIT,
    "best-fit": lib.MINIMALLOC_STRATEGY_BEST_FIT,
    "big-rocks": lib.MINIMALLOC_STRATEGY_BIG_ROCKS,
    "online": lib.MINIMALLOC_STRATEGY_ONLINE,
    "layered": lib.MINIMALLOC_STRATEGY_LAYERED,
    "gap-fill": lib.MINIMALLOC_STRATEGY_GAP_FILL,
    "coalescing": lib.MINIMALLOC_STRATEGY_COALESCING,
}


class MinimallocError(Exception):
    """Something the library refused or could not do."""


class InvalidInputError(MinimallocError, ValueError):
    """A buffer, a field or an option is invalid; the message says which and why."""


class UnsupportedError(MinimallocError):
    """The library was built without what was asked for."""


class PlacementError(MinimallocError):
    """Raised by ``check=True`` when a solve ends without a placement.

    ``result`` holds the :class:`Result` (its status says why).
    """

    def __init__(self, result: "Result") -> None:
        super().__init__(result.message or result.status.value)
        self.result = result


@dataclass(frozen=True)
class Result:
    """What a solve found.

    ``offsets`` holds one offset per buffer, in the order they were given,
    with ``base`` added; it is ``None`` unless ``status`` is SOLVED.
    """

    status: Status
    offsets: Optional[npt.NDArray[np.int64]]
    height: Optional[int]
    """The highest offset + size, without the base (None without a placement)."""
    lower_bound: int
    """Proven: no placement is lower (the max load, or more)."""
    optimal: bool
    """The height equals the lower bound (with ``penalty=True``: the
    penalty equals its lower bound)."""
    nodes: int
    """Exact-search nodes visited."""
    elapsed: float
    """Seconds the library spent solving."""
    message: str
    """Why there is no placement ("" if there is one)."""
    conflict: Optional[npt.NDArray[np.intp]] = None
    """When fitting is proven infeasible: buffers that cannot fit together."""
    conflict_irreducible: bool = False
    """The conflict is proven minimal (without any one, the others fit)."""
    pool_of: Optional[npt.NDArray[np.intp]] = None
    """With pools: the pool of each buffer (offsets are then addresses)."""
    pools: Optional[List["PoolReport"]] = None
    """With pools: each pool's figures."""
    penalty: Optional[int] = None
    """What the placement pays in reuse penalties (:meth:`Problem.penalize`):
    the summed costs of the penalised pairs whose bytes meet."""
    penalty_lower_bound: Optional[int] = None
    """Proven: no placement below the capacity pays less (from
    ``penalty=True``; 0 after the other objectives)."""

    @property
    def solved(self) -> bool:
        return self.status is Status.SOLVED


@dataclass(frozen=True)
class PoolReport:
    """What one pool got in a solve."""

    name: str
    height: int
    """The highest offset + size in it, without its base."""
    lower_bound: int
    """A lower bound on its height: the max load of the buffers it got, or
    more where minimising proved it."""
    buffers: int
    """How many buffers it got."""


class CancelToken:
    """Stops the solves given it, from any thread: ``token.cancel()``.

    A solve started after ``cancel()`` stops at once; ``reset()`` allows
    new ones. A solve stopped this way returns its best placement when
    minimising, or status CANCELLED.
    """

    # Each solve carries a C cancel token of its own (so that Ctrl-C in one
    # solve stops only that one); this object requests the tokens of the
    # solves given it.

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cancelled = False
        self._running: List[object] = []

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            for token in self._running:
                lib.minimalloc_cancel_request(token)

    def reset(self) -> None:
        with self._lock:
            self._cancelled = False

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def _attach(self, token: object) -> None:
        with self._lock:
            self._running.append(token)
            if self._cancelled:
                lib.minimalloc_cancel_request(token)

    def _detach(self, token: object) -> None:
        with self._lock:
            self._running.remove(token)


def _text(pointer: object) -> str:
    if pointer == ffi.NULL:
        return ""
    return str(ffi.string(pointer).decode("utf-8", "replace"))


def _check(status: int, message: str) -> None:
    """Raises the exception for a failed setup call."""
    if status == lib.MINIMALLOC_STATUS_OK:
        return
    if status == lib.MINIMALLOC_STATUS_INVALID_ARGUMENT:
        raise InvalidInputError(message)
    if status == lib.MINIMALLOC_STATUS_UNSUPPORTED:
        raise UnsupportedError(message)
    raise MinimallocError(message or _text(lib.minimalloc_status_str(status)))


def _int64_array(name: str, values: ArrayLike, length: Optional[int] = None) -> npt.NDArray[np.int64]:
    """``values`` as a contiguous int64 array, refusing what would change a value."""
    if not isinstance(values, (np.ndarray, list, tuple)) and not hasattr(values, "__array__"):
        values = list(values)  # ranges, generators, iterators
    array = np.asarray(values)
    if array.ndim != 1:
        raise InvalidInputError(f"{name} must be one-dimensional, got {array.ndim} dimensions")
    if length is not None and array.shape[0] != length:
        raise InvalidInputError(f"{name} has {array.shape[0]} values, lower has {length}")
    kind = array.dtype.kind
    if array.size == 0:
        return np.zeros(0, dtype=np.int64)
    if kind == "u" and array.dtype.itemsize >= 8 and int(array.max()) > INT64_MAX:
        raise InvalidInputError(f"{name}: {int(array.max())} does not fit in 64 bits")
    if kind in "iub":
        return np.ascontiguousarray(array, dtype=np.int64)
    if kind == "f":
        if not np.all(np.isfinite(array)) or not np.all(array == np.trunc(array)):
            bad = int(np.flatnonzero(~np.isfinite(array) | (array != np.trunc(array)))[0])
            raise InvalidInputError(f"{name}[{bad}] = {array[bad].item()!r} is not an integer")
        if np.any(np.abs(array) >= 2.0**63):
            raise InvalidInputError(f"{name}: a value does not fit in 64 bits")
        return np.ascontiguousarray(array, dtype=np.int64)
    if kind == "O":
        try:
            return np.array([int(v) for v in array], dtype=np.int64)
        except OverflowError:
            raise InvalidInputError(f"{name}: a value does not fit in 64 bits") from None
        except (TypeError, ValueError) as e:
            raise InvalidInputError(f"{name}: {e}") from None
    raise InvalidInputError(f"{name} must hold integers, got {array.dtype}")


def _int64(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InvalidInputError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if not -(1 << 63) <= value <= INT64_MAX:
        raise InvalidInputError(f"{name}: {value} does not fit in 64 bits")
    return value


def _timeout_ms(timeout: Optional[float]) -> int:
    """Seconds as the library's milliseconds; None and 0 mean no timeout."""
    if timeout is None:
        return 0
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or math.isnan(timeout):
        raise InvalidInputError(f"timeout must be a number of seconds, got {timeout!r}")
    if timeout < 0:
        raise InvalidInputError(f"timeout must not be negative, got {timeout}")
    if timeout == 0 or math.isinf(timeout):
        return 0
    return max(1, math.ceil(timeout * 1000))


class Problem:
    """Buffers to place and the capacity they must fit below.

    Build it buffer by buffer (:meth:`add`) or from arrays
    (:meth:`add_many`); give buffers gaps, windows, fixed offsets or
    hints; then :meth:`solve`. ``capacity=None`` means no upper bound,
    which only minimising accepts. Lifetimes are half-open ``[lower,
    upper)`` unless ``lifetime`` is "inclusive" ``[lower, upper]`` or
    "exclusive" ``(lower, upper)``.
    """

    def __init__(self, capacity: Optional[int] = None, *, lifetime: str = "half-open") -> None:
        if lifetime not in _LIFETIMES:
            raise InvalidInputError(
                f"lifetime must be one of {', '.join(_LIFETIMES)}, got {lifetime!r}"
            )
        self.capacity: Optional[int] = None if capacity is None else _int64("capacity", capacity)
        handle = lib.minimalloc_problem_new(INT64_MAX if capacity is None else self.capacity)
        if handle == ffi.NULL:
            raise InvalidInputError(_text(lib.minimalloc_last_error()))
        self._handle = ffi.gc(handle, lib.minimalloc_problem_free)
        self._solving = 0
        self._lock = threading.Lock()
        self.ids: List[str] = []
        """An id per buffer (as read from CSV; otherwise its index)."""
        self.lifetime = lifetime
        # The values as given, for writing the problem back as CSV.
        self._chunks: List[Tuple[np.ndarray, np.ndarray, np.ndarray, Optional[np.ndarray]]] = []
        self._gaps: Dict[int, List[Tuple[int, int, Optional[Tuple[int, int]]]]] = {}
        self._fixed: Dict[int, int] = {}
        self._hints: Dict[int, int] = {}
        # Link groups as declared (the library merges colocation groups
        # that share a buffer; `links()` does the same).
        self._colocations: List[List[int]] = []
        self._separations: List[List[int]] = []
        self._penalties: Dict[Tuple[int, int], int] = {}
        self.pool_names: List[str] = []
        """The names of the pools added, by index."""
        _check(
            lib.minimalloc_problem_set_lifetime(self._handle, _LIFETIMES[lifetime]),
            self._error(),
        )

    def _error(self) -> str:
        return _text(lib.minimalloc_problem_last_error(self._handle))

    def _change(self) -> None:
        if self._solving:
            raise MinimallocError("a problem cannot change while it is being solved")

    def __len__(self) -> int:
        return int(lib.minimalloc_problem_len(self._handle))

    def __repr__(self) -> str:
        return f"Problem(capacity={self.capacity}, buffers={len(self)})"

    def add(self, lower: int, upper: int, size: int, alignment: int = 1, *, id: Optional[str] = None) -> int:
        """Adds one buffer alive during its lifetime; returns its index."""
        return self.add_many([lower], [upper], [size], [alignment], ids=None if id is None else [id]).start

    def add_many(
        self,
        lower: ArrayLike,
        upper: ArrayLike,
        size: ArrayLike,
        alignment: Optional[ArrayLike] = None,
        *,
        ids: Optional[Sequence[str]] = None,
    ) -> range:
        """Adds buffers from arrays, all or none; returns their indices."""
        self._change()
        lo = _int64_array("lower", lower)
        n = lo.shape[0]
        hi = _int64_array("upper", upper, n)
        sz = _int64_array("size", size, n)
        al = None if alignment is None else _int64_array("alignment", alignment, n)
        if ids is not None and len(ids) != n:
            raise InvalidInputError(f"ids has {len(ids)} values, lower has {n}")
        first = ffi.new("size_t *")
        status = lib.minimalloc_problem_add_buffers(
            self._handle,
            ffi.from_buffer("int64_t[]", lo),
            ffi.from_buffer("int64_t[]", hi),
            ffi.from_buffer("int64_t[]", sz),
            ffi.NULL if al is None else ffi.from_buffer("int64_t[]", al),
            n,
            first,
        )
        _check(status, self._error())
        self._chunks.append((lo, hi, sz, al))
        start = int(first[0])
        self.ids.extend(str(i) for i in (ids if ids is not None else range(start, start + n)))
        return range(start, start + n)

    def add_gap(self, index: int, lower: int, upper: int, window: Optional[Tuple[int, int]] = None) -> None:
        """Gives buffer ``index`` a gap: a stretch of its lifetime where its
        memory is free for others, or where only the bytes ``window =
        (lower, upper)`` of it (relative to its offset) stay in use."""
        self._change()
        index = self._index(index)
        if window is None:
            status = lib.minimalloc_problem_add_gap(self._handle, index, _int64("lower", lower), _int64("upper", upper))
        else:
            wl, wu = window
            status = lib.minimalloc_problem_add_gap_window(
                self._handle, index, _int64("lower", lower), _int64("upper", upper),
                _int64("window lower", wl), _int64("window upper", wu),
            )
        _check(status, self._error())
        self._gaps.setdefault(index, []).append((int(lower), int(upper), window))

    def fix(self, index: int, offset: Optional[int]) -> None:
        """Fixes buffer ``index`` at ``offset`` (None releases it)."""
        self._place(index, offset, "offset", lib.minimalloc_problem_set_offset, self._fixed)

    def hint(self, index: int, offset: Optional[int]) -> None:
        """Gives buffer ``index`` an offset to try first (None removes it)."""
        self._place(index, offset, "hint", lib.minimalloc_problem_set_hint, self._hints)

    def _place(self, index: int, offset: Optional[int], what: str, setter: Any, kept: Dict[int, int]) -> None:
        """Sets (or, with None, clears) a fixed offset or a hint."""
        self._change()
        value = -1 if offset is None else _int64(what, offset)
        if offset is not None and value < 0:
            raise InvalidInputError(f"{what} must not be negative, got {value}")
        index = self._index(index)
        _check(setter(self._handle, index, value), self._error())
        if offset is None:
            kept.pop(index, None)
        else:
            kept[index] = value

    def colocate(self, indices: Sequence[int]) -> None:
        """Makes buffers ``indices`` share one offset: they alias (each keeps
        its lifetime and size; groups that share a buffer merge)."""
        self._colocations.append(self._link(indices, lib.minimalloc_problem_colocate))

    def separate(self, indices: Sequence[int]) -> None:
        """Forbids buffers ``indices`` any shared byte, whatever their
        lifetimes."""
        self._separations.append(self._link(indices, lib.minimalloc_problem_separate))

    def penalize(self, a: int, b: int, cost: int) -> None:
        """Lets buffers ``a`` and ``b`` share bytes at ``cost`` (a reuse
        penalty: a pipeline stall, a false dependency); the same pair
        again costs the sum. Only ``solve(penalty=True)`` looks at it."""
        self._change()
        a, b = self._index(a), self._index(b)
        cost = _int64("cost", cost)
        _check(lib.minimalloc_problem_penalize(self._handle, a, b, cost), self._error())
        pair = (min(a, b), max(a, b))
        self._penalties[pair] = self._penalties.get(pair, 0) + cost

    def penalties(self) -> List[Tuple[int, int, int]]:
        """The penalised pairs as (first, second, cost), the lower index
        first, in increasing order."""
        return [(a, b, cost) for (a, b), cost in sorted(self._penalties.items())]

    def _link(self, indices: Sequence[int], call: Any) -> List[int]:
        self._change()
        members = [self._index(i) for i in indices]
        array = ffi.new("size_t[]", members) if members else ffi.NULL
        _check(call(self._handle, array, len(members)), self._error())
        return sorted(set(members))

    def links(self) -> Tuple[List[List[int]], List[List[int]]]:
        """The colocation groups (disjoint: declared groups that share a
        buffer are one) and the separation groups, each sorted, groups of
        two or more only."""
        parent = list(range(len(self)))

        def root(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        for group in self._colocations:
            for m in group[1:]:
                parent[root(m)] = root(group[0])
        merged: Dict[int, List[int]] = {}
        order: List[int] = []
        for group in self._colocations:
            r = root(group[0])
            if r not in merged:
                merged[r] = []
                order.append(r)
        for i in range(len(self)):
            r = root(i)
            if r in merged:
                merged[r].append(i)
        colocations = [merged[r] for r in order if len(merged[r]) >= 2]
        separations = [g for g in self._separations if len(g) >= 2]
        return colocations, separations

    def add_pool(self, name: str, capacity: int, *, base: int = 0, alignment: int = 1) -> int:
        """Adds a memory pool; returns its index. Buffers go to any pool, in
        the order added, unless :meth:`set_pools` says otherwise; fitting
        fills preferred pools first and spills the rest, and offsets become
        addresses (the pool's base plus the offset in it)."""
        self._change()
        out = ffi.new("size_t *")
        status = lib.minimalloc_problem_add_pool(
            self._handle,
            str(name).encode("utf-8"),
            _int64("capacity", capacity),
            _int64("base", base),
            _int64("alignment", alignment),
            out,
        )
        _check(status, self._error())
        self.pool_names.append(str(name))
        return int(out[0])

    def set_pools(self, index: int, pools: Sequence[int]) -> None:
        """Says which pools buffer ``index`` may go to, preferred first
        (empty: any)."""
        self._change()
        listed = [_int64("pool", p) for p in pools]
        if any(p < 0 for p in listed):
            raise InvalidInputError(f"pools must not be negative, got {listed}")
        array = ffi.new("size_t[]", listed) if listed else ffi.NULL
        _check(
            lib.minimalloc_problem_set_pools(self._handle, self._index(index), array, len(listed)),
            self._error(),
        )

    def columns(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """lower, upper, size and alignment of every buffer, as given."""
        n = len(self)
        if not self._chunks:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, empty, empty
        lo = np.concatenate([c[0] for c in self._chunks])
        hi = np.concatenate([c[1] for c in self._chunks])
        sz = np.concatenate([c[2] for c in self._chunks])
        al = np.concatenate([np.ones(len(c[0]), np.int64) if c[3] is None else c[3] for c in self._chunks])
        assert lo.shape[0] == n
        return lo, hi, sz, al

    def _index(self, index: int) -> int:
        index = _int64("index", index)
        if index < 0:
            raise InvalidInputError(f"buffer {index} does not exist (the problem has {len(self)} buffers)")
        return index

    def solve(
        self,
        *,
        minimize: bool = False,
        penalty: bool = False,
        timeout: Optional[float] = None,
        seed: Optional[int] = None,
        threads: Optional[int] = None,
        base: int = 0,
        strategy: str = "auto",
        restarts: Optional[int] = None,
        cancel: Optional[CancelToken] = None,
        check: bool = False,
    ) -> Result:
        """Places every buffer; see :func:`minimalloc.plan` for the options.
        ``penalty=True`` fits the capacity (every pool), then pays as little
        as it can for the pairs of :meth:`penalize` whose bytes meet; the
        result's ``penalty`` and ``penalty_lower_bound`` say how it did."""
        if minimize and penalty:
            raise InvalidInputError("minimize and penalty are two objectives: choose one")
        if not minimize and self.capacity is None and not self.pool_names:
            raise InvalidInputError("capacity is required unless minimize=True (or with pools)")
        if strategy not in _STRATEGIES:
            raise InvalidInputError(f"strategy must be one of {', '.join(_STRATEGIES)}, got {strategy!r}")
        options = ffi.gc(lib.minimalloc_options_new(), lib.minimalloc_options_free)
        if options == ffi.NULL:
            raise MemoryError("minimalloc_options_new failed")

        def setting(status: int) -> None:
            _check(status, _text(lib.minimalloc_options_last_error(options)))

        objective = (
            lib.MINIMALLOC_OBJECTIVE_MINIMIZE
            if minimize
            else lib.MINIMALLOC_OBJECTIVE_PENALTY
            if penalty
            else lib.MINIMALLOC_OBJECTIVE_FIT
        )
        setting(lib.minimalloc_options_set_objective(options, objective))
        setting(lib.minimalloc_options_set_strategy(options, _STRATEGIES[strategy]))
        setting(lib.minimalloc_options_set_timeout_ms(options, _timeout_ms(timeout)))
        if seed is not None:
            seed = _int64("seed", seed)
            setting(lib.minimalloc_options_set_seed(options, seed & ((1 << 64) - 1)))
        if threads is not None:
            threads = _int64("threads", threads)
            if not 0 <= threads < (1 << 32):
                raise InvalidInputError(f"threads must be 0 (every core) or more, got {threads}")
            setting(lib.minimalloc_options_set_threads(options, threads))
        if restarts is not None:
            restarts = _int64("restarts", restarts)
            if restarts < 0:
                raise InvalidInputError(f"restarts must not be negative, got {restarts}")
            setting(lib.minimalloc_options_set_restarts(options, restarts))
        setting(lib.minimalloc_options_set_base(options, _int64("base", base)))
        token = ffi.gc(lib.minimalloc_cancel_new(), lib.minimalloc_cancel_free)
        if token == ffi.NULL:
            raise MemoryError("minimalloc_cancel_new failed")
        setting(lib.minimalloc_options_set_cancel(options, token))

        out = ffi.new("minimalloc_solution **")
        with self._lock:
            self._solving += 1
        if cancel is not None:
            cancel._attach(token)
        try:
            status = _solve_interruptibly(self._handle, options, token, out)
        finally:
            if cancel is not None:
                cancel._detach(token)
            with self._lock:
                self._solving -= 1
        if out[0] == ffi.NULL:
            _check(status, _text(lib.minimalloc_last_error()))
        # Everything the solve produced is on its solution, whatever the
        # status.
        solution = ffi.gc(out[0], lib.minimalloc_solution_free)
        message = _text(lib.minimalloc_solution_error(solution))
        if status not in _STATUS:
            _check(status, message)
        offsets = None
        height = None
        pool_of: Optional[npt.NDArray[np.intp]] = None
        paid: Optional[int] = None
        least: Optional[int] = None
        if status == lib.MINIMALLOC_STATUS_OK:
            n = int(lib.minimalloc_solution_len(solution))
            offsets = np.empty(n, dtype=np.int64)
            if n:
                _check(
                    lib.minimalloc_solution_offsets(
                        solution, ffi.from_buffer("int64_t[]", offsets, require_writable=True), n
                    ),
                    _text(lib.minimalloc_last_error()),
                )
            height = int(lib.minimalloc_solution_height(solution))
            cost, bound = ffi.new("int64_t *"), ffi.new("int64_t *")
            if lib.minimalloc_solution_penalty(solution, cost, bound) == lib.MINIMALLOC_STATUS_OK:
                paid, least = int(cost[0]), int(bound[0])
            if self.pool_names and n:
                pool_of = np.empty(n, dtype=np.intp)
                _check(
                    lib.minimalloc_solution_pools(
                        solution, ffi.cast("size_t *", ffi.from_buffer(pool_of, require_writable=True)), n
                    ),
                    _text(lib.minimalloc_last_error()),
                )
        conflict, irreducible = _conflict(solution)
        reports = _pool_reports(solution, self.pool_names) if self.pool_names else None
        result = Result(
            status=_STATUS[status],
            offsets=offsets,
            height=height,
            lower_bound=int(lib.minimalloc_solution_lower_bound(solution)),
            optimal=bool(lib.minimalloc_solution_optimal(solution)),
            nodes=int(lib.minimalloc_solution_nodes(solution)),
            elapsed=int(lib.minimalloc_solution_elapsed_us(solution)) / 1e6,
            message=message,
            conflict=conflict,
            conflict_irreducible=irreducible,
            pool_of=pool_of,
            pools=reports,
            penalty=paid,
            penalty_lower_bound=least,
        )
        if check and not result.solved:
            raise PlacementError(result)
        return result


def _conflict(solution: Any) -> Tuple[Optional[npt.NDArray[np.intp]], bool]:
    """The conflict the solve that made `solution` found, if any."""
    count = ffi.new("size_t *")
    irreducible = ffi.new("int *")
    _check(lib.minimalloc_solution_conflict(solution, ffi.NULL, 0, count, irreducible), "")
    if count[0] == 0:
        return None, False
    out = np.empty(int(count[0]), dtype=np.intp)
    buffer = ffi.cast("size_t *", ffi.from_buffer(out, require_writable=True))
    _check(lib.minimalloc_solution_conflict(solution, buffer, len(out), count, irreducible), "")
    return out, bool(irreducible[0])


def _pool_reports(solution: Any, names: List[str]) -> List[PoolReport]:
    """Each pool's figures from the solve that made `solution`."""
    height, bound, count = ffi.new("int64_t *"), ffi.new("int64_t *"), ffi.new("size_t *")
    reports = []
    for p, name in enumerate(names):
        if lib.minimalloc_solution_pool_report(solution, p, height, bound, count) != lib.MINIMALLOC_STATUS_OK:
            break
        reports.append(PoolReport(name, int(height[0]), int(bound[0]), int(count[0])))
    return reports


def _solve_interruptibly(problem: Any, options: Any, token: Any, out: Any) -> int:
    """Runs the C solve. In the main thread it runs on a helper thread, so
    that Ctrl-C (KeyboardInterrupt) reaches Python at once: it cancels the
    solve through its own token, waits for it to stop, and re-raises."""
    if threading.current_thread() is not threading.main_thread():
        return int(lib.minimalloc_solve_with(problem, options, out))
    box: List[int] = []
    failure: List[BaseException] = []
    began = threading.Event()

    def work() -> None:
        began.set()
        try:
            box.append(int(lib.minimalloc_solve_with(problem, options, out)))
        except BaseException as e:  # pragma: no cover - cffi does not raise here
            failure.append(e)

    worker = threading.Thread(target=work, name="minimalloc-solve", daemon=True)
    try:
        # Inside the try: Ctrl-C can come while the thread starts (start()
        # waits for it), and the solve must be cancelled then too.
        worker.start()
        while worker.is_alive():
            worker.join(0.05)
    except KeyboardInterrupt:
        # The token stays requested: a solve that has not begun stops at once.
        lib.minimalloc_cancel_request(token)
        _await_cancelled(worker, began)
        if out[0] != ffi.NULL:
            lib.minimalloc_solution_free(out[0])
        raise
    if failure:
        raise failure[0]
    return box[0]


def _await_cancelled(worker: threading.Thread, began: threading.Event) -> None:
    """Waits for a cancelled solve's thread to end, through any further
    Ctrl-C: until it ends, the problem and the options are in use. A
    thread interrupted while starting still begins (and stops at once);
    one interrupted before it was made never does."""
    while True:
        try:
            if began.wait(60.0):
                worker.join()
            return
        except KeyboardInterrupt:
            continue


def plan(
    lower: ArrayLike,
    upper: ArrayLike,
    size: ArrayLike,
    capacity: Optional[int] = None,
    *,
    alignment: Optional[ArrayLike] = None,
    minimize: bool = False,
    timeout: Optional[float] = None,
    seed: Optional[int] = None,
    threads: Optional[int] = None,
    lifetime: str = "half-open",
    base: int = 0,
    strategy: str = "auto",
    restarts: Optional[int] = None,
    cancel: Optional[CancelToken] = None,
    check: bool = False,
) -> Result:
    """Places buffers so that buffers alive at the same time never overlap.

    Buffer ``i`` is alive during ``[lower[i], upper[i])`` (or as
    ``lifetime`` says) and takes ``size[i]`` bytes at an offset that is a
    multiple of ``alignment[i]`` (1 if not given). Sequences and numpy
    arrays are taken; values must be integers that fit in 64 bits.

    - Fit (the default): every buffer below ``capacity``, or a proof that
      none fits (status INFEASIBLE).
    - ``minimize=True``: the lowest height found within ``timeout``, with
      a proven lower bound; ``capacity`` is then an optional upper bound.

    ``timeout`` is in seconds (None or 0: no timeout). ``seed`` makes the
    improving restarts reproducible; ``threads`` is how many threads they
    may use (default 1, 0 for every core); ``base`` is added to every
    offset; ``strategy`` is "auto", "exact" or one heuristic ("online",
    "skyline", "first-fit", "best-fit", "big-rocks", "layered", "gap-fill",
    "coalescing"; minimising with a timeout, one that places nothing in
    the time returns the online placement instead, its source "online");
    ``cancel`` stops the solve from another thread. Ctrl-C cancels too and
    raises KeyboardInterrupt.

    Invalid input raises :class:`InvalidInputError` naming the buffer, the
    field and why. A solve without a placement (infeasible, timed out,
    cancelled) is a :class:`Result`, unless ``check=True``, which raises
    :class:`PlacementError`.
    """
    problem = Problem(capacity, lifetime=lifetime)
    problem.add_many(lower, upper, size, alignment)
    return problem.solve(
        minimize=minimize,
        timeout=timeout,
        seed=seed,
        threads=threads,
        base=base,
        strategy=strategy,
        restarts=restarts,
        cancel=cancel,
        check=check,
    )


def version() -> str:
    """The version of the C library."""
    return _text(lib.minimalloc_version())
