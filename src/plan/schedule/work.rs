//! The work of one plan, shared by its lanes: the problem's layout, the
//! lower bound, the placements the portfolio runs; the goal that stops
//! them; the units grants are counted in.

use alloc::vec::Vec;

use super::super::options::{Method, Options, Report};
use crate::base::math::align_up;
use crate::deadline::{Deadline, Poll, Stop};
use crate::heuristic::{Best, Layout, Strategy, Variant};
use crate::model::problem::Problem;

/// Work granted per activity in round 0, per buffer (and at least
/// `UNIT_MIN`): about one cheap placement.
pub(super) const UNIT_PER_BUFFER: u64 = 16;
pub(super) const UNIT_MIN: u64 = 1 << 14;

/// Nodes per exact attempt in round 0; each round multiplies them by 4
/// (an attempt starts over, so a steep growth wastes less).
pub(super) const EXACT_NODES: u64 = 100_000;

use crate::deadline::LateBound;

/// Where a plan one level down hands each placement it publishes, while
/// it runs: the level above lifts it and publishes it there, so that its
/// other lanes take it up at once rather than when the level below ends.
/// It receives the placement's offsets and height.
pub(crate) type Relay<'r> = dyn Fn(&[i64], i64) + Sync + 'r;

/// A problem and its layout, shared by the lanes of one plan.
pub(crate) struct Work<'a> {
    pub(crate) problem: &'a Problem,
    pub(crate) options: &'a Options,
    /// Proven by the first lane through round 0's placements.
    pub(crate) late_bound: Option<&'a LateBound<'a>>,
    pub(crate) deadline: Deadline<'a>,
    pub(crate) layout: Layout,
    /// The max load or the top of the highest fixed buffer (or the
    /// floor given), rounded up to the grain.
    pub(crate) lower_bound: i64,
    /// Every placement's height is a multiple of it
    /// ([`Problem::height_grain`]): bounds round up to it.
    pub(crate) grain: i64,
    /// The placements the portfolio runs: each strategy's plain order,
    /// cheapest first, then the other variants.
    pub(crate) variants: Vec<Variant>,
    /// How many of `variants` are the strategies' own plain orders.
    pub(crate) primary: usize,
    /// The first variant's placement, made before the layout (see
    /// [`crate::heuristic::online_at_once`]): the board starts with it
    /// and no lane runs that variant again.
    pub(crate) at_once: Option<Best>,
    /// With one heuristic asked for, the online order's placement kept
    /// aside: the result only if that heuristic places nothing in the
    /// time (see `plan::arena`); never on the board, never repaired.
    pub(crate) stand_in: Option<Best>,
    /// For a plan one level down: where the board hands each placement it
    /// publishes (see [`Relay`]).
    pub(crate) relay: Option<&'a Relay<'a>>,
}

impl<'a> Work<'a> {
    /// The work each activity is granted in round 0 (doubling each
    /// round after): [`UNIT_PER_BUFFER`] a buffer, at least [`UNIT_MIN`].
    pub(super) fn first_grant(&self) -> u64 {
        (UNIT_PER_BUFFER * self.layout.len() as u64).max(UNIT_MIN)
    }

    /// `floor`: a bound on the height known beforehand (0: none);
    /// `late_bound`: one to prove after the plain orders.
    pub(crate) fn new(
        problem: &'a Problem,
        options: &'a Options,
        deadline: Deadline<'a>,
        floor: i64,
        late_bound: Option<&'a LateBound<'a>>,
    ) -> Result<Work<'a>, Stop> {
        let layout = {
            let mut poll = Poll::new(&deadline, 1 << 16);
            Layout::new(problem, &mut poll)?
        };
        let grain = problem.height_grain();
        let lower_bound = layout.aligned_bound.max(layout.fixed_top).max(floor);
        let lower_bound = align_up(lower_bound, grain);
        let (variants, primary) = choose(options.method);
        Ok(Work {
            problem,
            options,
            late_bound,
            deadline,
            variants,
            primary,
            layout,
            lower_bound,
            grain,
            at_once: None,
            stand_in: None,
            relay: None,
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
    // order: they come with it, before the dearer strategies. Coalescing's
    // plain order comes with them, its layers after the dearer plain
    // orders: with a heavy layer around which it places the rest, its
    // own layers rarely lead, and six of them would hold the coarse
    // level back on a busy machine.
    let cheap = |v: &Variant| v.strategy == Strategy::Online;
    let mut variants: Vec<Variant> = Vec::new();
    for &s in strategies.iter().filter(|s| s.is_online()) {
        variants.push(Variant::plain(s));
    }
    for &s in strategies {
        variants.extend(s.variants().filter(|v| *v != Variant::plain(s) && cheap(v)));
    }
    for &s in strategies.iter().filter(|s| !s.is_online()) {
        variants.push(Variant::plain(s));
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
