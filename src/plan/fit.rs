//! The portfolio behind [`crate::plan`] when heuristics are built in.
//!
//! To fit a capacity: the max load above the capacity is a proof of
//! infeasibility; else the heuristics run once each (microseconds to
//! seconds); if none fits, the exact search runs, with improving restarts
//! beside it on the other cores, and the first placement that fits wins.
//! To minimise the height, see [`crate::minimize`].

use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};

use crate::deadline::{Deadline, Poll, Stop};
use crate::heuristic::{self, Best, Layout, Restarts, Strategy};
use crate::plan::{Method, Objective, Options, Outcome, Report, Source, Status};
use crate::problem::Problem;
use crate::solution::Solution;
#[cfg(not(feature = "std"))]
use crate::solver::Stats;
use crate::solver::{self, Verdict};

/// A problem and its layout, shared by the strategies of one plan.
pub(crate) struct Work<'a> {
    pub(crate) problem: &'a Problem,
    pub(crate) options: &'a Options,
    pub(crate) deadline: Deadline<'a>,
    pub(crate) layout: Layout,
    pub(crate) lower_bound: i64,
    strategies: Vec<Strategy>,
}

/// Overlapping pairs up to which first-fit and big-rocks run unasked
/// (about a second each on this machine), and best-fit (which walks every
/// hole above a buffer).
const HOLE_FILLING_PAIRS: u64 = 50_000_000;
const BEST_FIT_PAIRS: u64 = 20_000_000;

/// Problems up to which the automatic method runs the exact search. Its
/// overlap lists take 8 bytes a pair; on a generated training step of 10k
/// buffers and 2.4e7 pairs it made no progress in 10 s (190 MB, and the
/// core taken from the restarts), and at 28k buffers and 1.9e8 pairs
/// the lists alone are 1.5 GB.
const EXACT_BUFFERS: usize = 50_000;
const EXACT_PAIRS: u64 = 10_000_000;

/// Strategies whose plain placement is more than this many times as far
/// above the lower bound as the best one get no restarts.
const RESTART_CUTOFF: i64 = 4;

/// Buffers above which the skyline is left out: it is cheap, but needs
/// every buffer's contention measured first, and it has not once come
/// near the others on the challenging suite or on generated training
/// steps.
const SKYLINE_BUFFERS: usize = 200_000;

/// The strategies the heuristic phases run, cheapest first: the online
/// and skyline placements cost O(log n) a buffer whatever the input; the
/// hole-filling ones pay for every overlapping pair, so they run only
/// where those are few enough.
fn choose(method: Method, layout: &Layout) -> Vec<Strategy> {
    match method {
        Method::Heuristic(s) => alloc::vec![s],
        Method::Exact => Vec::new(),
        Method::Auto => Strategy::ALL
            .into_iter()
            .filter(|s| match s {
                Strategy::Online => true,
                Strategy::Skyline => layout.len() <= SKYLINE_BUFFERS,
                Strategy::FirstFit | Strategy::BigRocks => layout.overlaps <= HOLE_FILLING_PAIRS,
                Strategy::BestFit => layout.overlaps <= BEST_FIT_PAIRS,
            })
            .collect(),
    }
}

/// What running each strategy once found.
pub(crate) struct Quick {
    /// The lowest placement.
    pub(crate) best: Option<Best>,
    /// Why the strategies stopped early, if they did.
    pub(crate) stop: Option<Stop>,
    /// If every strategy ran: the strategies worth restarting, by the
    /// height of their plain placements, lowest first (ties: cheapest
    /// first).
    pub(crate) ranked: Option<Vec<Strategy>>,
}

/// Whether `a` is lower than the best so far.
pub(crate) fn better(a: &Best, b: &Option<Best>) -> bool {
    b.as_ref().is_none_or(|b| a.height < b.height)
}

