//! Fast placements for any number of buffers.
//!
//! - *first-fit*: buffers by decreasing size, each at the lowest offset
//!   where it fits, jumping past every buffer it would collide with (the
//!   shared-memory planner's rule);
//! - *best-fit*: by decreasing size, each into the smallest hole that holds
//!   it (XLA's rule);
//! - *skyline*: by decreasing contention (TelaMalloc's order: the largest
//!   total alive during the buffer's lifetime; ties by size x lifetime²,
//!   then lifetime), each on top of what is placed below it;
//! - *big-rocks*: by decreasing size, then lifetime, first-fit (idealloc's
//!   bootstrap);
//! - *online*: by start time, each into the smallest hole among the
//!   buffers alive then, as a run-time allocator would (see `online.rs`):
//!   O(log n) per buffer whatever the overlaps, for the largest inputs;
//! - *gap-fill*: no order of its own but a choice per gap: the lowest flat
//!   run of the skyline is filled from its left end by a buffer that
//!   starts there and ends inside it, the longest-lived first (see
//!   `gapfill.rs`): what rebuilds memory cut from rectangles with no
//!   waste, guillotine or not.
//!
//! Fixed buffers go first, where they are fixed; alignment and gaps (with
//! windows) hold in every strategy. First-fit and best-fit find holes with
//! `occupancy::Occupancy` in O(log T) merged interval sets per piece; the
//! skyline needs one range-max and one range-raise per piece. No strategy
//! scans buffers pairwise or keeps an array per byte or per time step.
//!
//! `plain` and `perturbed` run a variant in its own order or in a
//! seeded perturbation of it; `Repair` lowers a placement's peak a
//! window at a time; `coarsen` plans a coarser problem whose placements
//! are the original's; `heavy` sets apart the buffers that hold most of
//! the memory, to be placed first. On a conflict graph (separated kernels), `tabu`
//! and `graph_walk` are the planner's walks toward a capacity. The scheduler under [`crate::plan()`] decides which runs
//! when.

pub(crate) mod coarsen;
mod gapfill;
#[cfg(feature = "constraints")]
mod graph_walk;
pub(crate) mod heavy;
mod layout;
mod occupancy;
mod online;
mod order;
mod place;
#[cfg(feature = "constraints")]
pub(crate) mod priced;
mod repair;
mod restarts;
mod shares;
mod strategy;
#[cfg(feature = "constraints")]
mod tabu;

#[cfg(feature = "constraints")]
pub(crate) use graph_walk::{Aim, GraphWalk};
pub(crate) use layout::{stack, Layout, Stacked};
pub(crate) use online::online_at_once;
pub(crate) use repair::Repair;
#[cfg(test)]
pub(crate) use restarts::plain_online;
pub use restarts::{default_count, Best};
pub(crate) use restarts::{perturbed, plain};
pub(crate) use shares::Shares;
pub use strategy::{BadStrategy, Strategy, Variant};

#[cfg(any(test, feature = "internals"))]
use {crate::deadline::Poll, crate::model::problem::Problem};

/// Places every buffer of `problem` with `strategy` in its plain order,
/// as low as it goes (the capacity is not consulted). `None` if fixed
/// buffers overlap, so that nothing can be placed.
#[cfg(any(test, feature = "internals"))]
pub fn run(problem: &Problem, strategy: Strategy) -> Option<crate::model::solution::Solution> {
    run_variant(problem, Variant::plain(strategy))
}

/// [`run`] for one variant (a strategy with the depth of its layer).
/// Colocations and separations are honoured as [`crate::plan()`] honours
/// them: on the problem lowered to plain buffers.
#[cfg(any(test, feature = "internals"))]
pub fn run_variant(
    problem: &Problem,
    variant: Variant,
) -> Option<crate::model::solution::Solution> {
    #[cfg(feature = "constraints")]
    if !problem.links().is_empty() {
        let lowered = problem.lowered().ok()?;
        let s = run_variant(&lowered.problem, variant)?;
        return Some(crate::model::solution::Solution {
            offsets: lowered.lift(&s.offsets),
        });
    }
    let deadline = crate::deadline::Deadline::none();
    let mut poll = Poll::new(&deadline, u64::MAX);
    let layout = Layout::new(problem, &mut poll).ok()?;
    if layout.fixed_clash {
        return None;
    }
    let order = layout.order(variant, None, &mut poll).ok()?;
    let (offsets, _) = layout.place(variant, &order, i64::MAX, &mut poll).ok()??;
    Some(crate::model::solution::Solution { offsets })
}
