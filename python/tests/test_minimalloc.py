"""The Python package, end to end through the C library."""

from __future__ import annotations

import _thread
import io
import re
import signal
import threading
import time

import numpy as np
import pytest

import minimalloc
from minimalloc import CancelToken, InvalidInputError, PlacementError, Problem, Status

from conftest import PAPER, ROOT, check_placement

LONG_SEARCH = ROOT / "benchmarks" / "challenging" / "J.1048576.csv"
LONG_CAPACITY = 989184  # its max load: fitting it runs long


def test_the_paper_example_fits_12_and_not_11():
    lower, upper, size = PAPER
    r = minimalloc.plan(lower, upper, size, capacity=12)
    assert r.status is Status.SOLVED and r.solved
    assert r.offsets.dtype == np.int64
    assert check_placement(lower, upper, size, r.offsets, capacity=12) == r.height == 12
    assert r.lower_bound == 12 and r.message == ""
    r = minimalloc.plan(lower, upper, size, capacity=11)
    assert r.status is Status.INFEASIBLE and not r.solved
    assert r.offsets is None and r.height is None
    assert "no placement fits capacity 11" in r.message
    with pytest.raises(PlacementError) as e:
        minimalloc.plan(lower, upper, size, capacity=11, check=True)
    assert e.value.result.status is Status.INFEASIBLE


def test_minimising_proves_the_max_load():
    lower, upper, size = PAPER
    for strategy in ["auto", "exact", "online", "skyline", "first-fit", "best-fit", "big-rocks", "layered", "gap-fill", "coalescing"]:
        r = minimalloc.plan(lower, upper, size, minimize=True, strategy=strategy, seed=3)
        assert r.solved, strategy
        assert check_placement(lower, upper, size, r.offsets) == r.height
        assert r.lower_bound == 12
        assert r.optimal == (r.height == 12)


def test_numpy_and_list_inputs_agree():
    lower, upper, size = PAPER
    from_lists = minimalloc.plan(lower, upper, size, capacity=12, strategy="exact")
    for kind in (np.int64, np.int32, np.uint16, np.float64):
        r = minimalloc.plan(
            np.array(lower, dtype=kind), np.array(upper, dtype=kind), np.array(size, dtype=kind),
            capacity=12, strategy="exact",
        )
        assert np.array_equal(r.offsets, from_lists.offsets), kind
    # Tuples, ranges and a non-contiguous view.
    wide = np.array([lower, upper, size]).T.copy()
    r = minimalloc.plan(wide[:, 0], wide[:, 1], wide[:, 2], capacity=12, strategy="exact")
    assert np.array_equal(r.offsets, from_lists.offsets)
    r = minimalloc.plan(tuple(lower), iter(upper), (s for s in size), capacity=12)
    check_placement(lower, upper, size, r.offsets, capacity=12)


def test_alignment_base_and_lifetimes():
    lower, upper, size = PAPER
    alignment = [8, 1, 8, 1, 1]
    r = minimalloc.plan(lower, upper, size, alignment=alignment, minimize=True, base=0x1000)
    assert r.solved
    check_placement(lower, upper, size, r.offsets, alignment=alignment, base=0x1000)
    assert all(o >= 0x1000 for o in r.offsets)
    # The same buffers with inclusive and exclusive ends.
    inclusive = minimalloc.plan(lower, [u - 1 for u in upper], size, capacity=12, lifetime="inclusive")
    check_placement(lower, upper, size, inclusive.offsets, capacity=12)
    exclusive = minimalloc.plan([l - 1 for l in lower], upper, size, capacity=12, lifetime="exclusive")
    check_placement(lower, upper, size, exclusive.offsets, capacity=12)
    # A base that breaks an alignment is refused at solve time.
    with pytest.raises(InvalidInputError, match="base address 4 is not a multiple of buffer 0's alignment 8"):
        minimalloc.plan(lower, upper, size, alignment=alignment, capacity=24, base=4)


