//! The one entry point: [`plan`] chooses the strategies for a problem under
//! one deadline. The C ABI and the CLI call this and nothing below it.
//!
//! The parts, each in its own file, imports going down only:
//! - `options` and `outcome`: what a plan is asked for and what it returns;
//! - `spill` (several pools: which buffers go where) above `arena` (one
//!   arena: links lowered, then the objective's plan, and an explanation
//!   when it cannot fit);
//! - `penalty` (the least reuse penalty) above both: it fits the problem
//!   with more and more of its penalised pairs separated;
//! - `fit` (below a capacity) and `minimize` (the lowest height): what
//!   each objective needs of the parts below, and how its answer is read;
//! - `schedule`: the work both share, the portfolio of placements, local
//!   repair, improving restarts and the exact search, spread over the
//!   cores under one deadline.
//!
//! Without the heuristics (the tiny build), the exact search alone runs.

mod arena;
mod exact_call;
#[cfg(feature = "constraints")]
mod explain;
#[cfg(feature = "heuristics")]
mod fit;
#[cfg(feature = "heuristics")]
mod minimize;
mod options;
mod outcome;
#[cfg(feature = "constraints")]
mod penalty;
#[cfg(feature = "heuristics")]
mod schedule;
#[cfg(feature = "constraints")]
mod spill;

pub use options::*;

pub use outcome::{describe, Outcome, Status};
#[cfg(feature = "constraints")]
pub use outcome::{Conflict, PenaltyReport, PoolReport, Pooled};

use crate::model::problem::Problem;

/// Plans `problem`: offsets below its capacity (or of the lowest height,
/// when minimising), or a proof that none exist, or the reason it stopped.
/// With pools, the spilling step shares the buffers out and plans each
/// pool as an arena; without, the problem is one arena.
pub fn plan(problem: &Problem, options: &Options) -> Outcome {
    #[cfg(feature = "constraints")]
    if options.objective == Objective::Penalty {
        return penalty::plan_penalty(problem, options);
    }
    #[cfg(feature = "constraints")]
    if !problem.pools().is_empty() {
        return spill::plan_pools(problem, options);
    }
    arena::plan_arena(problem, options)
}

/// The height first-fit reaches on `problem` (its links honoured; one
/// thread, no restarts), or the max load where it places nothing: a quick
/// placement's height, such as `gen::kernel_with_memories` draws its
/// memories' capacities against.
#[cfg(feature = "heuristics")]
pub fn first_fit_height(problem: &Problem) -> i64 {
    let first_fit = Options {
        objective: Objective::Minimize,
        method: Method::Heuristic(crate::heuristic::Strategy::FirstFit),
        restarts: Some(0),
        threads: 1,
        ..Options::default()
    };
    plan(problem, &first_fit).solution.map_or_else(
        || crate::model::load::max_load(problem),
        |s| s.height(problem),
    )
}
