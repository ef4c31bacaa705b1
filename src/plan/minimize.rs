//! The lowest height within a deadline.
//!
//! - Lower bound: the max load (no placement is lower than the most memory
//!   alive at one time) and the highest fixed buffer; the exact search
//!   raises it when it proves a capacity infeasible.
//! - Upper bound: the best heuristic placement.
//! - Between them, while the problem is small enough for it, the exact
//!   search at candidate capacities: the lower bound first (tight problems
//!   fit it), then halving the interval. A placement found there lowers
//!   the upper bound to its own height; a proof raises the lower bound;
//!   a search that runs out of its share of time proves nothing.
//! - Improving restarts of the heuristics: on the other cores while the
//!   exact search runs, each side telling the other its bounds; on one
//!   core, after it, with at least half of the time.
//!
//! The result is the lowest placement found, its height, the lower bound,
//! and whether the two meet (then the height is proven optimal). At the
//! deadline the best so far is returned, never nothing once a heuristic
//! has run.

use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use crate::deadline::{Deadline, Stop};
use crate::heuristic::{self, Best, Restarts};
use crate::plan::{Outcome, Source, Status};
use crate::portfolio::Work;
use crate::problem::Problem;
use crate::solution::Solution;
use crate::solver::{self, Verdict};

/// The share of the remaining time one exact attempt may take.
const EXACT_SHARE: u32 = 3;

/// Without a timeout, the nodes one exact attempt may visit (per buffer).
const EXACT_NODES_PER_BUFFER: u64 = 2_000;

/// The best placement so far, wherever it came from.
struct Incumbent {
    offsets: Vec<i64>,
    height: i64,
    source: Source,
}

pub(crate) fn minimize(work: &Work<'_>) -> Outcome {
    let capacity = work.problem.capacity();
    let mut lower = work.lower_bound;
    let mut outcome = Outcome::empty(lower);
    if work.layout.fixed_clash || lower > capacity {
        outcome.status = Status::Infeasible;
        outcome.lower_bound = lower.max(capacity.saturating_add(1));
        return outcome;
    }
    let strategies = work.strategies();
    let mut best: Option<Incumbent> = None;
    let mut quick = work.quick(&strategies, lower);
    if let Some(b) = quick.best.take() {
        take(work, b, &mut best);
    }
    if let Some(stop) = quick.stop {
        return finish(work, outcome, best, lower, Some(stop));
    }
    work.report(best.as_ref().map(|b| b.height), lower);

    let open =
        |best: &Option<Incumbent>, lower: i64| best.as_ref().is_none_or(|b| b.height > lower);
    let exact = work.exact_applies() && open(&best, lower);
    let restarts = !strategies.is_empty();
    let side_by_side =
        exact && restarts && work.options.workers() > 1 && work.deadline.remaining().is_some();
    let stopped = if side_by_side {
        exact_beside_restarts(
            work,
            work.restarts(&quick),
            &mut best,
            &mut lower,
            &mut outcome,
        )
    } else {
        let mut stopped = None;
        if exact {
            // When restarts follow, they get half of the time: the exact
            // search may make no progress at all on a large problem.
            let budget = match (restarts, work.deadline.remaining()) {
                (true, Some(left)) => work.deadline.sooner(left / 2),
                _ => work.deadline,
            };
            let shared = Shared::new(&best, lower);
            stopped = bisect(work, &budget, &shared, &mut best, &mut lower, &mut outcome);
        }
        if stopped.is_none() && restarts && open(&best, lower) {
            let shared = Shared::new(&best, lower);
            let found = heuristic::improve(
                &work.layout,
                &work.restarts(&quick),
                lower,
                &work.deadline,
                &|h| shared.restart_found(work, h),
            );
            if let Some(b) = found {
                outcome.restarts = b.restart + 1;
                take(work, b, &mut best);
            }
            work.report(best.as_ref().map(|b| b.height), lower);
            stopped = work.deadline.check().err();
        }
        stopped
    };
    finish(work, outcome, best, lower, stopped)
}

