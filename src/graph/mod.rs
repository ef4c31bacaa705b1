//! The searches on the conflict graph: for small problems whose buffers
//! have gaps but no windows (above all a kernel's separations, lowered to
//! moments after every lifetime, where the sweep's sections say little),
//! which buffers conflict decides the placement. Here: the graph
//! (`conflicts`), the exact search on it (`search`) and on growing parts
//! of it (`grow`), the states they exhausted (`failed`), a walk over
//! orders that places and proves nothing (`walk`), and the turns
//! (`turns`) in which these take turns with the sweep's search of
//! `exact`; and the lower bound from the heaviest clique (`clique`).
//!
//! [`solve`] is the exact call the planner makes: the turns on problems
//! the graph suits, the sweep's search alone elsewhere.

#[cfg(feature = "heuristics")]
pub(crate) mod clique;
pub(crate) mod conflicts;
mod failed;
mod grow;
#[cfg(feature = "constraints")]
pub(crate) mod priced;
pub(crate) mod search;
mod turns;
pub(crate) mod walk;

use crate::deadline::{Deadline, Poll};
use crate::exact::sweep::Sweep;
use crate::exact::{self, rounds, Params, Recent, Rotation, Runs, Stats, Verdict};
use crate::model::problem::Problem;
use search::{Limits, OnGraph};
use turns::{Turn, Turns, KINDS};

/// What calls of the exact search on one problem keep for the calls
/// after them: the sweep's positions (`exact::Memo`), the states the
/// graph's search exhausted, at any capacity, and at each of the last
/// few capacities where the turns stood, with the walk and the growing
/// part they had made (see `exact::memo` for why).
#[derive(Default)]
pub(crate) struct Memo {
    sweep: exact::Memo,
    failed: Option<failed::Failed>,
    /// (Two: a part's table of exhausted states may take megabytes.)
    turns: Recent<Turns, 2>,
}

/// What [`both_searches`] takes from the calls before it.
struct Kept<'a> {
    failed: &'a mut failed::Failed,
    positions: &'a mut [Option<rounds::Position>],
    turns: Turns,
}

/// Searches for offsets that fit `capacity`: with [`Params::conflict_graph`]
/// and a problem the graph suits, the turns of [`both_searches`];
/// elsewhere the sweep's search ([`exact::solve`]). Deterministic for
/// given inputs.
pub fn solve(
    problem: &Problem,
    capacity: i64,
    params: &Params,
    deadline: &Deadline<'_>,
) -> (Verdict, Stats) {
    solve_remembering(problem, capacity, params, deadline, &mut Memo::default())
}

/// [`solve`], with what calls before it on the same problem kept in
/// `memo` (never shared between problems).
pub(crate) fn solve_remembering(
    problem: &Problem,
    capacity: i64,
    params: &Params,
    deadline: &Deadline<'_>,
    memo: &mut Memo,
) -> (Verdict, Stats) {
    if !(params.conflict_graph && search::applies(problem)) {
        return exact::solve_remembering(problem, capacity, params, deadline, &mut memo.sweep);
    }
    let mut stats = Stats::default();
    let mut poll = Poll::new(deadline, 1 << 16);
    let verdict = match exact::prepare(problem, capacity, &mut poll) {
        Err(verdict) => verdict,
        Ok(sweep) => {
            let mut positions = memo.sweep.take(capacity, sweep.partitions.len());
            let kept = Kept {
                failed: memo.failed.get_or_insert_with(failed::Failed::new),
                positions: &mut positions,
                turns: memo
                    .turns
                    .take(capacity)
                    .unwrap_or_else(|| Turns::new(problem, capacity)),
            };
            let (verdict, turns) = both_searches(
                problem, &sweep, capacity, params, kept, &mut poll, &mut stats,
            );
            if let Some(turns) = turns {
                memo.turns.put(capacity, turns);
            }
            memo.sweep.put(capacity, positions);
            if let Verdict::Stopped(_) = verdict {
                sweep.discard();
            }
            verdict
        }
    };
    stats.elapsed = deadline.elapsed();
    (verdict, stats)
}