def test_problem_with_gaps_windows_fixed_offsets_and_hints():
    p = Problem()  # no upper bound: minimising only
    idx = p.add_many(*PAPER)
    assert list(idx) == [0, 1, 2, 3, 4] and len(p) == 5
    extra = p.add(0, 21, 2, id="extra")
    assert extra == 5 and p.ids[5] == "extra"
    # Buffer 5 is dead in [3, 19) except for its first byte.
    p.add_gap(5, 3, 19, window=(0, 1))
    p.fix(4, 0)
    p.hint(2, 4)
    r = p.solve(minimize=True)
    lower, upper, size = PAPER
    assert r.solved and r.offsets[4] == 0
    gaps = {5: [(3, 19, (0, 1))]}
    check_placement(lower + [0], upper + [21], size + [2], r.offsets, gaps=gaps)
    # Releasing the fixed offset and the hint.
    p.fix(4, None)
    p.hint(2, None)
    assert p.solve(minimize=True).solved


def test_every_error_path_names_what_is_wrong():
    lower, upper, size = PAPER
    cases = [
        (lambda: minimalloc.plan(lower, upper, [4, 0, 4, 4, 4], capacity=12), r"buffer 1: size must be positive, got 0"),
        (lambda: minimalloc.plan([0, -1], [3, 9], [4, 4], capacity=12), r"buffer 1: lower must not be negative, got -1"),
        (lambda: minimalloc.plan([5], [5], [4], capacity=12), r"buffer 0: upper lifetime \[5, 5\) is empty"),
        (lambda: minimalloc.plan(lower, upper, size, capacity=12, alignment=[1, 1, 0, 1, 1]), r"buffer 2: alignment must be positive"),
        (lambda: minimalloc.plan(lower, upper[:4], size, capacity=12), r"upper has 4 values, lower has 5"),
        (lambda: minimalloc.plan([[0, 1]], [[3, 4]], [[1, 1]], capacity=12), r"lower must be one-dimensional"),
        (lambda: minimalloc.plan([0.5], [3], [4], capacity=12), r"lower\[0\] = 0.5 is not an integer"),
        (lambda: minimalloc.plan([0], [3], np.array([2**64 - 1], dtype=np.uint64), capacity=12), r"size: 18446744073709551615 does not fit in 64 bits"),
        (lambda: minimalloc.plan([0], [3], [2**70], capacity=12), r"size: a value does not fit in 64 bits"),
        (lambda: minimalloc.plan(["a"], [3], [4], capacity=12), r"lower must hold integers"),
        (lambda: minimalloc.plan(lower, upper, size), r"capacity is required unless minimize=True"),
        (lambda: minimalloc.plan(lower, upper, size, capacity=0), r"capacity must be positive, got 0"),
        (lambda: minimalloc.plan(lower, upper, size, capacity=12, lifetime="closed"), r"lifetime must be one of half-open, inclusive, exclusive"),
        (lambda: minimalloc.plan(lower, upper, size, capacity=12, strategy="worst-fit"), r"strategy must be one of"),
        (lambda: minimalloc.plan(lower, upper, size, capacity=12, timeout=-1), r"timeout must not be negative"),
        (lambda: minimalloc.plan(lower, upper, size, capacity=12, timeout="soon"), r"timeout must be a number of seconds"),
        (lambda: minimalloc.plan(lower, upper, size, capacity=12, base=-4), r"base address must not be negative, got -4"),
        (lambda: minimalloc.plan(lower, upper, size, capacity=12, threads=-1), r"threads must be 0"),
        (lambda: minimalloc.plan(lower, upper, size, capacity=12, restarts=-2), r"restarts must not be negative"),
        (lambda: minimalloc.plan(lower, upper, size, capacity=12, seed="x"), r"seed must be an integer"),
    ]
    for call, pattern in cases:
        with pytest.raises(InvalidInputError, match=pattern):
            call()
    # Errors are also ValueErrors, and none leaves a trace in the problem.
    p = Problem(12)
    p.add_many(*PAPER)
    with pytest.raises(ValueError):
        p.add_many([0, 1], [3, 0], [4, 4])
    assert len(p) == 5
    for bad in [lambda: p.add_gap(9, 1, 2), lambda: p.fix(7, 0), lambda: p.hint(-1, 0)]:
        with pytest.raises(InvalidInputError, match=r"buffer -?\d+ does not exist"):
            bad()
    with pytest.raises(InvalidInputError, match="offset 10 \\+ size 4 exceeds the capacity 12"):
        p.fix(0, 10)
    with pytest.raises(InvalidInputError, match="overlaps"):
        p.add_gap(2, 2, 5)
        p.add_gap(2, 4, 6)
    with pytest.raises(InvalidInputError, match="outside the lifetime"):
        p.add_gap(0, 2, 7)
    assert p.solve(check=True).solved