/// Keeps a heuristic placement if it fits and is the lowest yet.
fn take(work: &Work<'_>, b: Best, best: &mut Option<Incumbent>) {
    if b.height <= work.problem.capacity() && best.as_ref().is_none_or(|i| b.height < i.height) {
        *best = Some(Incumbent {
            source: Source::Heuristic(b.strategy, b.restart),
            offsets: b.offsets,
            height: b.height,
        });
    }
}

/// The bounds as the exact search and the restarts beside it see them.
struct Shared {
    /// The lowest height found by either.
    height: AtomicI64,
    /// The lower bound, raised by the exact search's proofs.
    lower: AtomicI64,
    /// Set when the restarts may stop: the bounds have met.
    halt: AtomicBool,
}

impl Shared {
    fn new(best: &Option<Incumbent>, lower: i64) -> Self {
        Shared {
            height: AtomicI64::new(best.as_ref().map_or(i64::MAX, |b| b.height)),
            lower: AtomicI64::new(lower),
            halt: AtomicBool::new(false),
        }
    }

    /// A restart placed everything at height `h`, lower than any before.
    fn restart_found(&self, work: &Work<'_>, h: i64) {
        if h < self.height.fetch_min(h, Ordering::Relaxed) {
            let lower = self.lower.load(Ordering::Relaxed);
            if h <= lower {
                self.halt.store(true, Ordering::Relaxed);
            }
            work.report(Some(h), lower);
        }
    }
}

/// The exact search on this thread, the improving restarts on the others,
/// until the bounds meet or the deadline passes. Each tells the other
/// what it found: a lower restart placement lowers the capacities the
/// exact search tries next; a proof raises the bound the restarts aim at.
#[cfg(feature = "std")]
fn exact_beside_restarts(
    work: &Work<'_>,
    mut how: Restarts,
    best: &mut Option<Incumbent>,
    lower: &mut i64,
    outcome: &mut Outcome,
) -> Option<Stop> {
    let shared = Shared::new(best, *lower);
    let side = work.deadline.with_halt(&shared.halt);
    how.threads = how.threads.saturating_sub(1).max(1);
    let aim = *lower;
    let (stopped, found) = std::thread::scope(|scope| {
        let helper = scope.spawn(|| {
            heuristic::improve(&work.layout, &how, aim, &side, &|h| {
                shared.restart_found(work, h)
            })
        });
        let stopped = bisect(work, &work.deadline, &shared, best, lower, outcome);
        if stopped.is_some() || shared.height.load(Ordering::Relaxed) <= *lower {
            shared.halt.store(true, Ordering::Relaxed);
        }
        (stopped, helper.join().unwrap_or(None))
    });
    if let Some(b) = found {
        outcome.restarts = b.restart + 1;
        take(work, b, best);
    }
    work.report(best.as_ref().map(|b| b.height), *lower);
    stopped.or_else(|| work.deadline.check().err())
}

#[cfg(not(feature = "std"))]
fn exact_beside_restarts(
    _: &Work<'_>,
    _: Restarts,
    _: &mut Option<Incumbent>,
    _: &mut i64,
    _: &mut Outcome,
) -> Option<Stop> {
    unreachable!("one worker without std")
}

