"""Colocations, separations, pools and conflicts from Python."""

from __future__ import annotations

import numpy as np
import pytest

import minimalloc
from minimalloc import InvalidInputError, Problem, Status

from conftest import PAPER, ROOT, check_placement


def test_colocated_buffers_alias_and_separated_ones_do_not_meet():
    # x and x2 alias (an in-place update); y lives beside both.
    p = Problem(8)
    p.add_many([0, 2, 0], [4, 6, 6], [4, 4, 4])
    assert p.solve().status is Status.INFEASIBLE
    p.colocate([0, 1])
    r = p.solve(check=True)
    assert r.offsets[0] == r.offsets[1]
    check_placement([0, 0], [6, 6], [4, 4], r.offsets[1:], capacity=8)
    # a and b never live together, but may not share a byte.
    q = Problem(4)
    q.add_many([0, 5], [2, 9], [2, 2])
    q.separate([0, 1])
    r = q.solve(check=True)
    assert abs(int(r.offsets[0]) - int(r.offsets[1])) >= 2


def test_links_that_cannot_hold_raise():
    p = Problem(16)
    p.add_many([0, 1, 1], [2, 3, 3], [4, 4, 4])
    p.fix(0, 0)
    p.fix(1, 4)
    with pytest.raises(InvalidInputError, match="fixed at different offsets, 0 and 4"):
        p.colocate([0, 1])
    with pytest.raises(InvalidInputError, match="does not exist"):
        p.colocate([0, 9])
    p.separate([0, 2])
    with pytest.raises(InvalidInputError, match="both colocated and separated"):
        p.colocate([2, 0])


def test_an_infeasible_fit_names_its_conflict():
    r = minimalloc.plan(*PAPER, capacity=11)
    assert r.status is Status.INFEASIBLE
    assert list(r.conflict) == [0, 2, 4] and r.conflict_irreducible
    assert minimalloc.plan(*PAPER, capacity=12).conflict is None


def test_pools_spill_and_report():
    p = Problem()
    p.add_many([0, 0, 5, 0, 2], [10, 5, 10, 10, 8], [600, 200, 200, 300, 100])
    sram = p.add_pool("sram", 512, base=0x1000, alignment=64)
    dram = p.add_pool("dram", 4096, base=0x100000, alignment=64)
    assert (sram, dram) == (0, 1) and p.pool_names == ["sram", "dram"]
    r = p.solve(check=True)
    assert r.pool_of[0] == dram  # 600 bytes never fit 512
    assert [rep.name for rep in r.pools] == ["sram", "dram"]
    for pool, base, cap in [(sram, 0x1000, 512), (dram, 0x100000, 4096)]:
        members = np.flatnonzero(r.pool_of == pool)
        offsets = r.offsets[members] - base
        assert all(o % 64 == 0 for o in offsets)
        lower, upper, size, _ = p.columns()
        top = check_placement(list(lower[members]), list(upper[members]), list(size[members]), offsets, capacity=cap)
        assert r.pools[pool].height == top and r.pools[pool].buffers == len(members)
        assert r.pools[pool].lower_bound <= top
    with pytest.raises(InvalidInputError, match="capacity must be positive"):
        p.add_pool("bad", 0)
    with pytest.raises(InvalidInputError, match="pool 7 does not exist"):
        p.set_pools(0, [7])
    p.set_pools(0, [sram])
    r = p.solve()
    assert r.status is Status.INFEASIBLE and r.offsets is None


def test_read_and_write_the_commands_csv_unchanged(tmp_path):
    """tests/data/links.csv (the command's own grammar: a hint of -1 for
    none, gaps with a window, colocation and separation labels) reads into
    the same groups as the command reads, and writes back as the same
    text (the Rust test reads and writes the same file)."""
    path = ROOT / "tests" / "data" / "links.csv"
    problem = minimalloc.read_csv(path, 128)
    assert problem._hints == {1: 0, 4: 32}
    assert problem.links() == ([[0, 1], [4, 5]], [[0, 2, 5], [2, 3]])
    out = tmp_path / "out.csv"
    minimalloc.write_csv(out, problem)
    assert out.read_text() == path.read_text()
    result = problem.solve()
    assert result.solved
    offsets = result.offsets
    assert offsets[0] == offsets[1] and offsets[4] == offsets[5]
    for group in ([0, 2, 5], [2, 3]):
        for i in group:
            for j in group:
                if i < j:
                    assert (
                        offsets[i] + problem.columns()[2][i] <= offsets[j]
                        or offsets[j] + problem.columns()[2][j] <= offsets[i]
                    )


