//! The one entry point: [`plan`] chooses the strategy for a problem under
//! one deadline. The C ABI and the CLI call this and nothing below it.

use alloc::sync::Arc;
use core::sync::atomic::AtomicBool;
use core::time::Duration;

use crate::deadline::{Clock, Deadline, Stop};
use crate::problem::Problem;
use crate::solution::Solution;
use crate::solver::{self, Params, Stats, Verdict};

/// How to plan.
#[derive(Clone, Debug)]
pub struct Options {
    /// Stop after this long (needs a clock).
    pub timeout: Option<Duration>,
    /// Stop when this flag becomes true; another thread may set it.
    pub cancel: Option<Arc<AtomicBool>>,
    /// Monotonic nanoseconds. Defaults to the standard clock with the
    /// `std` feature; without it, timeouts need a clock from the caller.
    pub clock: Option<Clock>,
    /// Rules and orderings of the exact search.
    pub solver: Params,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            timeout: None,
            cancel: None,
            #[cfg(feature = "std")]
            clock: Some(crate::deadline::std_clock),
            #[cfg(not(feature = "std"))]
            clock: None,
            solver: Params::default(),
        }
    }
}

impl Options {
    /// The deadline these options describe, starting now.
    pub fn deadline(&self) -> Deadline<'_> {
        Deadline::new(self.clock, self.timeout, self.cancel.as_deref())
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
    /// search (stacking every pair) does not try.
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
    /// What the search did.
    pub stats: Stats,
}

impl Outcome {
    /// Height of the solution (0 if there is none).
    pub fn height(&self, problem: &Problem) -> i64 {
        self.solution.as_ref().map_or(0, |s| s.height(problem))
    }
}

/// Plans `problem`: offsets below its capacity, or a proof that none
/// exist, or the reason it stopped.
pub fn plan(problem: &Problem, options: &Options) -> Outcome {
    let deadline = options.deadline();
    let (verdict, stats) = solver::solve(problem, problem.capacity(), &options.solver, &deadline);
    let (status, solution) = match verdict {
        Verdict::Solved(offsets) => (Status::Solved, Some(Solution { offsets })),
        Verdict::Infeasible => (Status::Infeasible, None),
        Verdict::Exhausted | Verdict::NodeLimit => (Status::NotFound, None),
        Verdict::Stopped(Stop::TimedOut) => (Status::TimedOut, None),
        Verdict::Stopped(Stop::Cancelled) => (Status::Cancelled, None),
    };
    Outcome {
        status,
        solution,
        stats,
    }
}