/// The exact search between the bounds, within `budget`. Returns why it
/// stopped early, if the whole plan must stop.
fn bisect(
    work: &Work<'_>,
    budget: &Deadline<'_>,
    shared: &Shared,
    best: &mut Option<Incumbent>,
    lower: &mut i64,
    outcome: &mut Outcome,
) -> Option<Stop> {
    let capacity = work.problem.capacity();
    // Look for placements no higher than `hi`.
    let mut lo = *lower;
    let mut hi = best.as_ref().map_or(capacity, |b| b.height - 1);
    // Without a placement yet, the upper bound first (any placement beats
    // none); then the lower bound (tight problems meet it); then halves.
    let mut tries: Vec<i64> = Vec::new();
    if best.is_none() {
        tries.push(hi);
    }
    tries.push(lo);
    tries.reverse();
    loop {
        // A restart beside this search may have placed lower.
        hi = hi.min(shared.height.load(Ordering::Relaxed).saturating_sub(1));
        if lo > hi {
            break;
        }
        let c = match tries.pop() {
            Some(c) if lo <= c && c <= hi => c,
            _ => lo + (hi - lo) / 2,
        };
        let mut params = work.options.solver.clone();
        let deadline = match budget.remaining() {
            Some(left) => budget.sooner(left / EXACT_SHARE),
            None => {
                let nodes = EXACT_NODES_PER_BUFFER
                    .saturating_mul(work.problem.len() as u64)
                    .max(100_000);
                params.node_limit = Some(params.node_limit.map_or(nodes, |n| n.min(nodes)));
                *budget
            }
        };
        let (verdict, stats) = solver::solve(work.problem, c, &params, &deadline);
        outcome.stats.nodes += stats.nodes;
        outcome.stats.backtracks += stats.backtracks;
        outcome.stats.interleaving = stats.interleaving;
        match verdict {
            Verdict::Solved(offsets) => {
                let height = height(work, &offsets);
                hi = height - 1;
                shared.height.fetch_min(height, Ordering::Relaxed);
                *best = Some(Incumbent {
                    offsets,
                    height,
                    source: Source::Exact,
                });
            }
            Verdict::Infeasible => {
                *lower = (*lower).max(c + 1);
                shared.lower.fetch_max(*lower, Ordering::Relaxed);
                lo = c + 1;
            }
            // Unknown: look higher, prove nothing.
            Verdict::Exhausted | Verdict::NodeLimit => lo = c + 1,
            Verdict::Stopped(stop) => {
                if work.deadline.check().is_err() {
                    return Some(stop);
                }
                if budget.check().is_err() {
                    break;
                }
                lo = c + 1;
            }
        }
        let height = shared.height.load(Ordering::Relaxed);
        work.report((height < i64::MAX).then_some(height), *lower);
        if height <= *lower {
            break;
        }
    }
    None
}

fn height(work: &Work<'_>, offsets: &[i64]) -> i64 {
    height_of(work.problem, offsets)
}

fn height_of(problem: &Problem, offsets: &[i64]) -> i64 {
    offsets
        .iter()
        .zip(problem.buffers())
        .map(|(&o, b)| o.saturating_add(b.size))
        .max()
        .unwrap_or(0)
}

/// The stacked placement, if it fits the capacity. It is valid by
/// construction unless fixed buffers clash, which only then is checked.
fn fallback(problem: &Problem) -> Option<Incumbent> {
    let offsets = heuristic::stack(problem);
    let height = height_of(problem, &offsets);
    let fits = height <= problem.capacity();
    let fixed = problem.buffers().iter().any(|b| b.offset.is_some());
    let valid = || {
        !fixed
            || crate::solution::validate(
                problem,
                &Solution {
                    offsets: offsets.clone(),
                },
            )
            .is_ok()
    };
    if !(fits && valid()) {
        return None;
    }
    Some(Incumbent {
        offsets,
        height,
        source: Source::Stacked,
    })
}

/// What minimising returns when the deadline comes before the set-up is
/// done: the stacked placement.
pub(crate) fn stopped_early(problem: &Problem, stop: Stop) -> Outcome {
    let outcome = Outcome::empty(0);
    match fallback(problem) {
        Some(b) => {
            let mut outcome = outcome;
            outcome.status = Status::Solved;
            outcome.source = Some(b.source);
            outcome.solution = Some(Solution { offsets: b.offsets });
            outcome.stop(stop)
        }
        None => outcome.stop(stop),
    }
}

fn finish(
    work: &Work<'_>,
    mut outcome: Outcome,
    mut best: Option<Incumbent>,
    lower: i64,
    stop: Option<Stop>,
) -> Outcome {
    outcome.lower_bound = lower;
    if best.is_none() && !work.layout.fixed_clash {
        // Stopped before any strategy finished: every buffer above the
        // other still beats returning nothing.
        let (offsets, height) = work.layout.stack();
        if height <= work.problem.capacity() {
            best = Some(Incumbent {
                offsets,
                height,
                source: Source::Stacked,
            });
        }
    }
    if let Some(b) = best {
        outcome.status = Status::Solved;
        outcome.optimal = b.height <= lower;
        outcome.source = Some(b.source);
        outcome.solution = Some(Solution { offsets: b.offsets });
    }
    match stop {
        Some(stop) => outcome.stop(stop),
        None => outcome,
    }
}
