//! The exact MiniMalloc search.
//!
//! # What it searches
//! Sort any solution by offset (ties by a static rank) and push every
//! buffer down as far as it goes, jumping over others when a lower place is
//! free ("jump-compacted"). Then each buffer sits at its *min offset*: the
//! lowest aligned offset above the buffers before it that it overlaps. So
//! the search only ever places a buffer at its min offset, and only in
//! increasing order of `(offset, rank)`: the *canonical* partial solutions.
//! If a solution exists, a jump-compacted one does, and the search meets it.
//!
//! # What it prunes (each rule keeps every jump-compacted solution)
//! - *Section inference*: the unplaced pieces of a section lie one above the
//!   other above the section's floor (the top of its highest placed piece)
//!   and above its *effective floor* (the lowest min offset of its unplaced
//!   members); if they cannot fit below the capacity, backtrack.
//! - *Monotonic floor*: everything still to place goes at or above the
//!   offset just used, so that offset plus the largest unplaced section
//!   total must fit.
//! - *Dominance*: never place a buffer at or above the lowest possible top
//!   of another unplaced buffer, which could then drop below it.
//! - *Hatless pruning*: if a buffer that overlaps no unplaced buffer fails,
//!   its siblings fail too (it would have to come first in any of them).
//! - *Dynamic decomposition*: when no unplaced buffer crosses a section
//!   boundary any more, the two sides are independent and are solved one
//!   after the other; the failure of one is final.
//!
//! Static preorderings decide the rank; several are tried round-robin with
//! a node limit that doubles every round, per partition.
//!
//! # Gap windows
//! The search stacks overlapping buffers: the one placed later lies above
//! each piece of the other it meets. Two buffers that meet only through gap
//! windows may fit interleaved instead; [`crate::exact::sweep::Sweep::interleaving`]
//! counts such pairs. With any of them an exhausted search is reported as
//! [`Verdict::Exhausted`], not as a proof.
//!
//! # Conflict graphs
//! The searches on the conflict graph (`graph`) take turns with this one
//! on small problems whose separations the sweep's sections say little
//! about; they call `search_sweep` for its turns.

mod memo;
mod order;
mod params;
pub(crate) mod rounds;
pub(crate) mod search;
pub mod sweep;
#[cfg(test)]
pub(crate) mod testing;

use alloc::vec;
use alloc::vec::Vec;
use core::time::Duration;

pub(crate) use memo::Memo;
#[cfg(feature = "constraints")]
pub(crate) use memo::Recent;
pub use order::{BadPreorder, Key, Preorder};
use order::{Orderings, Traits};
pub use params::Params;
pub(crate) use rounds::Rotation;
use rounds::{solve_part, PartRuns};
use search::{RunEnd, Search, FREE};

use crate::deadline::{Deadline, Poll, Stop};
use crate::model::buffer::Buffer;
use crate::model::problem::Problem;
use sweep::Sweep;

/// What the search did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Search nodes visited (placements that passed every check, plus roots).
    pub nodes: u64,
    /// Nodes all of whose candidates failed.
    pub backtracks: u64,
    /// Wall time, set-up included (zero without a clock).
    pub elapsed: Duration,
    /// Sections of the sweep.
    pub sections: usize,
    /// Independent partitions in time.
    pub partitions: usize,
    /// For each ordering tried, how many partitions it solved.
    pub solved_by: Vec<(Preorder, u32)>,
    /// Partitions solved by a shaken ordering, in a short restart (where
    /// the orderings take turns).
    pub shaken: u32,
    /// Overlapping pairs that gap windows let interleave.
    pub interleaving: u64,
    /// A lower bound on any height: the most memory alive at one time and
    /// the highest fixed buffer's top (0 if the search stopped before its
    /// sweep).
    pub lower_bound: i64,
}

/// How an exact search ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// An offset per buffer.
    Solved(Vec<i64>),
    /// Proven: no placement fits the capacity.
    Infeasible,
    /// No stacked placement fits, but gap windows might let buffers
    /// interleave, so this is no proof.
    Exhausted,
    /// The node limit ran out.
    NodeLimit,
    /// The deadline passed or the search was cancelled.
    Stopped(Stop),
}