impl Work<'_> {
    /// The strategies the heuristic phases run.
    pub(crate) fn strategies(&self) -> Vec<Strategy> {
        self.strategies.clone()
    }

    /// Each strategy once, in its plain order, cheapest first, until one
    /// is no higher than `enough`.
    pub(crate) fn quick(&self, strategies: &[Strategy], enough: i64) -> Quick {
        let mut poll = Poll::new(&self.deadline, 1 << 14);
        let mut quick = Quick {
            best: None,
            stop: None,
            ranked: None,
        };
        let mut heights = Vec::with_capacity(strategies.len());
        for (i, &s) in strategies.iter().enumerate() {
            let placed = self
                .layout
                .order(s, None, &mut poll)
                .and_then(|order| self.layout.place(s, &order, &mut poll));
            let (offsets, height) = match placed {
                Ok(placed) => placed,
                Err(stop) => {
                    quick.stop = Some(stop);
                    return quick;
                }
            };
            heights.push((height, i));
            let found = Best {
                offsets,
                height,
                strategy: s,
                restart: i as u64,
            };
            if better(&found, &quick.best) {
                quick.best = Some(found);
            }
            if quick.best.as_ref().is_some_and(|b| b.height <= enough) {
                return quick;
            }
        }
        heights.sort_unstable();
        // A strategy whose plain placement wastes several times what the
        // best one does has not once won by perturbation: leave it out.
        let excess = |h: i64| h.saturating_sub(self.lower_bound).max(0);
        let cut = heights
            .first()
            .map_or(0, |&(h, _)| excess(h).saturating_mul(RESTART_CUTOFF));
        quick.ranked = Some(
            heights
                .into_iter()
                .filter(|&(h, _)| excess(h) <= cut)
                .map(|(_, i)| strategies[i])
                .collect(),
        );
        quick
    }

    /// Whether the exact search is worth its set-up (memory grows with
    /// the overlapping pairs).
    pub(crate) fn exact_applies(&self) -> bool {
        match self.options.method {
            Method::Exact => true,
            Method::Heuristic(_) => false,
            Method::Auto => {
                self.problem.len() <= EXACT_BUFFERS && self.layout.overlaps <= EXACT_PAIRS
            }
        }
    }

    /// Restarts of the strategies after `quick` ran them: the ranked ones
    /// from their first perturbed order, or else all from their plain
    /// orders.
    pub(crate) fn restarts(&self, quick: &Quick) -> Restarts {
        Restarts {
            strategies: quick.ranked.clone().unwrap_or_else(|| self.strategies()),
            plain_done: quick.ranked.is_some(),
            count: self.options.restarts,
            seed: self.options.seed,
            threads: self.options.workers(),
        }
    }

    pub(crate) fn report(&self, height: Option<i64>, lower_bound: i64) {
        if let Some(p) = &self.options.progress {
            (p.0)(&Report {
                height,
                lower_bound,
                elapsed: self.deadline.elapsed(),
            });
        }
    }
}

/// Plans with the heuristics, the restarts and the exact search as the
/// objective and the method ask.
pub(crate) fn plan(problem: &Problem, options: &Options, deadline: Deadline<'_>) -> Outcome {
    let mut poll = Poll::new(&deadline, 1 << 16);
    let mut strategies = Vec::new();
    let set_up = Layout::new(problem, &mut poll).and_then(|mut layout| {
        strategies = choose(options.method, &layout);
        if strategies.contains(&Strategy::Skyline) {
            layout.measure_contention(&mut poll)?;
        }
        Ok(layout)
    });
    let layout = match set_up {
        Ok(l) => l,
        Err(stop) => {
            let mut outcome = match options.objective {
                Objective::Minimize => crate::minimize::stopped_early(problem, stop),
                Objective::Fit => Outcome::empty(0).stop(stop),
            };
            outcome.stats.elapsed = deadline.elapsed();
            return outcome;
        }
    };
    let lower_bound = layout.max_load.max(layout.fixed_top);
    let work = Work {
        problem,
        options,
        deadline,
        layout,
        lower_bound,
        strategies,
    };
    let mut outcome = match options.objective {
        Objective::Fit => fit(&work),
        Objective::Minimize => crate::minimize::minimize(&work),
    };
    outcome.stats.elapsed = work.deadline.elapsed();
    outcome
}

fn solved(mut outcome: Outcome, best: Best, source: Source) -> Outcome {
    outcome.status = Status::Solved;
    outcome.solution = Some(Solution {
        offsets: best.offsets,
    });
    outcome.source = Some(source);
    outcome
}

