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
//! windows may fit interleaved instead; [`crate::sweep::Sweep::interleaving`]
//! counts such pairs. With any of them an exhausted search is reported as
//! [`Verdict::Exhausted`], not as a proof.
//!
//! # Conflict graphs
//! With [`Params::conflict_graph`], small problems with gaps but no
//! windows (a kernel's separations, lowered to moments) are searched on
//! the graph of which buffers conflict too (see `graph`), and a walk over
//! orders on that graph (see `walk`) looks for a placement between the
//! exact turns: it finds placements at the heaviest clique where the
//! depth-first searches get lost in a dense graph, and proves nothing.

#[cfg(feature = "constraints")]
mod conflicts;
#[cfg(feature = "constraints")]
mod failed;
#[cfg(feature = "constraints")]
mod graph;
#[cfg(all(feature = "constraints", feature = "heuristics"))]
mod graph_walk;
#[cfg(feature = "constraints")]
mod grow;
mod memo;
mod order;
mod params;
mod rounds;
pub(crate) mod search;
#[cfg(all(feature = "constraints", feature = "heuristics"))]
mod tabu;
#[cfg(all(test, feature = "constraints"))]
mod testing;
#[cfg(feature = "constraints")]
mod turns;
#[cfg(feature = "constraints")]
mod walk;

use alloc::vec;
use alloc::vec::Vec;
use core::time::Duration;

#[cfg(all(feature = "constraints", feature = "heuristics"))]
pub(crate) use graph_walk::GraphWalk;
pub(crate) use memo::Memo;
pub use order::{BadPreorder, Key, Preorder};
use order::{Orderings, Traits};
pub use params::Params;
use rounds::{solve_part, Rotation};
use search::{RunEnd, Search, FREE};
#[cfg(feature = "constraints")]
use turns::{Turn, Turns, KINDS};

use crate::deadline::{Deadline, Poll, Stop};
use crate::model::buffer::Buffer;
use crate::model::problem::Problem;
use crate::sweep::{self, Sweep};

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
/// problem's own). Deterministic for given inputs.
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
        (Rotation::Turns, memo),
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
    (rotation, memo): (Rotation, &mut Memo),
) -> Verdict {
    let mut poll = Poll::new(deadline, 1 << 16);
    if let Err(stop) = poll.now() {
        return Verdict::Stopped(stop);
    }
    let buffers = problem.buffers();
    for b in buffers {
        let fits = match b.offset {
            Some(f) => f.checked_add(b.size).is_some_and(|e| e <= capacity),
            None => b.size <= capacity,
        };
        if !fits {
            return Verdict::Infeasible;
        }
    }
    let sweep = match sweep::sweep(problem, &mut poll) {
        Ok(s) => s,
        Err(stop) => return Verdict::Stopped(stop),
    };
    // Where the sweep's runs stood in each partition at this capacity.
    #[cfg(feature = "heuristics")]
    let mut positions = memo.positions.take(capacity).unwrap_or_default();
    #[cfg(feature = "heuristics")]
    positions.resize(sweep.partitions.len(), None);
    #[cfg(not(feature = "heuristics"))]
    let mut positions: [Option<rounds::Position>; 0] = [];
    #[cfg(not(any(feature = "constraints", feature = "heuristics")))]
    let _ = memo;
    // (Only separations make problems the graph suits: no graph without
    // them, as in the tiny build.)
    #[cfg(feature = "constraints")]
    let verdict = if params.conflict_graph && graph::applies(problem) {
        let failed = memo.failed.get_or_insert_with(failed::Failed::new);
        let turns = memo
            .turns
            .take(capacity)
            .unwrap_or_else(|| Turns::new(problem, capacity));
        let kept = (failed, &mut positions[..], turns);
        let (verdict, turns) =
            both_searches((problem, &sweep), capacity, params, kept, &mut poll, stats);
        if let Some(turns) = turns {
            memo.turns.put(capacity, turns);
        }
        verdict
    } else {
        let turns = (rotation, &mut positions[..]);
        search_sweep(problem, &sweep, capacity, params, &mut poll, stats, turns)
    };
    #[cfg(not(feature = "constraints"))]
    let verdict = {
        let turns = (rotation, &mut positions[..]);
        search_sweep(problem, &sweep, capacity, params, &mut poll, stats, turns)
    };
    #[cfg(feature = "heuristics")]
    memo.positions.put(capacity, positions);
    if let Verdict::Stopped(_) = verdict {
        sweep.discard();
    }
    verdict
}