/// Searches for offsets that fit `capacity` (which may differ from the
/// problem's own) with the sweep's search. Deterministic for given inputs.
/// (Problems that suit a conflict graph are searched on it as well by
/// `graph::solve`, which the planner calls.)
// (With the constraints and no heuristics, only the graph's turns call the
// sweep's search, through `search_sweep`.)
#[cfg_attr(
    all(feature = "constraints", not(feature = "heuristics")),
    allow(dead_code)
)]
pub fn solve(
    problem: &Problem,
    capacity: i64,
    params: &Params,
    deadline: &Deadline<'_>,
) -> (Verdict, Stats) {
    solve_remembering(problem, capacity, params, deadline, &mut Memo::default())
}

/// [`solve`], with what calls before it on the same problem kept in
/// `memo` (a memo is never shared between problems). Inlined: the tiny
/// build, where the memo is empty, stays the size it was.
#[inline(always)]
pub(crate) fn solve_remembering(
    problem: &Problem,
    capacity: i64,
    params: &Params,
    deadline: &Deadline<'_>,
    memo: &mut Memo,
) -> (Verdict, Stats) {
    let mut stats = Stats::default();
    let verdict = solve_into(
        problem,
        capacity,
        params,
        deadline,
        &mut stats,
        Rotation::Turns,
        memo,
    );
    stats.elapsed = deadline.elapsed();
    (verdict, stats)
}

fn solve_into(
    problem: &Problem,
    capacity: i64,
    params: &Params,
    deadline: &Deadline<'_>,
    stats: &mut Stats,
    rotation: Rotation,
    memo: &mut Memo,
) -> Verdict {
    let mut poll = Poll::new(deadline, 1 << 16);
    if let Err(stop) = poll.now() {
        return Verdict::Stopped(stop);
    }
    if !fits_below(problem, capacity) {
        return Verdict::Infeasible;
    }
    let sweep = match sweep::sweep(problem, &mut poll) {
        Ok(s) => s,
        Err(stop) => return Verdict::Stopped(stop),
    };
    #[cfg(feature = "heuristics")]
    let mut positions = memo.take(capacity, sweep.partitions.len());
    // (The tiny build keeps none.)
    #[cfg(not(feature = "heuristics"))]
    let (mut positions, _) = ([] as [Option<rounds::Position>; 0], memo);
    let runs = Runs {
        rotation,
        resumes: &mut positions[..],
    };
    let verdict = search_sweep(problem, &sweep, capacity, params, &mut poll, stats, runs);
    #[cfg(feature = "heuristics")]
    memo.put(capacity, positions);
    if let Verdict::Stopped(_) = verdict {
        sweep.discard();
    }
    verdict
}

/// What every exact search does first: stop if the deadline has passed,
/// refuse a capacity some buffer cannot fit below, and sweep the problem.
#[cfg(feature = "constraints")]
pub(crate) fn prepare(
    problem: &Problem,
    capacity: i64,
    poll: &mut Poll<'_>,
) -> Result<Sweep, Verdict> {
    poll.now().map_err(Verdict::Stopped)?;
    if !fits_below(problem, capacity) {
        return Err(Verdict::Infeasible);
    }
    sweep::sweep(problem, poll).map_err(Verdict::Stopped)
}

/// Whether every buffer fits below `capacity` (a fixed one where it is
/// fixed).
fn fits_below(problem: &Problem, capacity: i64) -> bool {
    problem.buffers().iter().all(|b| match b.offset {
        Some(f) => f.checked_add(b.size).is_some_and(|e| e <= capacity),
        None => b.size <= capacity,
    })
}

/// Which runs a sweep's search makes, and where an earlier call at the
/// same capacity left each partition's (one entry a partition; empty in
/// the tiny build, which keeps none).
pub(crate) struct Runs<'a> {
    pub(crate) rotation: Rotation,
    pub(crate) resumes: &'a mut [Option<rounds::Position>],
}