def test_read_csv_with_pools_and_columns_it_does_not_know(tmp_path):
    """A pools column names pools given to read_csv; an unknown column is
    ignored, as the command keeps it without reading it."""
    path = tmp_path / "pools.csv"
    path.write_text("id,lower,upper,size,pools,note\na,0,2,8,fast slow,x\nb,1,3,8,slow,y\n")
    problem = minimalloc.read_csv(path, 100, pools=[("fast", 8), ("slow", 64, 1024)])
    assert problem.pool_names == ["fast", "slow"]
    result = problem.solve()
    assert result.solved
    with pytest.raises(minimalloc.InvalidInputError, match="no pool named 'slow'"):
        minimalloc.read_csv(path, 100, pools=[("fast", 8)])


def test_extremes_are_refused_or_placed_validly():
    """Sizes, alignments and bases at the edge of 64 bits: a problem whose
    total could overflow is refused with a message naming the buffer,
    never placed wrongly; what is accepted is placed validly."""
    big = 2**63 - 1
    p = Problem()
    p.add(0, 2, big)
    with pytest.raises(InvalidInputError, match="buffer 1: size .* passes 2\\^63 - 1"):
        p.add(0, 2, big)
    assert len(p) == 1
    result = p.solve(minimize=True, check=True)
    assert result.solved and list(result.offsets) == [0] and result.height == big

    p = Problem()
    p.add(0, 2, 2**62)
    with pytest.raises(InvalidInputError, match="buffer 1"):
        p.add(0, 2, 2**62)
    with pytest.raises(InvalidInputError, match="buffer 1"):
        p.add(2, 4, 2**62)  # not alive with the first: the bound is the total

    p = Problem(big)
    p.add(0, 1, 8)
    with pytest.raises(InvalidInputError, match="base address .* overflows"):
        p.solve(base=big)
    result = p.solve(base=big - 8, check=True)
    assert result.solved and list(result.offsets) == [big - 8]

    p = Problem(big)
    p.add(0, 1, 8, 2**62)
    with pytest.raises(InvalidInputError, match="alignment padding"):
        p.add(0, 1, 8, 2**62)
    for capacity in (1, big):
        q = Problem(capacity)
        q.add(0, 1, 1, 1)
        assert q.solve(check=True).solved


def test_penalties_read_written_and_paid_as_the_command_does(tmp_path):
    """tests/data/penalty.csv (the command's grammar: label:cost tokens)
    reads into the same penalised pairs and writes back as the same text;
    penalty=True keeps the dear pair apart and proves what it pays; the
    penalty is what the placement pays, from the definition."""
    path = ROOT / "tests" / "data" / "penalty.csv"
    problem = minimalloc.read_csv(path, 128)
    assert problem.penalties() == [(0, 1, 5), (1, 2, 1)]
    out = tmp_path / "out.csv"
    minimalloc.write_csv(out, problem)
    assert out.read_text() == path.read_text()
    result = problem.solve(penalty=True, check=True)
    lower, upper, size, _ = problem.columns()
    check_placement(list(lower), list(upper), list(size), result.offsets, capacity=128)
    o = result.offsets
    paid = sum(c for a, b, c in problem.penalties() if o[a] < o[b] + size[b] and o[b] < o[a] + size[a])
    assert result.penalty == paid == 1 and result.penalty_lower_bound == 1 and result.optimal
    fit = problem.solve()
    assert fit.penalty is not None and fit.penalty_lower_bound == 0
    with pytest.raises(InvalidInputError, match="two objectives"):
        problem.solve(penalty=True, minimize=True)
    with pytest.raises(InvalidInputError, match="must not be negative"):
        problem.penalize(0, 1, -1)
    with pytest.raises(InvalidInputError, match="two different buffers"):
        problem.penalize(2, 2, 1)
    assert problem.penalties() == [(0, 1, 5), (1, 2, 1)]
    bad = tmp_path / "bad.csv"
    bad.write_text("id,lower,upper,size,penalty\na,0,2,64,ab:5\nb,2,4,64,ab:6\n")
    with pytest.raises(InvalidInputError, match="line 3, column penalty: penalty 'ab' costs 6 here but 5 on line 2"):
        minimalloc.read_csv(bad, 128)
    bad.write_text("id,lower,upper,size,penalty\na,0,2,64,zz:5\nb,2,4,64,\n")
    with pytest.raises(InvalidInputError, match="names one row"):
        minimalloc.read_csv(bad, 128)
