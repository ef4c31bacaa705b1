//! Fitting a capacity: the max load above it (or fixed buffers that
//! clash) proves at once that nothing fits; otherwise the scheduler's
//! lanes run until a placement fits, with the exact search at the
//! capacity on lane 0 where it applies (a node limit that doubles each
//! round; with one lane, on a separated kernel, an attempt that runs out
//! is followed by attempts above the capacity, whose first placement one
//! of the lanes' two walks starts from: see [`stepping_stones`]). The
//! first placement that fits wins; a proof from the exact search ends the
//! plan as infeasible.

use alloc::vec::Vec;

use super::exact_call;
use super::minimize::{height_of, one_level_down};
use super::options::Source;
use super::outcome::{Outcome, Status};
use super::schedule::{self, Board, Exact, Goal, Incumbent, Work};
use crate::deadline::Deadline;
use crate::exact::{Stats, Verdict};
use crate::model::solution::Solution;

pub(crate) fn fit(work: &Work<'_>) -> Outcome {
    // The coarse level (see `heuristic::coarsen`) is fitted at the same
    // capacity (its own) by this same function one level down, as the
    // minimiser minimises it: a placement of the coarse problem, lifted,
    // fits the capacity; a coarse problem that cannot fit proves nothing
    // (merging buffers restricts the placements), so only placements come
    // back. Without it, fitting at a height the minimiser reached in
    // milliseconds through the coarse level could take the whole budget.
    let coarse = |coarse: &crate::model::problem::Problem,
                  deadline: Deadline<'_>,
                  relay: &schedule::Relay<'_>| {
        one_level_down(work, coarse, (deadline, relay), fit_level)
    };
    fit_level(work, Some(&coarse))
}

fn fit_level(work: &Work<'_>, coarse: Option<&schedule::CoarseSolve<'_>>) -> Outcome {
    let capacity = work.problem.capacity();
    let mut outcome = Outcome::empty(work.lower_bound);
    if work.layout.fixed_clash || work.lower_bound > capacity {
        outcome.status = Status::Infeasible;
        outcome.lower_bound = outcome.lower_bound.max(capacity.saturating_add(1));
        return outcome;
    }
    let mut stats = Stats::default();
    let found = if work.exact_applies() {
        // Without a timeout the exact search runs to its end (or the
        // node limit the caller set).
        let timed = work.deadline.remaining().is_some();
        // Stepping stones (see [`stepping_stones`]) where the lanes walk
        // over orders on the conflict graph: separated kernels, whose
        // lowered buffers have gaps (the sweep's search decides interval
        // problems at the capacity itself: there the stones only took its
        // time, measured). The walk takes the lane's best placement as
        // its start once, at its first turn (the summed walk the
        // heuristics', the other the first stone: see
        // `GraphWalk::start_summed_from`), so the stones stop once one is
        // found.
        let gapped = work.problem.buffers().iter().any(|b| !b.gaps.is_empty());
        let mut stones = gapped && !work.variants.is_empty();
        // What the exact search exhausted, kept from round to round: at
        // the capacity, and at the stones.
        let mut memos = [exact_call::Memo::default(), exact_call::Memo::default()];
        let mut round = |nodes: Option<u64>, deadline: &Deadline<'_>, board: &Board| {
            let mut params = work.options.solver.clone();
            let nodes = nodes.filter(|_| timed || !work.variants.is_empty());
            if let Some(nodes) = nodes {
                params.node_limit = Some(params.node_limit.map_or(nodes, |n| n.min(nodes)));
            }
            let user_limit = work.options.solver.node_limit;
            let mut attempt = |at: i64| {
                let memo = &mut memos[usize::from(at != capacity)];
                let (verdict, s) =
                    exact_call::solve_remembering(work.problem, at, &params, deadline, memo);
                let used = s.nodes;
                stats.nodes += s.nodes;
                stats.backtracks += s.backtracks;
                stats.shaken += s.shaken;
                stats.interleaving = s.interleaving;
                stats.lower_bound = stats.lower_bound.max(s.lower_bound);
                (verdict, used)
            };
            let height = |offsets: &[i64]| height_of(work.problem, offsets);
            let found = |offsets: Vec<i64>| {
                let height = height(&offsets);
                Exact::Found(Incumbent {
                    offsets,
                    height,
                    source: Source::Exact,
                })
            };
            match attempt(capacity).0 {
                Verdict::Solved(offsets) => found(offsets),
                Verdict::Infeasible => {
                    board.prove(capacity.saturating_add(1));
                    Exact::Done
                }
                Verdict::Exhausted => Exact::Done,
                // The caller's own limit is final; ours doubles.
                Verdict::NodeLimit if user_limit.is_some_and(|u| nodes.is_none_or(|n| u <= n)) => {
                    Exact::Done
                }
                Verdict::NodeLimit | Verdict::Stopped(_) => {
                    let Some(nodes) = nodes.filter(|_| stones) else {
                        return Exact::Nothing;
                    };
                    let at = (capacity, nodes, board.height());
                    let going = || deadline.check().is_ok();
                    match stepping_stones(at, &mut attempt, &height, &going) {
                        Stones::Found(offsets) => {
                            stones = false;
                            found(offsets)
                        }
                        Stones::Proven(bound) => {
                            board.prove(bound);
                            Exact::Done
                        }
                        Stones::Nothing => Exact::Nothing,
                    }
                }
            }
        };
        schedule::run(work, Goal::Fit(capacity), Some(&mut round), coarse)
    } else {
        schedule::run(work, Goal::Fit(capacity), None, coarse)
    };
    outcome.stats = stats;
    outcome.restarts = found.restarts;
    outcome.plain_height = found.plain_height;
    if found.lower > capacity {
        outcome.status = Status::Infeasible;
        outcome.lower_bound = found.lower;
        return outcome;
    }
    if let Some(best) = found.best.filter(|b| b.height <= capacity) {
        outcome.status = Status::Solved;
        outcome.solution = Some(Solution {
            offsets: best.offsets,
        });
        outcome.source = Some(best.source);
        return outcome;
    }
    match found.stop {
        Some(stop) => outcome.stop(stop),
        None => outcome,
    }
}

