//! The one entry point: [`plan`] chooses the strategies for a problem under
//! one deadline. The C ABI and the CLI call this and nothing below it.
//!
//! To fit a capacity (`Objective::Fit`): the max load above the capacity
//! is a proof of infeasibility; else the heuristics run once each (they
//! take microseconds to seconds); if none fits, the exact search runs,
//! with improving restarts beside it on the other cores, and the first
//! placement that fits wins. To minimise the height, see [`crate::minimize`].

use alloc::string::String;
use alloc::sync::Arc;
use core::fmt;
use core::sync::atomic::AtomicBool;
use core::time::Duration;

use crate::deadline::{Clock, Deadline, Stop};
#[cfg(feature = "heuristics")]
use crate::heuristic::Strategy;
use crate::problem::Problem;
use crate::solution::Solution;
use crate::solver::{self, Params, Stats, Verdict};

/// What to plan for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Objective {
    /// Any placement below the capacity.
    #[default]
    Fit,
    /// The lowest height (the capacity is an upper bound).
    #[cfg(feature = "heuristics")]
    Minimize,
}

/// Which strategies may run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Method {
    /// Heuristics, restarts and the exact search, as the objective needs.
    #[default]
    Auto,
    /// The exact search only.
    Exact,
    /// One heuristic (with its improving restarts when minimising).
    #[cfg(feature = "heuristics")]
    Heuristic(Strategy),
}

/// Where a placement came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The exact search.
    Exact,
    /// A heuristic, in its plain order (restart 0..k) or a perturbed one.
    #[cfg(feature = "heuristics")]
    Heuristic(Strategy, u64),
    /// Every buffer above the other: what is left when the deadline comes
    /// before any strategy finishes.
    #[cfg(feature = "heuristics")]
    Stacked,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Exact => f.write_str("exact search"),
            #[cfg(feature = "heuristics")]
            Source::Heuristic(s, r) => crate::text::fill(
                f,
                "{}, restart {}",
                &[crate::text::Arg::S(s.name()), crate::text::Arg::U(*r)],
            ),
            #[cfg(feature = "heuristics")]
            Source::Stacked => f.write_str("stacked"),
        }
    }
}

/// A report of progress while planning.
#[cfg(feature = "heuristics")]
#[derive(Clone, Copy, Debug)]
pub struct Report {
    /// Height of the best placement so far (`None`: none yet).
    pub height: Option<i64>,
    /// The proven lower bound on any height.
    pub lower_bound: i64,
    /// Time since the plan began.
    pub elapsed: Duration,
}

/// A callback for [`Report`]s, called when the best height or the lower
/// bound changes.
#[cfg(feature = "heuristics")]
#[derive(Clone)]
pub struct Progress(pub Arc<dyn Fn(&Report) + Send + Sync>);

#[cfg(feature = "heuristics")]
impl fmt::Debug for Progress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Progress(..)")
    }
}

/// How to plan.
#[derive(Clone, Debug)]
pub struct Options {
    /// Fit the capacity, or minimise the height.
    pub objective: Objective,
    /// Which strategies may run.
    pub method: Method,
    /// Stop after this long (needs a clock). When minimising, the best
    /// placement found by then is returned.
    pub timeout: Option<Duration>,
    /// Stop when this flag becomes true; another thread may set it.
    pub cancel: Option<Arc<AtomicBool>>,
    /// Monotonic nanoseconds. Defaults to the standard clock with the
    /// `std` feature; without it, timeouts need a clock from the caller.
    pub clock: Option<Clock>,
    /// Rules and orderings of the exact search.
    pub solver: Params,
    /// Seed of the improving restarts (same seed, same offsets, unless a
    /// timeout cuts the restarts short).
    pub seed: u64,
    /// Threads for the restarts, beside the exact search (0: every core;
    /// without `std`, always 1).
    pub threads: usize,
    /// Improving restarts to run (`None`: until the timeout, or a default
    /// number without one).
    pub restarts: Option<u64>,
    /// Called as the best placement improves (reports come from the
    /// minimisation, which needs the heuristics).
    #[cfg(feature = "heuristics")]
    pub progress: Option<Progress>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            objective: Objective::Fit,
            method: Method::Auto,
            timeout: None,
            cancel: None,
            #[cfg(feature = "std")]
            clock: Some(crate::deadline::std_clock),
            #[cfg(not(feature = "std"))]
            clock: None,
            solver: Params::default(),
            seed: 0,
            threads: 0,
            restarts: None,
            #[cfg(feature = "heuristics")]
            progress: None,
        }
    }
}

