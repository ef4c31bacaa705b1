//! Fitting a capacity: the max load above it (or fixed buffers that
//! clash) proves at once that nothing fits; otherwise the scheduler's
//! lanes run until a placement fits, with the exact search at the
//! capacity on lane 0 where it applies (a node limit that doubles each
//! round). The first placement that fits wins; a proof from the exact
//! search ends the plan as infeasible.

use super::options::Source;
use super::outcome::{Outcome, Status};
use super::schedule::{self, Board, Exact, Goal, Incumbent, Work};
use crate::deadline::Deadline;
use crate::solution::Solution;
use crate::solver::{self, Stats, Verdict};

pub(crate) fn fit(work: &Work<'_>) -> Outcome {
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
        let mut round = |nodes: Option<u64>, deadline: &Deadline<'_>, board: &Board| {
            let mut params = work.options.solver.clone();
            let nodes = nodes.filter(|_| timed || !work.variants.is_empty());
            if let Some(nodes) = nodes {
                params.node_limit = Some(params.node_limit.map_or(nodes, |n| n.min(nodes)));
            }
            let user_limit = work.options.solver.node_limit;
            let (verdict, s) = solver::solve(work.problem, capacity, &params, deadline);
            stats.nodes += s.nodes;
            stats.backtracks += s.backtracks;
            stats.shaken += s.shaken;
            stats.interleaving = s.interleaving;
            stats.lower_bound = stats.lower_bound.max(s.lower_bound);
            match verdict {
                Verdict::Solved(offsets) => {
                    let height = offsets
                        .iter()
                        .zip(work.problem.buffers())
                        .map(|(&o, b)| o + b.size)
                        .max()
                        .unwrap_or(0);
                    Exact::Found(Incumbent {
                        offsets,
                        height,
                        source: Source::Exact,
                    })
                }
                Verdict::Infeasible => {
                    board.prove(capacity.saturating_add(1));
                    Exact::Done
                }
                Verdict::Exhausted => Exact::Done,
                // The caller's own limit is final; ours doubles.
                Verdict::NodeLimit if user_limit.is_some_and(|u| nodes.is_none_or(|n| u <= n)) => {
                    Exact::Done
                }
                Verdict::NodeLimit | Verdict::Stopped(_) => Exact::Nothing,
            }
        };
        schedule::run(work, Goal::Fit(capacity), Some(&mut round), None)
    } else {
        schedule::run(work, Goal::Fit(capacity), None, None)
    };
    outcome.stats = stats;
    outcome.restarts = found.placements;
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