def test_timeouts_are_results_unless_checked():
    p = minimalloc.read_csv(LONG_SEARCH, LONG_CAPACITY)
    r = p.solve(strategy="exact", timeout=0.2)
    assert r.status is Status.TIMED_OUT and r.offsets is None
    assert "timed out" in r.message
    with pytest.raises(PlacementError):
        p.solve(strategy="exact", timeout=0.05, check=True)


def test_a_challenging_instance_validated():
    path = ROOT / "benchmarks" / "challenging" / "A.1048576.csv"
    p = minimalloc.read_csv(path, 1048576)
    r = p.solve(check=True)
    lower, upper, size, alignment = p.columns()
    check_placement(list(lower), list(upper), list(size), r.offsets, capacity=1048576)
    # Minimising within a second: valid, at or above the proven bound.
    r = p.solve(minimize=True, timeout=1.0)
    assert r.solved and r.height >= r.lower_bound
    check_placement(list(lower), list(upper), list(size), r.offsets)


def test_csv_round_trip_and_errors(tmp_path):
    text = "id,start,end,size,alignment,gaps\nb1,0,2,4,4,\nb2,3,8,4,1,5-6@0:2\nb3,0,8,4,1,\nb4,9,20,4,1,\nb5,0,20,4,1,\n"
    source = tmp_path / "in.csv"
    source.write_text(text)
    p = minimalloc.read_csv(source, 12)
    assert p.ids == ["b1", "b2", "b3", "b4", "b5"]
    r = p.solve(check=True)
    lower, upper, size, alignment = p.columns()
    assert list(upper) == [3, 9, 9, 21, 21]  # end is inclusive
    check_placement(list(lower), list(upper), list(size), r.offsets, capacity=12,
                    alignment=list(alignment), gaps={1: [(5, 6, (0, 2))]})
    out = io.StringIO()
    minimalloc.write_csv(out, p, r)
    written = out.getvalue().splitlines()
    assert written[0] == "id,lower,upper,size,alignment,gaps,offset"
    assert written[2].startswith("b2,3,9,4,1,5-6@0:2,")
    # What was written reads back as fixed offsets, and solves to the same.
    again = tmp_path / "again.csv"
    again.write_text(out.getvalue())
    q = minimalloc.read_csv(again, 12)
    assert np.array_equal(q.solve(check=True).offsets, r.offsets)
    for bad, pattern in [
        ("", "empty file"),
        ("id,lower,upper,bytes\n", "no size column"),
        ("id,lower,upper\n", "no size column"),
        ("id,lower,upper,size\na,0,3\n", "line 2: 3 fields, the header has 4"),
        ("id,lower,upper,size\na,0,3,4\nb,x,3,4\n", "line 3, column lower: expected an integer, got 'x'"),
        ("id,lower,upper,size\na,0,3,4\nb,2,1,4\n", "line 3 \\(id \"b\"\\): buffer 1: upper lifetime \\[2, 1\\) is empty"),
        ("id,lower,upper,size,gaps\na,0,9,4,3to4\n", "line 2, column gaps"),
    ]:
        f = tmp_path / "bad.csv"
        f.write_text(bad)
        with pytest.raises(InvalidInputError, match=pattern):
            minimalloc.read_csv(f, 12)


