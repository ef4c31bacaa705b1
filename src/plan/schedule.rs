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

use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};

use super::options::{Method, Options, Report, Source};
use crate::deadline::{Deadline, Poll, Stop};
use crate::heuristic::{self, Best, Layout, Repair, Strategy, Variant};
use crate::problem::Problem;

/// Work granted per activity in round 0, per buffer (and at least
/// `UNIT_MIN`): about one cheap placement.
const UNIT_PER_BUFFER: u64 = 16;
const UNIT_MIN: u64 = 1 << 14;

/// Above this many buffers, one hole-filling tree is built at a time: each
/// takes up to a kilobyte a buffer (about 700 bytes measured on 100,000),
/// so two at once would pass a quarter of a gigabyte here, and a
/// gigabyte or more at a million. Below it the lanes build theirs side by
/// side.
const ONE_TREE_ABOVE: usize = 1 << 17;

/// Nodes per exact attempt in round 0; each round multiplies them by 4
/// (an attempt starts over, so a steep growth wastes less).
const EXACT_NODES: u64 = 100_000;

/// Variants whose plain placement is more than this many times as far
/// above the lower bound as the best one get no restarts: none has been
/// seen to win by perturbation from there.
const RESTART_CUTOFF: i64 = 4;

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

/// The best placement a lane or the board holds.
#[derive(Clone, Debug)]
pub(crate) struct Incumbent {
    pub(crate) offsets: Vec<i64>,
    pub(crate) height: i64,
    pub(crate) source: Source,
}

impl Incumbent {
    fn from_best(b: Best) -> Incumbent {
        Incumbent {
            source: Source::Heuristic(b.variant.strategy, b.restart),
            offsets: b.offsets,
            height: b.height,
        }
    }
}

/// A value the lanes share: behind a lock with `std`; without it there is
/// one lane and no lock is needed.
struct Slot<T> {
    #[cfg(feature = "std")]
    inner: std::sync::Mutex<T>,
    #[cfg(not(feature = "std"))]
    inner: core::cell::RefCell<T>,
}

impl<T> Slot<T> {
    fn new(value: T) -> Self {
        Slot {
            #[cfg(feature = "std")]
            inner: std::sync::Mutex::new(value),
            #[cfg(not(feature = "std"))]
            inner: core::cell::RefCell::new(value),
        }
    }

    fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        #[cfg(feature = "std")]
        let mut guard = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        #[cfg(not(feature = "std"))]
        let mut guard = self.inner.borrow_mut();
        f(&mut guard)
    }

    fn into_inner(self) -> T {
        #[cfg(feature = "std")]
        return self.inner.into_inner().unwrap_or_else(|e| e.into_inner());
        #[cfg(not(feature = "std"))]
        return self.inner.into_inner();
    }
}

/// What the lanes share.
pub(crate) struct Board {
    /// The next plain placement to run, and the heights of those run
    /// (`i64::MAX`: not yet).
    next_plain: AtomicUsize,
    plain_heights: Vec<AtomicI64>,
    /// Plain orders claimed while another lane held `holes`: run later.
    deferred: Slot<Vec<usize>>,
    /// Held by the lane running a hole-filling placement.
    holes: AtomicBool,
    /// Whether hole-filling placements take `holes` (one at a time).
    one_tree: bool,
    /// Plain orders finished.
    plain_done: AtomicUsize,
    /// Set when a lane has taken the coarse level (see
    /// [`heuristic::coarsen`]), which runs once, after the strategies'
    /// plain orders.
    coarse_taken: AtomicBool,
    /// The last perturbed restart number handed out.
    next_restart: AtomicU64,
    /// Placements run (plain and perturbed).
    pub(crate) placements: AtomicU64,
    /// The lowest height published, and its placement.
    height: AtomicI64,
    best: Slot<Option<Incumbent>>,
    /// The proven lower bound.
    lower: AtomicI64,
    /// Set when the lanes may stop.
    halt: AtomicBool,
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

impl Board {
    fn new(work: &Work<'_>, lower: i64) -> Board {
        Board {
            next_plain: AtomicUsize::new(0),
            plain_heights: (0..work.variants.len())
                .map(|_| AtomicI64::new(i64::MAX))
                .collect(),
            deferred: Slot::new(Vec::new()),
            holes: AtomicBool::new(false),
            one_tree: work.layout.len() > ONE_TREE_ABOVE,
            plain_done: AtomicUsize::new(0),
            coarse_taken: AtomicBool::new(false),
            next_restart: AtomicU64::new(0),
            placements: AtomicU64::new(0),
            height: AtomicI64::new(i64::MAX),
            best: Slot::new(None),
            lower: AtomicI64::new(lower),
            halt: AtomicBool::new(false),
        }
    }