/// What [`stepping_stones`] came to.
#[derive(Debug, PartialEq, Eq)]
enum Stones {
    /// The lowest placement found above the capacity.
    Found(Vec<i64>),
    /// Nothing fits below this (above the capacity): nothing fits the
    /// capacity either.
    Proven(i64),
    Nothing,
}

/// After an attempt at `capacity` ran out of its `nodes`, attempts
/// above it, as the minimiser's rounds make them (see `minimize.rs`):
/// halfway between the capacity and the `best` placement, lower after
/// each placement found, higher after each attempt that runs out, while
/// the round has spent less than twice the nodes and `going` holds. A
/// placement there is no answer, but one of the lanes' walks starts from
/// it, and goes from there to the capacity on kernels where the walks did
/// not from the heuristics' placements (the minimiser, which makes such
/// placements, proved those kernels optimal at the capacity in a fifth of
/// the time fitting took); a proof there is one at the capacity.
fn stepping_stones(
    (capacity, nodes, best): (i64, u64, i64),
    attempt: &mut dyn FnMut(i64) -> (Verdict, u64),
    height: &dyn Fn(&[i64]) -> i64,
    going: &dyn Fn() -> bool,
) -> Stones {
    let (mut from, mut spent, mut best) = (capacity.saturating_add(1), nodes, best);
    let mut lowest = Stones::Nothing;
    while spent < nodes.saturating_mul(2) && best != i64::MAX && from < best && going() {
        let at = from + (best - 1 - from) / 2;
        let (verdict, used) = attempt(at);
        spent = spent.saturating_add(used.max(1));
        match verdict {
            Verdict::Solved(offsets) => {
                best = height(&offsets);
                lowest = Stones::Found(offsets);
            }
            Verdict::Infeasible => return Stones::Proven(at.saturating_add(1)),
            // Unknown there (or, with windows, no proof): look higher.
            _ => from = at + 1,
        }
    }
    lowest
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::rng::Rng;

    /// Every attempt lies strictly between the capacity and the lowest
    /// placement yet, the nodes spent stay within twice the grant (plus
    /// the last attempt's), a placement found is the lowest returned and
    /// a proof above the capacity is returned as one: against a scripted
    /// search whose answers depend on a hidden optimum, over 10,000
    /// draws (capacities, grants and optima random).
    #[test]
    fn stepping_stones_stay_between_the_capacity_and_the_best() {
        let mut rng = Rng::new(0x57e9);
        let (mut found, mut proven) = (0, 0);
        for _ in 0..10_000 {
            let capacity = rng.below(0, 1_000);
            let best = capacity + rng.below(1, 1_000);
            // Above the capacity: the attempt at it ran out.
            let optimum = capacity + rng.below(1, 2_000);
            let nodes = rng.below(1, 100) as u64;
            // The search: where the optimum fits, a placement between it
            // and the attempt; below it a proof half the time; else out
            // of nodes.
            let mut spent = 0u64;
            let mut lowest = best;
            let mut attempt = |at: i64| {
                assert!(capacity < at && at < lowest, "{capacity} < {at} < {lowest}");
                let used = rng.below(1, 2 * nodes as i64) as u64;
                spent += used;
                let verdict = if at >= optimum {
                    lowest = rng.below(optimum, at + 1);
                    Verdict::Solved(alloc::vec![lowest])
                } else if at % 2 == 0 {
                    Verdict::Infeasible
                } else {
                    Verdict::NodeLimit
                };
                (verdict, used)
            };
            let height = |offsets: &[i64]| offsets[0];
            let stones = stepping_stones((capacity, nodes, best), &mut attempt, &height, &|| true);
            assert!(spent < nodes + 2 * nodes, "{spent} of {nodes}");
            match stones {
                Stones::Found(offsets) => {
                    assert_eq!(offsets[0], lowest);
                    assert!(capacity < lowest && lowest < best);
                    found += 1;
                }
                Stones::Proven(bound) => {
                    assert!(bound > capacity && bound <= optimum, "{bound} {optimum}");
                    proven += 1;
                }
                Stones::Nothing => {}
            }
        }
        assert!(
            found > 1_000 && proven > 1_000,
            "{found} found, {proven} proven"
        );
    }
}