/// Fit the capacity: bound, heuristics, then the exact search with
/// restarts beside it.
fn fit(work: &Work<'_>) -> Outcome {
    let capacity = work.problem.capacity();
    let mut outcome = Outcome::empty(work.lower_bound);
    if work.layout.fixed_clash || work.lower_bound > capacity {
        outcome.status = Status::Infeasible;
        outcome.lower_bound = outcome.lower_bound.max(capacity.saturating_add(1));
        return outcome;
    }
    let strategies = work.strategies();
    let mut quick = work.quick(&strategies, capacity);
    match (quick.best.take(), quick.stop) {
        (Some(best), _) if best.height <= capacity => {
            let source = Source::Heuristic(best.strategy, best.restart);
            return solved(outcome, best, source);
        }
        (_, Some(stop)) => return outcome.stop(stop),
        _ => {}
    }
    let how = work.restarts(&quick);
    if !work.exact_applies() {
        // Restarts until one fits (or the time or the count runs out).
        let found = heuristic::improve(&work.layout, &how, capacity, &work.deadline, &|_| {});
        outcome.restarts = found.as_ref().map_or(0, |b| b.restart + 1);
        return match found {
            Some(best) if best.height <= capacity => {
                let source = Source::Heuristic(best.strategy, best.restart);
                solved(outcome, best, source)
            }
            _ => match work.deadline.check() {
                Err(stop) => outcome.stop(stop),
                Ok(()) => outcome,
            },
        };
    }
    exact_with_restarts(work, how, outcome)
}

/// The exact search at the capacity, with improving restarts on the other
/// cores when there is a timeout to bound them; the first fit wins.
fn exact_with_restarts(work: &Work<'_>, how: Restarts, mut outcome: Outcome) -> Outcome {
    let capacity = work.problem.capacity();
    let halt = AtomicBool::new(false);
    let deadline = work.deadline.with_halt(&halt);
    let side = work.options.workers() > 1
        && work.deadline.remaining().is_some()
        && !how.strategies.is_empty();
    let exact = || {
        let r = solver::solve(work.problem, capacity, &work.options.solver, &deadline);
        if !matches!(r.0, Verdict::Stopped(_)) {
            halt.store(true, Ordering::Relaxed);
        }
        r
    };
    let restarts = || {
        let mut how = how.clone();
        how.threads = how.threads.saturating_sub(1).max(1);
        let found = heuristic::improve(&work.layout, &how, capacity, &deadline, &|_| {});
        if found.as_ref().is_some_and(|b| b.height <= capacity) {
            halt.store(true, Ordering::Relaxed);
        }
        found
    };
    #[cfg(feature = "std")]
    let ((verdict, stats), side_best) = if side {
        std::thread::scope(|scope| {
            let helper = scope.spawn(restarts);
            let exact = exact();
            (exact, helper.join().unwrap_or(None))
        })
    } else {
        (exact(), None)
    };
    #[cfg(not(feature = "std"))]
    let ((verdict, stats), side_best): ((Verdict, Stats), Option<Best>) = {
        let _ = (side, &restarts);
        (exact(), None)
    };
    outcome.stats = stats;
    if let Some(best) = side_best {
        outcome.restarts = best.restart + 1;
        if best.height <= capacity && !matches!(verdict, Verdict::Solved(_)) {
            let source = Source::Heuristic(best.strategy, best.restart);
            return solved(outcome, best, source);
        }
    }
    match verdict {
        Verdict::Solved(offsets) => {
            outcome.status = Status::Solved;
            outcome.solution = Some(Solution { offsets });
            outcome.source = Some(Source::Exact);
            outcome
        }
        Verdict::Infeasible => {
            outcome.status = Status::Infeasible;
            outcome.lower_bound = capacity.saturating_add(1);
            outcome
        }
        Verdict::Exhausted | Verdict::NodeLimit => outcome,
        Verdict::Stopped(_) => match work.deadline.check() {
            Err(stop) => outcome.stop(stop),
            Ok(()) => outcome,
        },
    }
}