/// Runs the search on a sweep of `problem`.
pub(crate) fn search_sweep(
    problem: &Problem,
    sweep: &Sweep,
    capacity: i64,
    params: &Params,
    poll: &mut Poll<'_>,
    stats: &mut Stats,
    Runs { rotation, resumes }: Runs<'_>,
) -> Verdict {
    let buffers = problem.buffers();
    stats.sections = sweep.sections;
    stats.partitions = sweep.partitions.len();
    stats.interleaving = sweep.interleaving;
    stats.lower_bound = sweep.totals.iter().copied().max().unwrap_or(0);
    let inexact = if sweep.interleaving > 0 {
        Verdict::Exhausted
    } else {
        Verdict::Infeasible
    };

    let preorders: Vec<Preorder> = if params.static_preordering && !params.preorders.is_empty() {
        params.preorders.clone()
    } else {
        vec![Preorder::of(&[])]
    };
    let traits = Traits::of(problem, sweep);
    let mut ranks = match rankings(problem.len(), &preorders, &traits, params, poll) {
        Ok(ranks) => ranks,
        Err(stop) => return Verdict::Stopped(stop),
    };
    stats.solved_by = preorders.iter().map(|&p| (p, 0)).collect();
    // Where the orderings take turns, one more: theirs shaken, for short
    // restarts (see `rounds::solve_part`). It has no keys, so the search never
    // reranks it by totals.
    let mut preorders = preorders;
    let restarts = preorders.len() > 1 && params.shaken_restarts;
    let shaken = (restarts || rotation == Rotation::ShakenOnly).then(|| {
        preorders.push(Preorder::of(&[]));
        ranks.push(ranks[0].clone());
        preorders.len() - 1
    });

    let n = buffers.len();
    let (mut size, mut align, mut fixed) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for b in buffers {
        size.push(b.size);
        align.push(b.alignment);
        fixed.push(b.offset.unwrap_or(FREE));
        if let Some(f) = b.offset {
            stats.lower_bound = stats.lower_bound.max(f + b.size);
        }
    }
    let orderings = Orderings {
        preorders: &preorders,
        traits: &traits,
        ranks,
    };
    let mut search = Search::new(sweep, params, &size, &align, fixed, capacity, orderings);
    if let Err(stop) = search.init(poll) {
        return Verdict::Stopped(stop);
    }
    let mut budget = params.node_limit.unwrap_or(u64::MAX);

    for (i, part) in search.partitions().into_iter().enumerate() {
        if part.len == 0 {
            continue;
        }
        // (The tiny build keeps no positions.)
        let mut none = None;
        let resume = resumes.get_mut(i).unwrap_or(&mut none);
        let runs_of = PartRuns {
            part,
            shaken,
            rotation,
            budget: &mut budget,
            resume,
            solved_by: &mut stats.solved_by,
            shaken_solved: &mut stats.shaken,
        };
        let verdict = solve_part(&mut search, runs_of, problem, capacity, poll);
        stats.nodes = search.nodes;
        stats.backtracks = search.backtracks;
        match verdict {
            RunEnd::Solved => {}
            RunEnd::Infeasible => return inexact,
            RunEnd::NodeLimit => return Verdict::NodeLimit,
            RunEnd::Stopped(stop) => return Verdict::Stopped(stop),
        }
    }

    Verdict::Solved(with_pieceless(buffers, search.offset.clone(), capacity))
}

/// Each preorder's ranking of the buffers (identity without static
/// preordering).
fn rankings(
    n: usize,
    preorders: &[Preorder],
    traits: &[Traits],
    params: &Params,
    poll: &mut Poll<'_>,
) -> Result<Vec<Vec<u32>>, Stop> {
    preorders
        .iter()
        .map(|p| match params.static_preordering {
            true => p.ranks(traits, poll),
            false => Ok((0..n as u32).collect()),
        })
        .collect()
}

/// `offsets` with the buffers that have no live piece (the search never
/// saw them) at their fixed offset, their hint if it fits, or 0.
fn with_pieceless(buffers: &[Buffer], mut offsets: Vec<i64>, capacity: i64) -> Vec<i64> {
    for (b, o) in buffers.iter().zip(&mut offsets) {
        if *o == search::UNPLACED {
            *o = b
                .offset
                .or(b
                    .hint
                    .filter(|h| h.checked_add(b.size).is_some_and(|e| e <= capacity)))
                .unwrap_or(0);
        }
    }
    offsets
}
