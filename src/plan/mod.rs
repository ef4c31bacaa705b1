//! The one entry point: [`plan`] chooses the strategies for a problem under
//! one deadline. The C ABI and the CLI call this and nothing below it.
//!
//! The parts, each in its own file, imports going down only:
//! - `options`: what a plan is asked for and what it returns;
//! - `fit` (below a capacity) and `minimize` (the lowest height): what
//!   each objective needs of the parts below, and how its answer is read;
//! - `schedule`: the work both share, the portfolio of placements, local
//!   repair, improving restarts and the exact search, spread over the
//!   cores under one deadline.
//!
//! Without the heuristics (the tiny build), the exact search alone runs.

#[cfg(feature = "constraints")]
mod explain;
#[cfg(feature = "heuristics")]
mod fit;
#[cfg(feature = "heuristics")]
mod minimize;
mod options;
#[cfg(feature = "constraints")]
mod pools;
#[cfg(feature = "heuristics")]
mod schedule;

#[cfg(feature = "constraints")]
pub use explain::Conflict;
pub use options::*;
#[cfg(feature = "constraints")]
pub use pools::{PoolReport, Pooled};

use crate::deadline::Deadline;
use crate::model::problem::Problem;
use crate::solution::Solution;
use crate::solver::{self, Verdict};

/// Plans `problem`: offsets below its capacity (or of the lowest height,
/// when minimising), or a proof that none exist, or the reason it stopped.
pub fn plan(problem: &Problem, options: &Options) -> Outcome {
    #[cfg(feature = "constraints")]
    if !problem.pools().is_empty() {
        return pools::plan_pools(problem, options);
    }
    #[cfg(feature = "constraints")]
    if !problem.links().is_empty() {
        return plan_linked(problem, options);
    }
    let deadline = options.deadline();
    if let Err(stop) = deadline.check() {
        return Outcome::empty(0).stop(stop);
    }
    #[cfg(feature = "heuristics")]
    let mut outcome = if options.method != Method::Exact || options.objective != Objective::Fit {
        plan_with_heuristics(problem, options, deadline)
    } else {
        exact_only(problem, options, &deadline)
    };
    #[cfg(not(feature = "heuristics"))]
    let mut outcome = exact_only(problem, options, &deadline);
    // Whatever found it, a placement at the proven bound is optimal.
    if let Some(s) = &outcome.solution {
        outcome.optimal = s.height(problem) <= outcome.lower_bound;
    }
    #[cfg(feature = "constraints")]
    if outcome.status == Status::Infeasible && options.objective == Objective::Fit {
        let nodes = outcome.stats.nodes;
        outcome.conflict = Some(explain::explain(problem, options, &deadline, nodes));
    }
    outcome
}

/// Plans a problem with colocations or separations: on its lowering to
/// plain buffers (see `crate::model::links::Lowered`), read back per buffer.
#[cfg(feature = "constraints")]
fn plan_linked(problem: &Problem, options: &Options) -> Outcome {
    match problem.lowered() {
        Ok(lowered) => {
            let mut outcome = plan(&lowered.problem, options);
            if let Some(s) = outcome.solution.take() {
                outcome.solution = Some(Solution {
                    offsets: lowered.lift(&s.offsets),
                });
            }
            // A conflict among lowered buffers names all their members.
            if let Some(c) = &mut outcome.conflict {
                let by_unit = lowered.members();
                let mut members: alloc::vec::Vec<usize> = c
                    .buffers
                    .iter()
                    .flat_map(|&u| by_unit[u].iter().copied())
                    .collect();
                members.sort_unstable();
                c.buffers = members;
            }
            outcome
        }
        // The links are checked as they are made, so the lowering is
        // valid; should it not be, no placement is claimed.
        Err(_) => {
            let mut outcome = Outcome::empty(0);
            outcome.status = Status::NotFound;
            outcome
        }
    }
}

#[cfg(feature = "heuristics")]
fn plan_with_heuristics(problem: &Problem, options: &Options, deadline: Deadline<'_>) -> Outcome {
    let work = match schedule::Work::new(problem, options, deadline) {
        Ok(work) => work,
        Err(stop) => {
            let mut outcome = match options.objective {
                Objective::Minimize => minimize::stopped_early(problem, stop),
                Objective::Fit => Outcome::empty(0).stop(stop),
            };
            outcome.stats.elapsed = deadline.elapsed();
            return outcome;
        }
    };
    let mut outcome = match options.objective {
        Objective::Fit => fit::fit(&work),
        Objective::Minimize => minimize::minimize(&work),
    };
    outcome.stats.elapsed = work.deadline.elapsed();
    outcome
}

/// The exact search alone, at the problem's capacity.
fn exact_only(problem: &Problem, options: &Options, deadline: &Deadline<'_>) -> Outcome {
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
