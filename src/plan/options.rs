//! What a plan is asked for ([`Options`]), and the names of its sources
//! and progress reports: types every face of the library shares.

use alloc::sync::Arc;
use core::fmt;
use core::sync::atomic::AtomicBool;
use core::time::Duration;

use crate::deadline::{Clock, Deadline};
use crate::exact::Params;
#[cfg(feature = "heuristics")]
use crate::heuristic::Strategy;

/// What to plan for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Objective {
    /// Any placement below the capacity.
    #[default]
    Fit,
    /// The lowest height (the capacity is an upper bound).
    #[cfg(feature = "heuristics")]
    Minimize,
    /// A placement below the capacity (in every pool) that pays the least
    /// in reuse penalties (see [`crate::Problem::penalize`]).
    #[cfg(feature = "constraints")]
    Penalty,
}

/// Which strategies may run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
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
#[non_exhaustive]
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
    /// A heuristic placement lowered by local repair.
    #[cfg(feature = "heuristics")]
    Repaired,
    /// A placement of the coarse problem (buffers that fit together
    /// exactly merged into rectangles), lifted back.
    #[cfg(feature = "heuristics")]
    Coarsened,
    /// The heaviest buffers placed as a problem of their own, the rest
    /// around them (see `heuristic::heavy`).
    #[cfg(feature = "heuristics")]
    Heaviest,
    /// The walk over orders on a separated kernel's conflict graph.
    #[cfg(feature = "heuristics")]
    Walked,
    /// The penalty objective's priced placement and its search (each
    /// buffer where it pays least).
    #[cfg(all(feature = "heuristics", feature = "constraints"))]
    Priced,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Exact => f.write_str("exact search"),
            #[cfg(feature = "heuristics")]
            Source::Heuristic(s, r) => crate::base::text::fill(
                f,
                "{}, restart {}",
                &[
                    crate::base::text::Arg::S(s.name()),
                    crate::base::text::Arg::U(*r),
                ],
            ),
            #[cfg(feature = "heuristics")]
            Source::Stacked => f.write_str("stacked"),
            #[cfg(feature = "heuristics")]
            Source::Repaired => f.write_str("local repair"),
            #[cfg(feature = "heuristics")]
            Source::Walked => f.write_str("walk over orders"),
            #[cfg(all(feature = "heuristics", feature = "constraints"))]
            Source::Priced => f.write_str("priced search"),
            #[cfg(feature = "heuristics")]
            Source::Coarsened => f.write_str("coarsened problem"),
            #[cfg(feature = "heuristics")]
            Source::Heaviest => f.write_str("heaviest buffers first"),
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
    /// placement found by then is returned. `None` and zero both mean no
    /// timeout, as `timeout_ms = 0` in C and `--timeout=0` on the command
    /// line do.
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
        let timeout = self.timeout.filter(|t| !t.is_zero());
        Deadline::new(self.clock, timeout, self.cancel.as_deref())
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
