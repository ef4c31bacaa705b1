//! The scheduler that fitting and minimising share: which placement,
//! repair or exact attempt runs next, on which core, under one deadline.
//!
//! Each core runs a *lane*. A lane works in rounds; round `r` grants each
//! of its activities `UNIT << r` units of work (the units every placement
//! and step records as it polls, so a grant means the same on every run):
//! 1. the exact search (lane 0, where it applies) with `EXACT_NODES << r`
//!    nodes per attempt: on small problems it gets its chance at once;
//! 2. placements: first every strategy's plain order, cheapest first,
//!    claimed from a counter the lanes share (so they spread over the
//!    cores), all in round 0; then the other variants' plain orders (the
//!    deeper layers), then perturbed restarts of the variants ranked by
//!    their plain heights;
//! 3. local repair of the lane's best placement (see
//!    [`crate::heuristic::Repair`]), a step costing about the buffers near
//!    the peak, not the whole problem.
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
//! restarts, repair and the exact search only come after. The
//! hole-filling strategies keep a segment tree of interval sets that is
//! the largest structure of a plan (hundreds of bytes a buffer): on large
//! problems one lane at a time builds one, so that peak memory does not
//! grow with the cores; a lane that finds one being built takes other
//! work and comes back to it. With one lane the sequence of work does not depend on
//! the clock, so a run with budget 2T does all that a run with budget T
//! does and more: it never ends higher. Lanes publish their best placement
//! to a board at the end of each round and take the board's when it is
//! lower than their own.

mod board;
mod lane;

use alloc::vec::Vec;
use core::sync::atomic::Ordering;

pub(crate) use board::{Board, Incumbent};
use lane::Lane;

use super::options::{Method, Options, Report};
use crate::deadline::{Deadline, Poll, Stop};
use crate::heuristic::{Layout, Strategy, Variant};
use crate::model::problem::Problem;

/// Work granted per activity in round 0, per buffer (and at least
/// `UNIT_MIN`): about one cheap placement.
const UNIT_PER_BUFFER: u64 = 16;
const UNIT_MIN: u64 = 1 << 14;

/// Nodes per exact attempt in round 0; each round multiplies them by 4
/// (an attempt starts over, so a steep growth wastes less).
const EXACT_NODES: u64 = 100_000;

/// A problem and its layout, shared by the lanes of one plan.
pub(crate) struct Work<'a> {
    pub(crate) problem: &'a Problem,
    pub(crate) options: &'a Options,
    pub(crate) deadline: Deadline<'a>,
    pub(crate) layout: Layout,
    /// The max load or the top of the highest fixed buffer.
    pub(crate) lower_bound: i64,
    /// The placements the portfolio runs: each strategy's plain order,
    /// cheapest first, then the other variants.
    pub(crate) variants: Vec<Variant>,
    /// How many of `variants` are the strategies' own plain orders.
    pub(crate) primary: usize,
}

impl<'a> Work<'a> {
    pub(crate) fn new(
        problem: &'a Problem,
        options: &'a Options,
        deadline: Deadline<'a>,
    ) -> Result<Work<'a>, Stop> {
        let layout = {
            let mut poll = Poll::new(&deadline, 1 << 16);
            Layout::new(problem, &mut poll)?
        };
        let lower_bound = layout.aligned_bound.max(layout.fixed_top);
        let (variants, primary) = choose(options.method);
        Ok(Work {
            problem,
            options,
            deadline,
            variants,
            primary,
            layout,
            lower_bound,
        })
    }

    /// Whether the exact search is worth its set-up: its overlap lists take
    /// 8 bytes a pair, so past 10^7 pairs (or 50,000 buffers) its memory,
    /// not its promise, rules it out.
    pub(crate) fn exact_applies(&self) -> bool {
        const EXACT_BUFFERS: usize = 50_000;
        const EXACT_PAIRS: u64 = 10_000_000;
        match self.options.method {
            Method::Exact => true,
            Method::Heuristic(_) => false,
            Method::Auto => {
                self.problem.len() <= EXACT_BUFFERS && self.layout.overlaps <= EXACT_PAIRS
            }
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

/// The placements a method runs, and how many of them come first: each
/// strategy's plain order, cheapest first (the online ones cost O(log n)
/// a buffer whatever the overlaps, so all their layers come here too; the
/// skyline needs every buffer's contention; the hole-filling ones pay for
/// the memory they pass; best-fit walks every hole above a buffer), then
/// the deeper layers of `layered`.
fn choose(method: Method) -> (Vec<Variant>, usize) {
    let strategies: &[Strategy] = match method {
        Method::Heuristic(s) => &[s][..],
        Method::Exact => &[][..],
        Method::Auto => &Strategy::ALL[..],
    };
    // The online strategy's layers cost O(log n) a buffer like its plain
    // order: they come with it, before the dearer strategies.
    let cheap = |v: &Variant| v.strategy == Strategy::Online;
    let mut variants: Vec<Variant> = Vec::new();
    for &s in strategies {
        variants.extend(s.variants().filter(|v| *v == Variant::plain(s) || cheap(v)));
    }
    let primary = variants.len();
    for &s in strategies {
        variants.extend(
            s.variants()
                .filter(|v| *v != Variant::plain(s) && !cheap(v)),
        );
    }
    (variants, primary)
}

/// When the lanes stop: at `target` (fitting), or at the lower bound
/// (minimising).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Goal {
    Fit(i64),
    Minimize,
}

/// What an exact attempt found in one round.
pub(crate) enum Exact {
    /// A placement.
    Found(Incumbent),
    /// Nothing new this round (bounds may have moved on the board).
    Nothing,
    /// Nothing more to try.
    Done,
}

/// The exact part of a plan: one round of attempts with a node limit
/// each. Runs on lane 0.
/// `None` for the node count: the exact search has a core of its own and
/// shares time, not nodes.
pub(crate) type ExactRound<'r> = dyn FnMut(Option<u64>, &Deadline<'_>, &Board) -> Exact + 'r;

/// How the coarse problem is planned when it is worth a share of the
/// time: the objective's own plan, one level down, under the deadline
/// given.
pub(crate) type CoarseSolve<'r> = dyn Fn(&Problem, Deadline<'_>) -> Option<Incumbent> + Sync + 'r;

/// What the lanes found.
pub(crate) struct Found {
    pub(crate) best: Option<Incumbent>,
    pub(crate) lower: i64,
    pub(crate) placements: u64,
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
        Lane {
            work,
            board: &board,
            deadline: &deadline,
            seed: work.options.seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            mine: None,
            repair: None,
            repairing_mine: false,
            ranked: None,
            ranked_at: 0,
            coarse_solve: coarse,
            repaired: 0,
            lanes,
        }
        .run(goal, exact);
        board.halt.store(true, Ordering::Relaxed);
    };
    #[cfg(feature = "std")]
    if lanes > 1 {
        std::thread::scope(|scope| {
            for index in 1..lanes {
                let lane = &lane;
                scope.spawn(move || lane(index, None));
            }
            lane(0, exact);
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
        placements: board.placements.load(Ordering::Relaxed),
        best: board.best.into_inner(),
        stop,
    }
}
