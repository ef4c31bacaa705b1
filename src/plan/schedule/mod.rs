//! The scheduler that fitting and minimising share: which placement,
//! repair or exact attempt runs next, on which core, under one deadline.
//!
//! Each core runs a *lane*. A lane works in rounds; round `r` grants each
//! of its activities `UNIT << r` units of work (the units every placement
//! and step records as it polls, so a grant means the same on every run):
//! 1. the exact search (lane 0, where it applies) with `EXACT_NODES << r`
//!    nodes per attempt: on small problems it gets its chance at once;
//!    alone on its core with a timeout, a round also takes no more time
//!    than the rest of the lane's work earns it (see `turns.rs`);
//! 2. placements: first every strategy's plain order, cheapest first,
//!    claimed from a counter the lanes share (so they spread over the
//!    cores), all in round 0; the coarse level (see `coarse.rs`) and the
//!    heaviest buffers first (see `heavy.rs`), each once, by one lane;
//!    then the other variants' plain orders (the deeper layers), then
//!    perturbed restarts of the variants ranked by their plain heights;
//! 3. local repair of the lane's best placement (see
//!    [`crate::heuristic::Repair`]), a step costing about the buffers near
//!    the peak, not the whole problem.
//!
//! Once the plain orders are out, the placements (the restarts) and the
//! repair split two grants a round by the part of the gap each closed per
//! unit of work so far, each keeping a quarter: on some families the
//! restarts find the lower placements, on others the repair, and which is
//! known only by running both.
//!
//! No stage holds back what it has: a lane planning the coarse level
//! (see `coarse.rs`) lifts each placement the level below publishes onto
//! the board as it comes (a [`Relay`]), and hands on what its finer
//! level's repair lowers every few steps; a lane repairing the whole
//! problem stops as soon as the board holds a lower placement, and takes
//! that one up. So the other lanes work from the lowest placement known,
//! and a deadline that falls during a long stage finds its progress, not
//! its starting point.
//!
//! A placement that overdraws its grant runs to its end and the debt is
//! paid from the next rounds, so nothing is cut short but by the deadline,
//! and the grants double so that every activity keeps a fair share however
//! long the budget. No plain order is ever left out for its cost: the
//! portfolio must never end above one of its own strategies given the
//! time that strategy needs (see "Dominance" below).
//!
//! Dominance. With one lane, round 0 runs each strategy's plain order
//! before anything else, cheapest first, so a budget of twice the time
//! they take together never ends above the best of them; perturbed
//! restarts, repair and the exact search only come after. A plain order
//! stops once a buffer's top reaches the lowest plain height finished (it
//! could only end there or higher), and a perturbed restart once it
//! reaches the lane's best: on a large problem a hole-filling order that
//! cannot win costs a few percent of its run, not minutes, and the
//! improving work behind it starts. The
//! hole-filling strategies keep a segment tree of interval sets that is
//! the largest structure of a plan (hundreds of bytes a buffer): on large
//! problems one lane at a time builds one, so that peak memory does not
//! grow with the cores; a lane that finds one being built takes other
//! work and comes back to it. With one lane the sequence of work does not depend on
//! the budget (without a timeout it does not depend on the clock at all;
//! with one, the exact rounds' share follows the time each side took,
//! never the time left), so a run with budget 2T does all that a run with
//! budget T does and more: it never ends higher. Lanes publish their best placement
//! to a board at the end of each round and take the board's when it is
//! lower than their own.

mod board;
mod coarse;
mod heavy;
mod lane;
mod repair;
mod turns;
mod work;

use core::sync::atomic::Ordering;

pub(crate) use board::{Board, Incumbent};
use lane::Lane;
pub(crate) use lane::{CoarseSolve, Exact, ExactRound};
pub(crate) use work::{Goal, Relay, Work};

use crate::deadline::Stop;

/// What the lanes found.
pub(crate) struct Found {
    pub(crate) best: Option<Incumbent>,
    pub(crate) lower: i64,
    /// The perturbed restarts among them.
    pub(crate) restarts: u64,
    /// The lowest height of the plain orders run, if any ran.
    pub(crate) plain_height: Option<i64>,
    pub(crate) stop: Option<Stop>,
}

/// Runs the lanes until the goal is met, the deadline passes, or (without
/// a timeout) the default amount of work is done.
pub(crate) fn run(
    work: &Work<'_>,
    goal: Goal,
    exact: Option<&mut ExactRound<'_>>,
    coarse: Option<&CoarseSolve<'_>>,
) -> Found {
    let board = Board::new(work, work.lower_bound);
    // Without a timeout, or with a count of restarts, the result must not
    // depend on the clock: one lane, whose work does not.
    let reproducible = work.deadline.remaining().is_none() || work.options.restarts.is_some();
    let lanes = if work.variants.is_empty() || reproducible {
        1
    } else {
        work.options.workers().max(1)
    };
    let deadline = work.deadline.with_halt(&board.halt);
    let lane = |index: usize, exact: Option<&mut ExactRound<'_>>| {
        Lane::new(work, &board, &deadline, index, lanes, coarse).run(goal, exact);
        board.halt.store(true, Ordering::Relaxed);
    };
    #[cfg(feature = "std")]
    if lanes > 1 {
        std::thread::scope(|scope| {
            let handles: alloc::vec::Vec<_> = (1..lanes)
                .map(|index| {
                    let lane = &lane;
                    scope.spawn(move || lane(index, None))
                })
                .collect();
            lane(0, exact);
            // Joined one by one, each thread has exited when the plan
            // returns, its thread-locals freed (the scope's own wait ends
            // when the closures do, before that: LeakSanitizer under the
            // fuzzer saw a lane's 32-byte thread-exit node as a leak).
            for handle in handles {
                if let Err(panic) = handle.join() {
                    std::panic::resume_unwind(panic);
                }
            }
        });
    } else {
        lane(0, exact);
    }
    #[cfg(not(feature = "std"))]
    {
        let _ = lanes;
        lane(0, exact);
    }
    let stop = work.deadline.check().err();
    Found {
        lower: board.lower(),
        restarts: board.restarts.load(Ordering::Relaxed),
        plain_height: Some(board.best_plain()).filter(|&h| h < board::CUT),
        best: board.best.into_inner(),
        stop,
    }
}