    /// Whether any of the first `upto` plain orders, or the coarse level,
    /// is still to run.
    fn plain_left(&self, upto: usize) -> bool {
        self.next_plain.load(Ordering::Relaxed) < upto
            || self.deferred.with(|d| d.iter().any(|&i| i < upto))
            || !self.coarse_taken.load(Ordering::Relaxed)
    }

    /// Whether the caller takes the coarse level now: once the
    /// strategies' own plain orders have all been claimed.
    fn take_coarse(&self, primary: usize) -> bool {
        self.next_plain.load(Ordering::Relaxed) >= primary
            && !self.coarse_taken.load(Ordering::Relaxed)
            && !self.coarse_taken.swap(true, Ordering::Relaxed)
    }

    /// The next plain order to run, and whether the caller now holds
    /// `holes` (and must release it): one deferred for the tree when the
    /// tree is free, else the next in line; a hole-filling one met while
    /// another lane holds the tree is deferred. `None`: none can run now.
    fn claim_plain(&self, variants: &[Variant]) -> Option<(usize, bool)> {
        let take_tree = || {
            self.holes
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        };
        if take_tree() {
            // Deferred ones are in claim order: the first is the cheapest.
            match self.deferred.with(|d| (!d.is_empty()).then(|| d.remove(0))) {
                Some(i) => return Some((i, true)),
                None => self.holes.store(false, Ordering::Release),
            }
        }
        loop {
            let i = self.next_plain.fetch_add(1, Ordering::Relaxed);
            if i >= variants.len() {
                // Keep the counter from running on past the end.
                self.next_plain.store(variants.len(), Ordering::Relaxed);
                return None;
            }
            if !self.one_tree || !variants[i].strategy.fills_holes() {
                return Some((i, false));
            }
            if take_tree() {
                return Some((i, true));
            }
            self.deferred.with(|d| d.push(i));
        }
    }

    /// The lowest height published (`i64::MAX`: none).
    pub(crate) fn height(&self) -> i64 {
        self.height.load(Ordering::Relaxed)
    }

    /// The proven lower bound.
    pub(crate) fn lower(&self) -> i64 {
        self.lower.load(Ordering::Relaxed)
    }

    /// Raises the proven lower bound.
    pub(crate) fn prove(&self, bound: i64) {
        self.lower.fetch_max(bound, Ordering::Relaxed);
    }

    /// Keeps `inc` if it is the lowest yet; whether it was.
    fn publish(&self, work: &Work<'_>, inc: &Incumbent) -> bool {
        // `i64::MAX` is also a height (a max load of 2^63 - 1): equal to
        // the mark for none, the slot below decides.
        if inc.height > self.height() {
            return false;
        }
        let kept = self.best.with(|best| {
            if best.as_ref().is_some_and(|b| b.height <= inc.height) {
                return false;
            }
            *best = Some(inc.clone());
            self.height.fetch_min(inc.height, Ordering::Relaxed);
            true
        });
        if kept {
            work.report(Some(inc.height), self.lower());
        }
        kept
    }

