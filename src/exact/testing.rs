//! Random problems for the tests of the exact searches (the sweep's and
//! those on conflict graphs), and the check that calls resumed on a memo
//! decide as one call does.

use alloc::vec::Vec;

#[cfg(feature = "heuristics")]
use super::{Params, Stats, Verdict};
use crate::base::math::align_up;
use crate::base::rng::Rng;
#[cfg(feature = "heuristics")]
use crate::deadline::Deadline;
use crate::model::problem::{Buffer, Gap, Problem};

/// Whether `offsets` is a valid placement of `problem` whose every
/// buffer ends within `capacity`.
pub(crate) fn fits(problem: &Problem, offsets: &[i64], capacity: i64) -> bool {
    let solution = crate::model::solution::Solution {
        offsets: offsets.to_vec(),
    };
    let mut tops = offsets
        .iter()
        .zip(problem.buffers())
        .map(|(o, b)| o + b.size);
    crate::model::solution::validate(problem, &solution).is_ok() && tops.all(|t| t <= capacity)
}

/// A small random problem with gaps (no windows) and alignments, some
/// buffers fixed: what lowered separations look like, and more.
pub(crate) fn gapped(rng: &mut Rng) -> Problem {
    let n = rng.below(1, 9) as usize;
    let mut buffers = Vec::new();
    for i in 0..n {
        let lower = rng.below(0, 12);
        let upper = lower + rng.below(1, 10);
        let mut b = Buffer::new(alloc::format!("{i}"), lower, upper, rng.below(1, 7));
        b.alignment = [1, 1, 2, 4][rng.below(0, 4) as usize];
        b.size = align_up(b.size, b.alignment);
        if upper - lower >= 3 && rng.below(0, 2) == 0 {
            let g = rng.below(lower + 1, upper - 1);
            b.gaps.push(Gap {
                lower: g,
                upper: rng.below(g + 1, upper),
                window: None,
            });
        }
        if rng.below(0, 8) == 0 {
            b.offset = Some(b.alignment * rng.below(0, 4));
        }
        buffers.push(b);
    }
    let capacity = buffers
        .iter()
        .map(|b| b.offset.unwrap_or(0) + b.size)
        .max()
        .unwrap_or(1)
        .max(rng.below(4, 24));
    match Problem::new(capacity, buffers) {
        Ok(p) => p,
        Err(_) => Problem::new(capacity, Vec::new()).unwrap(),
    }
}

/// A kernel whose optimum is known by construction: buffers on a 32-byte
/// grid placed first, in `capacity` bytes, where a stack of buffers at
/// time 0 fills all of them (so no placement is lower); then random
/// buffers wherever they meet nothing placed; then about half of the
/// pairs whose planted bytes are disjoint separated (so the planted
/// placement stays valid and the conflict graph is dense). Returns the
/// problem at that capacity.
pub(crate) fn planted(rng: &mut Rng, n: usize) -> Problem {
    const GRID: i64 = 32;
    let slots = rng.below(32, 128);
    let capacity = slots * GRID;
    // (offset, top, lower, upper) of each planted buffer.
    let mut placed: Vec<(i64, i64, i64, i64)> = Vec::new();
    let mut at = 0;
    while at < slots {
        let size = rng.below(1, (slots - at).min(24) + 1);
        placed.push((at * GRID, (at + size) * GRID, 0, rng.below(1, 6)));
        at += size;
    }
    let mut tries = 0;
    while placed.len() < n && tries < 100 * n {
        tries += 1;
        let (o, size) = (rng.below(0, slots), rng.below(1, 24));
        let (o, top) = (o * GRID, (o + size).min(slots) * GRID);
        let lower = rng.below(0, 20);
        let upper = lower + rng.below(1, 8);
        let clash = placed
            .iter()
            .any(|&(a, b, l, u)| a < top && o < b && l < upper && lower < u);
        if !clash {
            placed.push((o, top, lower, upper));
        }
    }
    let buffers = placed
        .iter()
        .enumerate()
        .map(|(i, &(o, top, lower, upper))| {
            let mut b = Buffer::new(alloc::format!("{i}"), lower, upper, top - o);
            b.alignment = GRID;
            b
        })
        .collect();
    let mut problem = Problem::new(capacity, buffers).expect("a planted kernel is valid");
    for a in 0..placed.len() {
        for b in a + 1..placed.len() {
            let ((oa, ta, _, _), (ob, tb, _, _)) = (placed[a], placed[b]);
            if (ta <= ob || tb <= oa) && rng.below(0, 2) == 0 {
                problem.separate(&[a, b]).expect("two buffers");
            }
        }
    }
    problem
}

/// Calls of the search at each of `capacities`, alternating, each cut
/// short by a node limit that starts at `first` and doubles per call,
/// until every capacity is answered; on one memo for all the calls if
/// `remembering`, else each on a memo of its own; `solve` is the search
/// with its memo (the sweep's, or the turns on a conflict graph). The
/// answers, and per capacity how many calls it took and their nodes in all.
#[cfg(feature = "heuristics")]
pub(crate) fn answered_in_calls<Memo: Default>(
    problem: &Problem,
    capacities: [i64; 2],
    (params, first, remembering): (&Params, u64, bool),
    solve: impl Fn(&Problem, i64, &Params, &Deadline<'_>, &mut Memo) -> (Verdict, Stats),
) -> ([Verdict; 2], [u32; 2], [u64; 2]) {
    let deadline = Deadline::new(None, None, None);
    let mut memo = Memo::default();
    let (mut calls, mut nodes, mut limits) = ([0u32; 2], [0u64; 2], [first; 2]);
    let mut answers: [Option<Verdict>; 2] = [None, None];
    while answers.iter().any(Option::is_none) {
        for k in 0..2 {
            if answers[k].is_some() {
                continue;
            }
            if !remembering {
                memo = Memo::default();
            }
            let limited = Params {
                node_limit: Some(limits[k]),
                ..params.clone()
            };
            let (verdict, stats) = solve(problem, capacities[k], &limited, &deadline, &mut memo);
            calls[k] += 1;
            nodes[k] += stats.nodes;
            limits[k] *= 2;
            if verdict != Verdict::NodeLimit {
                answers[k] = Some(verdict);
            }
        }
    }
    (answers.map(|a| a.expect("answered")), calls, nodes)
}

/// Panics unless `got` decides as `one` at `capacity`: a valid placement
/// below it where `one` places, the same verdict elsewhere.
#[cfg(feature = "heuristics")]
pub(crate) fn assert_decides_as(
    problem: &Problem,
    capacity: i64,
    (one, got): (&Verdict, &Verdict),
    what: &str,
) {
    match (one, got) {
        (Verdict::Solved(_), Verdict::Solved(offsets)) => {
            assert!(fits(problem, offsets, capacity), "{what} at {capacity}")
        }
        (one, got) => assert_eq!(one, got, "{what} at {capacity}"),
    }
}