def test_cancel_from_another_thread():
    p = minimalloc.read_csv(LONG_SEARCH, LONG_CAPACITY)
    token = CancelToken()
    threading.Timer(0.2, token.cancel).start()
    start = time.monotonic()
    r = p.solve(strategy="exact", cancel=token)
    assert r.status is Status.CANCELLED
    assert time.monotonic() - start < 30
    # A cancelled token stops the next solve at once, until reset.
    assert p.solve(strategy="exact", cancel=token).status is Status.CANCELLED
    token.reset()
    lower, upper, size = PAPER
    assert minimalloc.plan(lower, upper, size, capacity=12, cancel=token).solved
    # Minimising (with no upper bound) returns its best placement when
    # cancelled.
    p = minimalloc.read_csv(LONG_SEARCH)
    token2 = CancelToken()
    threading.Timer(0.3, token2.cancel).start()
    r = p.solve(minimize=True, cancel=token2)
    assert r.solved
    lower, upper, size, _ = p.columns()
    check_placement(list(lower), list(upper), list(size), r.offsets)


def test_ctrl_c_cancels_the_solve_and_raises_keyboard_interrupt():
    # interrupt_main does nothing where SIGINT is ignored, as it is for a
    # job a shell starts in the background without job control: Python's
    # own handler is put back for the test.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        _ctrl_c_cancels_the_solve()
    finally:
        signal.signal(signal.SIGINT, previous)


def _ctrl_c_cancels_the_solve():
    p = minimalloc.read_csv(LONG_SEARCH, LONG_CAPACITY)
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        p.solve(strategy="exact")
    assert time.monotonic() - start < 30
    # The problem is free again.
    p.add(0, 1, 1)


def test_ctrl_c_while_the_solve_thread_starts_still_cancels_it(monkeypatch):
    # Ctrl-C can land while the helper thread starts (Thread.start waits
    # for it): the solve must still be cancelled and waited for, not left
    # running on a problem the caller may change again.
    real_start = threading.Thread.start

    def start_then_interrupt(self):
        real_start(self)
        if self.name == "minimalloc-solve":
            raise KeyboardInterrupt

    monkeypatch.setattr(threading.Thread, "start", start_then_interrupt)
    p = minimalloc.read_csv(LONG_SEARCH, LONG_CAPACITY)
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        p.solve(strategy="exact")
    assert time.monotonic() - start < 30
    assert not [t for t in threading.enumerate() if t.name == "minimalloc-solve"]
    p.add(0, 1, 1)


def test_the_gil_is_released_and_threads_solve_at_once():
    p = minimalloc.read_csv(LONG_SEARCH, LONG_CAPACITY)
    ticks = [0]
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks[0] += 1
            time.sleep(0.001)

    counter = threading.Thread(target=count)
    counter.start()
    r = p.solve(strategy="exact", timeout=0.5)
    done.set()
    counter.join()
    assert r.status is Status.TIMED_OUT
    assert ticks[0] > 50, "Python threads did not run during the solve"
    # A problem cannot change while being solved.
    results = []

    def solve():
        lower, upper, size = PAPER
        results.append(minimalloc.plan(lower, upper, size, capacity=12, minimize=True, seed=1))

    threads = [threading.Thread(target=solve) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 8
    for r in results:
        check_placement(*PAPER, r.offsets, capacity=12)
        assert np.array_equal(r.offsets, results[0].offsets)


def test_a_problem_does_not_change_while_it_is_solved():
    p = minimalloc.read_csv(LONG_SEARCH, LONG_CAPACITY)
    token = CancelToken()
    worker = threading.Thread(target=lambda: p.solve(strategy="exact", cancel=token))
    worker.start()
    try:
        # Wait for the solve to begin (a loaded machine may start it late).
        deadline = time.monotonic() + 30
        while not p._solving and time.monotonic() < deadline:
            time.sleep(0.01)
        with pytest.raises(minimalloc.MinimallocError, match="cannot change while it is being solved"):
            p.add(0, 1, 1)
    finally:
        token.cancel()
        worker.join()
    p.add(0, 1, 1)


def test_the_readme_example_runs():
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Python") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    exec(compile(code, "README.md", "exec"), {})


def test_version_matches_the_library():
    assert re.fullmatch(r"\d+\.\d+\.\d+", minimalloc.__version__)
    assert minimalloc.version() == minimalloc.__version__