    fn done(&self, goal: Goal) -> bool {
        let (height, lower) = (self.height(), self.lower());
        // `i64::MAX` stands for no placement yet (a capacity may be that).
        let placed = height < i64::MAX || self.best.with(|b| b.is_some());
        match goal {
            Goal::Fit(capacity) => (placed && height <= capacity) || lower > capacity,
            Goal::Minimize => placed && height <= lower,
        }
    }
}

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

struct Lane<'w, 'a> {
    work: &'w Work<'a>,
    board: &'w Board,
    deadline: &'w Deadline<'w>,
    /// The lane's own seed, for its repairs.
    seed: u64,
    /// The lane's best placement, unless the repair holds a lower one.
    mine: Option<Incumbent>,
    repair: Option<Repair<'w>>,
    /// Whether the repair works on the lane's best placement (else it
    /// is reset to it before its next step).
    repairing_mine: bool,
    ranked: Option<Vec<Variant>>,
    /// How many plain orders had finished when `ranked` was made.
    ranked_at: usize,
    coarse_solve: Option<&'w CoarseSolve<'w>>,
    /// Repairs begun, for their seeds.
    repaired: u64,
    /// Lanes running.
    lanes: usize,
}

impl Lane<'_, '_> {
    fn run(&mut self, goal: Goal, mut exact: Option<&mut ExactRound<'_>>) {
        let n = self.work.layout.len() as u64;
        let unit = (UNIT_PER_BUFFER * n).max(UNIT_MIN);
        let timed = self.work.deadline.remaining().is_some();
        let quota = self
            .work
            .options
            .restarts
            .unwrap_or_else(|| heuristic::default_count(n as usize));
        let (mut placing, mut repairing) = (0i64, 0i64);
        let mut exact_done = exact.is_none();
        for round in 0u32.. {
            if self.board.done(goal) || self.deadline.check().is_err() {
                break;
            }
            let grant = i64::try_from(unit << round.min(40)).unwrap_or(i64::MAX / 4);
            // With other lanes placing, lane 0 gives its time to the
            // exact search until that is done (after round 0's placements).
            let placing_here = exact_done || self.lanes == 1 || round == 0;
            placing = placing.saturating_add(grant).min(grant);
            // Every strategy's plain order runs in round 0, whatever the
            // grant.
            let plain_left = || round == 0 && self.board.plain_left(self.work.primary);
            while placing_here && (placing > 0 || plain_left()) && !self.board.done(goal) {
                match self.place_one() {
                    Some(Ok(used)) => placing -= used as i64,
                    Some(Err(_)) => return self.publish(),
                    None => break,
                }
            }
            self.publish();
            if self.board.done(goal) {
                break;
            }
            if let Some(ex) = exact.as_deref_mut().filter(|_| !exact_done) {
                let nodes = (self.lanes == 1).then(|| EXACT_NODES << (2 * round).min(40));
                match ex(nodes, self.deadline, self.board) {
                    Exact::Found(inc) => self.offer(inc),
                    Exact::Nothing => {}
                    Exact::Done => exact_done = true,
                }
                self.publish();
                if self.board.done(goal) {
                    break;
                }
            }
            // While plain placements remain, repair takes less: they are
            // what the portfolio measures first.
            let plain_left = self.board.plain_left(self.work.variants.len());
            repairing = repairing
                .saturating_add(if plain_left { grant / 4 } else { grant })
                .min(grant);
            if placing_here && self.repair_for(&mut repairing, goal).is_err() {
                return self.publish();
            }
            self.publish();
            self.adopt();
            if !timed || self.work.options.restarts.is_some() {
                let placed = self.board.placements.load(Ordering::Relaxed);
                let variants = self.work.variants.len() as u64;
                if placed >= quota.saturating_add(variants) && exact_done {
                    break;
                }
                if self.work.variants.is_empty() && exact_done {
                    break;
                }
            }
        }
        self.publish();
    }