impl Options {
    /// The deadline these options describe, starting now.
    pub fn deadline(&self) -> Deadline<'_> {
        Deadline::new(self.clock, self.timeout, self.cancel.as_deref())
    }

    /// Worker threads to use.
    #[cfg(feature = "heuristics")]
    pub(crate) fn workers(&self) -> usize {
        #[cfg(feature = "std")]
        {
            if self.threads == 0 {
                return std::thread::available_parallelism().map_or(1, |n| n.get());
            }
            self.threads
        }
        #[cfg(not(feature = "std"))]
        {
            1
        }
    }
}

/// How planning ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Every buffer has an offset below the capacity.
    Solved,
    /// Proven: no placement fits the capacity.
    Infeasible,
    /// No placement found and no proof that none exists: the node limit
    /// ran out, or gap windows let some buffers interleave, which the
    /// search (stacking every pair) does not try, or the heuristics alone
    /// did not fit.
    NotFound,
    /// The timeout passed before an answer.
    TimedOut,
    /// The cancel flag was set before an answer.
    Cancelled,
}

/// The result of [`plan`].
#[derive(Clone, Debug)]
pub struct Outcome {
    /// How it ended.
    pub status: Status,
    /// The offsets, when solved.
    pub solution: Option<Solution>,
    /// A proven lower bound on the height of any placement.
    pub lower_bound: i64,
    /// Whether the solution's height is proven the lowest possible.
    pub optimal: bool,
    /// Where the solution came from.
    pub source: Option<Source>,
    /// Whether the timeout or the cancel flag cut the work short (a
    /// minimised placement may then not be the best).
    pub stopped: Option<Stop>,
    /// What the exact search did.
    pub stats: Stats,
    /// Improving restarts run.
    pub restarts: u64,
}

impl Outcome {
    /// Height of the solution (0 if there is none).
    pub fn height(&self, problem: &Problem) -> i64 {
        self.solution.as_ref().map_or(0, |s| s.height(problem))
    }

    pub(crate) fn empty(lower_bound: i64) -> Outcome {
        Outcome {
            status: Status::NotFound,
            solution: None,
            lower_bound,
            optimal: false,
            source: None,
            stopped: None,
            stats: Stats::default(),
            restarts: 0,
        }
    }

    pub(crate) fn stop(mut self, stop: Stop) -> Outcome {
        self.stopped = Some(stop);
        if self.solution.is_none() {
            self.status = match stop {
                Stop::TimedOut => Status::TimedOut,
                Stop::Cancelled => Status::Cancelled,
            };
        }
        self
    }
}

/// Plans `problem`: offsets below its capacity (or of the lowest height,
/// when minimising), or a proof that none exist, or the reason it stopped.
pub fn plan(problem: &Problem, options: &Options) -> Outcome {
    let deadline = options.deadline();
    if let Err(stop) = deadline.check() {
        return Outcome::empty(0).stop(stop);
    }
    #[cfg(feature = "heuristics")]
    let mut outcome = if options.method != Method::Exact || options.objective != Objective::Fit {
        crate::portfolio::plan(problem, options, deadline)
    } else {
        exact_only(problem, options, &deadline)
    };
    #[cfg(not(feature = "heuristics"))]
    let mut outcome = exact_only(problem, options, &deadline);
    // Whatever found it, a placement at the proven bound is optimal.
    if let Some(s) = &outcome.solution {
        outcome.optimal = s.height(problem) <= outcome.lower_bound;
    }
    outcome
}

/// The exact search alone, at the problem's capacity.
pub(crate) fn exact_only(problem: &Problem, options: &Options, deadline: &Deadline<'_>) -> Outcome {
    let (verdict, stats) = solver::solve(problem, problem.capacity(), &options.solver, deadline);
    let mut outcome = Outcome::empty(stats.lower_bound);
    outcome.stats = stats;
    match verdict {
        Verdict::Solved(offsets) => {
            outcome.status = Status::Solved;
            outcome.solution = Some(Solution { offsets });
            outcome.source = Some(Source::Exact);
        }
        Verdict::Infeasible => {
            outcome.status = Status::Infeasible;
            outcome.lower_bound = problem.capacity().saturating_add(1);
        }
        Verdict::Exhausted | Verdict::NodeLimit => {}
        Verdict::Stopped(stop) => return outcome.stop(stop),
    }
    outcome
}

/// A short name of a placement's source, for reports.
pub fn describe(source: Option<Source>) -> String {
    match source {
        None => String::from("-"),
        Some(s) => {
            let mut out = String::new();
            let _ = fmt::Write::write_fmt(&mut out, format_args!("{s}"));
            out
        }
    }
}