/// The search on growing parts of the conflict graph, the graph's search
/// on the whole, the walk and the sweep's search, in turns of doubling
/// node budgets (from 1,024; the walk's in the same units of work as the
/// graph's nodes): the searches are exact (a part proves only what holds
/// for the whole), so the first to settle the question answers it, and a
/// placement the walk finds does; together they take at most about eight
/// times the nodes the best needs. Within `params.node_limit` in all. The
/// parts go first, then the whole graph, before the sweep: on the kernels
/// bench that order proved the most (docs/MEASUREMENTS.md in git history); what the sweep
/// settles in a few hundred nodes (larger, sparser kernels) waits 2,048
/// nodes of the others. The turns go on
/// from where the last call at this capacity left them (`turns`, and the
/// sweep's `positions`); where they stand is returned to be kept when
/// the call ends unanswered.
fn both_searches(
    problem: &Problem,
    sweep: &Sweep,
    capacity: i64,
    params: &Params,
    kept: Kept<'_>,
    poll: &mut Poll<'_>,
    stats: &mut Stats,
) -> (Verdict, Option<Turns>) {
    let Kept {
        failed,
        positions,
        mut turns,
    } = kept;
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
                    let runs = Runs {
                        rotation: Rotation::Turns,
                        resumes: &mut *positions,
                    };
                    exact::search_sweep(problem, sweep, capacity, &turn, poll, stats, runs)
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
                    let on = OnGraph { problem, graph };
                    let limits = Limits {
                        nodes: Some(limit),
                        seed: *seed,
                    };
                    let (grown, used) = grow.run(on, capacity, limits, poll);
                    stats.nodes = used;
                    match grown {
                        grow::Grown::Found(offsets) => Verdict::Solved(offsets),
                        grow::Grown::Infeasible => Verdict::Infeasible,
                        grow::Grown::NodeLimit => Verdict::NodeLimit,
                        grow::Grown::Stopped(stop) => Verdict::Stopped(stop),
                    }
                }
                Turn::Graph => {
                    let on = OnGraph { problem, graph };
                    let limits = Limits {
                        nodes: Some(limit),
                        seed: *seed,
                    };
                    let searched = search::search(on, capacity, limits, failed, poll);
                    *seed += 1;
                    stats.nodes = searched.nodes;
                    stats.backtracks = searched.backtracks;
                    match searched.end {
                        search::End::Found(offsets) => Verdict::Solved(offsets),
                        search::End::Infeasible => Verdict::Infeasible,
                        search::End::NodeLimit => Verdict::NodeLimit,
                        search::End::Stopped(stop) => Verdict::Stopped(stop),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// On conflict graphs (planted kernels, their dense separations
    /// lowered to moments, searched in the turns of `both_searches`),
    /// calls cut short by their node limits and made again with one memo,
    /// at two capacities alternately, decide as one call without a limit:
    /// they place where it places (validly, below the capacity) and prove
    /// what it proves. 1,500 kernels of 4-28 buffers, limits from up to 8
    /// nodes a buffer doubling per call.
    #[test]
    #[cfg(feature = "heuristics")]
    fn resumed_turns_decide_as_one_call_does() {
        use crate::base::rng::Rng;
        use crate::deadline::Deadline;
        use crate::exact::testing::{answered_in_calls, assert_decides_as, planted};
        let mut rng = Rng::new(0x7e2);
        let deadline = Deadline::new(None, None, None);
        let params = Params {
            conflict_graph: true,
            ..Params::default()
        };
        let (mut on_graphs, mut resumed) = (0, 0);
        for i in 0..1_500 {
            let n = rng.below(4, 28) as usize;
            let problem = planted(&mut rng, n).lowered().expect("lowers").problem;
            on_graphs += usize::from(search::applies(&problem));
            let below = rng.below(1, problem.capacity().max(1) + 1);
            let capacities = [problem.capacity(), below];
            let whole = capacities.map(|c| solve(&problem, c, &params, &deadline).0);
            let first = 1 + rng.below(0, 8 * problem.len() as i64) as u64;
            let (answers, calls, _) = answered_in_calls(
                &problem,
                capacities,
                (&params, first, true),
                solve_remembering,
            );
            for k in 0..2 {
                let what = alloc::format!("kernel {i}");
                assert_decides_as(&problem, capacities[k], (&whole[k], &answers[k]), &what);
            }
            resumed += usize::from(calls[0] > 1);
        }
        assert!(
            on_graphs > 1_000 && resumed > 200,
            "{on_graphs} on conflict graphs, {resumed} at the capacity resumed"
        );
    }
}