    /// One placement: the next plain order, or else the next perturbed
    /// restart. Returns the work it took, or `None` with nothing to run.
    fn place_one(&mut self) -> Option<Result<u64, Stop>> {
        let layout = &self.work.layout;
        let variants = &self.work.variants;
        // A unit of a hole-filling placement can be a tree walk of a
        // microsecond: the clock is read every 2048 units.
        let mut poll = Poll::new(self.deadline, 1 << 11);
        if self.board.take_coarse(self.work.primary) {
            return Some(self.coarse(&mut poll).map(|()| poll.used().max(1)));
        }
        let placed = if let Some((i, holes)) = self.board.claim_plain(variants) {
            let found = heuristic::plain(layout, variants[i], &mut poll);
            if holes {
                self.board.holes.store(false, Ordering::Release);
            }
            if let Ok(b) = &found {
                self.board.plain_heights[i].store(b.height, Ordering::Relaxed);
                self.board.plain_done.fetch_add(1, Ordering::Relaxed);
            }
            found
        } else {
            // Ranked again whenever another plain order has finished.
            let done = self.board.plain_done.load(Ordering::Relaxed);
            if self.ranked.is_none() || self.ranked_at != done {
                self.ranked = Some(self.rank());
                self.ranked_at = done;
            }
            let ranked = self.ranked.as_deref().unwrap_or(&[]);
            if ranked.is_empty() {
                return None;
            }
            let j = self.board.next_restart.fetch_add(1, Ordering::Relaxed) + 1;
            heuristic::perturbed(layout, ranked, j, self.seed_for_restarts(), &mut poll)
        };
        Some(placed.map(|b| {
            self.board.placements.fetch_add(1, Ordering::Relaxed);
            self.offer(Incumbent::from_best(b));
            poll.used().max(1)
        }))
    }

    /// Every strategy's plain order on the coarse problem, if buffers
    /// merge (see [`heuristic::coarsen`]), each lifted back and offered.
    fn coarse(&mut self, poll: &mut Poll<'_>) -> Result<(), Stop> {
        if self.work.variants.is_empty() {
            return Ok(());
        }
        let Some(coarse) = heuristic::coarsen::coarsen(self.work.problem, poll)? else {
            return Ok(());
        };
        // Half as many buffers or fewer: else the coarse problem is
        // nearly this one, and its placements near repeats of those run
        // already (real graphs merge a quarter of their buffers).
        if 2 * coarse.problem.len() > self.work.problem.len() {
            return Ok(());
        }
        let layout = Layout::new(&coarse.problem, poll)?;
        if layout.fixed_clash {
            return Ok(());
        }
        for &variant in &self.work.variants[..self.work.primary] {
            let b = heuristic::plain(&layout, variant, poll)?;
            self.board.placements.fetch_add(1, Ordering::Relaxed);
            self.offer(Incumbent {
                offsets: coarse.lift(&b.offsets),
                height: b.height,
                source: Source::Coarsened,
            });
        }
        // A smaller problem, on which the exact search and repair reach
        // further: it gets half the time left (with a timeout; without
        // one, plans stay cheap).
        if let (Some(solve), Some(left)) = (self.coarse_solve, self.deadline.remaining()) {
            drop(layout);
            if let Some(inc) = solve(&coarse.problem, self.deadline.sooner(left / 2)) {
                self.offer(Incumbent {
                    offsets: coarse.lift(&inc.offsets),
                    height: inc.height,
                    source: Source::Coarsened,
                });
            }
            poll.now()?;
        }
        Ok(())
    }

    /// Perturbed restarts are numbered across the lanes, so they share
    /// one seed: the same restart number gives the same order anywhere.
    fn seed_for_restarts(&self) -> u64 {
        self.work.options.seed
    }