#[cfg(feature = "constraints")]
/// The search on growing parts of the conflict graph, the graph's search
/// on the whole, the walk and the sweep's search, in turns of doubling
/// node budgets (from 1,024; the walk's in the same units of work as the
/// graph's nodes): the searches are exact (a part proves only what holds
/// for the whole), so the first to settle the question answers it, and a
/// placement the walk finds does; together they take at most about eight
/// times the nodes the best needs. Within `params.node_limit` in all. The
/// parts go first: on the kernels bench (120 at 1 s) they proved 2 more
/// than with the whole graph first (104 against 102), and the whole
/// graph's search before the sweep proved 3 more of 80 kernels (50
/// against 47); what the sweep settles in a few hundred nodes (larger,
/// sparser kernels) waits 2,048 nodes of the others. The turns go on
/// from where the last call at this capacity left them (`turns`, and the
/// sweep's `positions`); where they stand is returned to be kept when
/// the call ends unanswered.
fn both_searches(
    (problem, sweep): (&Problem, &Sweep),
    capacity: i64,
    params: &Params,
    (failed, positions, mut turns): (&mut failed::Failed, &mut [Option<rounds::Position>], Turns),
    poll: &mut Poll<'_>,
    stats: &mut Stats,
) -> (Verdict, Option<Turns>) {
    // The graph's turns share what they exhaust (see `failed`), with the
    // calls before this one.
    let (mut nodes, mut backtracks) = (0u64, 0u64);
    let mut turn = params.clone();
    let verdict = 'turns: loop {
        while turns.next < KINDS.len() {
            let kind = KINDS[turns.next];
            let left = params.node_limit.map(|l| l.saturating_sub(nodes));
            if left == Some(0) {
                break 'turns Verdict::NodeLimit;
            }
            let limit = left.map_or(turns.budget, |l| l.min(turns.budget));
            stats.nodes = 0;
            stats.backtracks = 0;
            let Turns {
                graph,
                walk,
                grow,
                seed,
                ..
            } = &mut turns;
            let verdict = match kind {
                Turn::Sweep => {
                    turn.node_limit = Some(limit);
                    let runs = (Rotation::Turns, &mut *positions);
                    search_sweep(problem, sweep, capacity, &turn, poll, stats, runs)
                }
                Turn::Walk => {
                    let weight = graph.node_weight();
                    let (walked, work) = walk.run(graph, (limit.saturating_mul(weight), 0), poll);
                    stats.nodes = work / weight;
                    match walked {
                        walk::Walked::Found(offsets) => Verdict::Solved(offsets),
                        walk::Walked::Stopped(stop) => Verdict::Stopped(stop),
                        // (Asked for no height, it reports none lower.)
                        _ => Verdict::NodeLimit,
                    }
                }
                Turn::Grow => {
                    let (grown, used) = grow.run((problem, graph), capacity, (limit, *seed), poll);
                    stats.nodes = used;
                    match grown {
                        grow::Grown::Found(offsets) => Verdict::Solved(offsets),
                        grow::Grown::Infeasible => Verdict::Infeasible,
                        grow::Grown::NodeLimit => Verdict::NodeLimit,
                        grow::Grown::Stopped(stop) => Verdict::Stopped(stop),
                    }
                }
                Turn::Graph => {
                    let searched = graph::search(
                        (problem, graph),
                        capacity,
                        (Some(limit), *seed),
                        failed,
                        poll,
                    );
                    *seed += 1;
                    stats.nodes = searched.nodes;
                    stats.backtracks = searched.backtracks;
                    match searched.end {
                        graph::End::Found(offsets) => Verdict::Solved(offsets),
                        graph::End::Infeasible => Verdict::Infeasible,
                        graph::End::NodeLimit => Verdict::NodeLimit,
                        graph::End::Stopped(stop) => Verdict::Stopped(stop),
                    }
                }
            };
            nodes += stats.nodes;
            backtracks += stats.backtracks;
            if verdict != Verdict::NodeLimit {
                break 'turns verdict;
            }
            // A turn the call's limit cut short ends the call, and is the
            // next call's first (run again whole: a turn may give back
            // nodes unspent, or none, as a walk that cannot run does, and
            // would else be run again at once on what is left, forever).
            if limit < turns.budget {
                break 'turns Verdict::NodeLimit;
            }
            turns.next += 1;
        }
        turns.next = 0;
        turns.budget = turns.budget.saturating_mul(2);
    };
    stats.nodes = nodes;
    stats.backtracks = backtracks;
    // Unanswered, the turns are kept, stopped ones too: the walk stops
    // between its steps, and a part's search between nodes (its table
    // holds only states searched to the end), so they stand as a longer
    // call would find them. (Where the exact search has a core of its
    // own, its attempts end by their share of the time, stopped.)
    let keep = matches!(verdict, Verdict::NodeLimit | Verdict::Stopped(_));
    (verdict, keep.then_some(turns))
}

/// Runs the search on a sweep of `problem`.
fn search_sweep(
    problem: &Problem,
    sweep: &Sweep,
    capacity: i64,
    params: &Params,
    poll: &mut Poll<'_>,
    stats: &mut Stats,
    (rotation, resumes): (Rotation, &mut [Option<rounds::Position>]),
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
        let verdict = solve_part(
            &mut search,
            (part, shaken, rotation),
            problem,
            capacity,
            (&mut budget, resume),
            poll,
            (&mut stats.solved_by, &mut stats.shaken),
        );
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