    /// The variants worth restarting, by the heights of their plain
    /// placements, lowest first (ties: cheapest first); those not run yet
    /// come last.
    fn rank(&self) -> Vec<Variant> {
        let lower = self.board.lower();
        let mut heights: Vec<(i64, usize)> = self
            .board
            .plain_heights
            .iter()
            .enumerate()
            .map(|(i, h)| (h.load(Ordering::Relaxed), i))
            .collect();
        heights.sort_unstable();
        let excess = |h: i64| h.saturating_sub(lower).max(0);
        let cut = heights
            .first()
            .map_or(0, |&(h, _)| excess(h).saturating_mul(RESTART_CUTOFF));
        heights
            .into_iter()
            .filter(|&(h, _)| h == i64::MAX || excess(h) <= cut)
            .map(|(_, i)| self.work.variants[i])
            .collect()
    }

    /// Takes `inc` if it is lower than the lane's best.
    fn offer(&mut self, inc: Incumbent) {
        let none = self.mine.is_none() && !(self.repairing_mine && self.repair.is_some());
        if inc.height < self.height() || none {
            self.board.publish(self.work, &inc);
            self.mine = Some(inc);
            self.repairing_mine = false;
        }
    }

    /// The lane's best height (`i64::MAX`: none).
    fn height(&self) -> i64 {
        match (&self.repair, &self.mine) {
            (Some(r), Some(m)) if self.repairing_mine => r.height().min(m.height),
            (None, Some(m)) => m.height,
            _ => i64::MAX,
        }
    }

    /// Repair steps while the grant lasts.
    fn repair_for(&mut self, credit: &mut i64, goal: Goal) -> Result<(), Stop> {
        let Some(mine) = &self.mine else {
            return Ok(());
        };
        if self.work.layout.fixed_clash {
            return Ok(());
        }
        let target = match goal {
            Goal::Fit(capacity) => capacity,
            Goal::Minimize => self.board.lower(),
        };
        let mut poll = Poll::new(self.deadline, 1 << 12);
        self.repaired += 1;
        let seed = self.seed ^ self.repaired.wrapping_mul(0xD6E8_FEB8_6659_FD93);
        match self.repair.as_mut() {
            // The index over time is the layout's: built once a lane.
            None => {
                let offsets = mine.offsets.clone();
                self.repair = Some(Repair::new(&self.work.layout, offsets, seed, &mut poll)?);
            }
            Some(r) if !self.repairing_mine => r.reset(mine.offsets.clone(), seed),
            Some(_) => {}
        }
        self.repairing_mine = true;
        let Some(repair) = self.repair.as_mut() else {
            return Ok(());
        };
        let mut stalled = 0u32;
        while *credit > 0 && repair.height() > target {
            let before = poll.used();
            let lowered = repair.step(target, &mut poll)?;
            *credit -= (poll.used() - before).max(1) as i64;
            // Peaks that a window cannot lower (a fixed buffer on top):
            // stop spending on them.
            stalled = if lowered { 0 } else { stalled + 1 };
            if stalled > 1 << 16 {
                break;
            }
        }

        Ok(())
    }

    /// Publishes the lane's best if the repair lowered it or it is new.
    fn publish(&mut self) {
        if let Some(repair) = self.repair.as_ref().filter(|_| self.repairing_mine) {
            let mine = self.mine.as_ref().map_or(i64::MAX, |m| m.height);
            if repair.height() < mine {
                self.mine = Some(Incumbent {
                    offsets: repair.offsets().to_vec(),
                    height: repair.height(),
                    source: Source::Repaired,
                });
            }
        }
        if let Some(mine) = &self.mine {
            self.board.publish(self.work, mine);
        }
    }

    /// Takes the board's placement when it is lower than the lane's.
    fn adopt(&mut self) {
        if self.board.height() >= self.height() {
            return;
        }
        if let Some(b) = self.board.best.with(|b| b.clone()) {
            if b.height < self.height() {
                self.mine = Some(b);
                self.repairing_mine = false;
            }
        }
    }
}
