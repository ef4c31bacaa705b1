//! What the lanes share: the board (the best placement, the bounds, the
//! plain orders still to run and the tree they may have to wait for) and
//! the incumbent placements it holds.

use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};

use super::work::{Goal, Work};
use crate::base::math::align_up;
use crate::heuristic::{Best, Variant};
use crate::plan::options::Source;

/// Above this many buffers, one hole-filling tree is built at a time: each
/// takes up to a kilobyte a buffer (about 700 bytes measured on 100,000),
/// so two at once would pass a quarter of a gigabyte here, and a
/// gigabyte or more at a million. Below it the lanes build theirs side by
/// side.
const ONE_TREE_ABOVE: usize = 1 << 17;

/// The best placement a lane or the board holds.
#[derive(Clone, Debug)]
pub(crate) struct Incumbent {
    pub(crate) offsets: Vec<i64>,
    pub(crate) height: i64,
    pub(crate) source: Source,
}

impl Incumbent {
    pub(crate) fn from_best(b: Best) -> Incumbent {
        Incumbent {
            source: Source::Heuristic(b.variant.strategy, b.restart),
            offsets: b.offsets,
            height: b.height,
        }
    }
}

/// A value the lanes share: behind a lock with `std`; without it there is
/// one lane and no lock is needed.
pub(super) struct Slot<T> {
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

    pub(super) fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        #[cfg(feature = "std")]
        let mut guard = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        #[cfg(not(feature = "std"))]
        let mut guard = self.inner.borrow_mut();
        f(&mut guard)
    }

    pub(super) fn into_inner(self) -> T {
        #[cfg(feature = "std")]
        return self.inner.into_inner().unwrap_or_else(|e| e.into_inner());
        #[cfg(not(feature = "std"))]
        return self.inner.into_inner();
    }
}

/// The height recorded for a plain order stopped once it reached the
/// lowest plain height then finished: not known, and no lower than that.
pub(super) const CUT: i64 = i64::MAX - 1;

/// What the lanes share.
pub(crate) struct Board {
    /// The next plain placement to run, and the heights of those run
    /// (`i64::MAX`: not yet; [`CUT`]: stopped at the lowest of those
    /// finished then, which it could only have reached or passed).
    pub(super) next_plain: AtomicUsize,
    pub(super) plain_heights: Vec<AtomicI64>,
    /// Plain orders claimed while another lane held `holes`: run later.
    pub(super) deferred: Slot<Vec<usize>>,
    /// Held by the lane running a hole-filling placement.
    pub(super) holes: AtomicBool,
    /// Whether hole-filling placements take `holes` (one at a time).
    pub(super) one_tree: bool,
    /// Plain orders finished.
    pub(super) plain_done: AtomicUsize,
    /// Set when a lane has taken the coarse level (see
    /// [`crate::heuristic::coarsen`]), which runs once, after the strategies'
    /// plain orders.
    pub(super) coarse_taken: AtomicBool,
    /// Set when a lane has taken the heaviest buffers first (see
    /// [`crate::heuristic::heavy`]), which runs once, after the coarse
    /// level is taken.
    pub(super) heavy_taken: AtomicBool,
    /// The last perturbed restart number handed out.
    pub(super) next_restart: AtomicU64,
    /// Perturbed restarts placed in full (the figure an outcome reports).
    pub(crate) restarts: AtomicU64,
    /// The lowest height published, and its placement.
    pub(super) height: AtomicI64,
    pub(super) best: Slot<Option<Incumbent>>,
    /// The proven lower bound.
    pub(super) lower: AtomicI64,
    /// Set when the lanes may stop.
    pub(super) halt: AtomicBool,
    /// Set by the lane that proves the work's late bound.
    late_taken: AtomicBool,
    /// Heights are multiples of it: a bound rounds up to it.
    grain: i64,
}

impl Board {
    /// `lower`: a proven bound, on the grain (the work's is rounded to it).
    pub(crate) fn new(work: &Work<'_>, lower: i64) -> Board {
        let board = Board {
            next_plain: AtomicUsize::new(0),
            plain_heights: (0..work.variants.len())
                .map(|_| AtomicI64::new(i64::MAX))
                .collect(),
            deferred: Slot::new(Vec::new()),
            holes: AtomicBool::new(false),
            one_tree: work.layout.len() > ONE_TREE_ABOVE,
            plain_done: AtomicUsize::new(0),
            coarse_taken: AtomicBool::new(false),
            heavy_taken: AtomicBool::new(false),
            next_restart: AtomicU64::new(0),
            restarts: AtomicU64::new(0),
            height: AtomicI64::new(i64::MAX),
            best: Slot::new(None),
            lower: AtomicI64::new(lower),
            grain: work.grain,
            halt: AtomicBool::new(false),
            late_taken: AtomicBool::new(false),
        };
        // The first plain order, placed before the layout: done.
        if let Some(first) = &work.at_once {
            board.next_plain.store(1, Ordering::Relaxed);
            board.plain_heights[0].store(first.height, Ordering::Relaxed);
            board.plain_done.store(1, Ordering::Relaxed);
            board.publish(work, &Incumbent::from_best(first.clone()));
        }
        board
    }

    /// The lowest height of the plain orders finished (`i64::MAX`: none).
    pub(super) fn best_plain(&self) -> i64 {
        self.plain_heights
            .iter()
            .map(|h| h.load(Ordering::Relaxed))
            .min()
            .unwrap_or(i64::MAX)
    }

    /// Whether the caller is the one lane to prove the late bound.
    pub(super) fn take_late(&self) -> bool {
        !self.late_taken.swap(true, Ordering::Relaxed)
    }

    /// Whether every plain order that fills no holes (cheaper than those
    /// that do) has been claimed: the next in line fills holes, or none
    /// is left.
    fn cheap_plain_out(&self, variants: &[Variant]) -> bool {
        let next = self.next_plain.load(Ordering::Relaxed);
        variants.get(next).is_none_or(|v| v.strategy.fills_holes())
    }

    /// Whether any of the first `upto` plain orders, the coarse level or
    /// the heaviest buffers first is still to run.
    pub(super) fn plain_left(&self, upto: usize) -> bool {
        self.next_plain.load(Ordering::Relaxed) < upto
            || self.deferred.with(|d| d.iter().any(|&i| i < upto))
            || !self.coarse_taken.load(Ordering::Relaxed)
            || !self.heavy_taken.load(Ordering::Relaxed)
    }

    /// Whether the caller takes the coarse level now: once the
    /// strategies' own plain orders have all been claimed; or, with
    /// other lanes to run the rest of them (`early`), once one has
    /// finished.
    pub(super) fn take_coarse(&self, primary: usize, early: bool) -> bool {
        let due = match early {
            true => self.plain_done.load(Ordering::Relaxed) >= 1,
            false => self.next_plain.load(Ordering::Relaxed) >= primary,
        };
        due && !self.coarse_taken.load(Ordering::Relaxed)
            && !self.coarse_taken.swap(true, Ordering::Relaxed)
    }

    /// Whether the caller takes the heaviest buffers first now: once the
    /// coarse level is taken (see [`Board::take_coarse`]); with other
    /// lanes, then by another lane than the coarse level's, and the two
    /// run side by side. Where the lanes each build a tree, only once the
    /// plain orders that fill no holes are claimed too: the stage's
    /// first-fit costs what those that fill holes do, and a cheap plain
    /// order (gap-fill on a zero-waste packing) may lead; on a busy
    /// machine it must not wait behind the stage. Above that size the
    /// stage places online only and goes first.
    pub(super) fn take_heavy(&self, variants: &[Variant]) -> bool {
        self.coarse_taken.load(Ordering::Relaxed)
            && (self.one_tree || self.cheap_plain_out(variants))
            && !self.heavy_taken.load(Ordering::Relaxed)
            && !self.heavy_taken.swap(true, Ordering::Relaxed)
    }

    /// The next plain order to run, and whether the caller now holds
    /// `holes` (and must release it): one deferred for the tree when the
    /// tree is free, else the next in line; a hole-filling one met while
    /// another lane holds the tree is deferred. `None`: none can run now.
    pub(super) fn claim_plain(&self, variants: &[Variant]) -> Option<(usize, bool)> {
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

    /// Raises the proven lower bound (to the next height there can be).
    pub(crate) fn prove(&self, bound: i64) {
        self.lower
            .fetch_max(align_up(bound, self.grain), Ordering::Relaxed);
    }

    /// Keeps `inc` if it is the lowest yet; whether it was.
    pub(crate) fn publish(&self, work: &Work<'_>, inc: &Incumbent) -> bool {
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
            if let Some(relay) = work.relay {
                relay(&inc.offsets, inc.height);
            }
        }
        kept
    }

    pub(super) fn done(&self, goal: Goal) -> bool {
        let (height, lower) = (self.height(), self.lower());
        // `i64::MAX` stands for no placement yet (a capacity may be that).
        let placed = height < i64::MAX || self.best.with(|b| b.is_some());
        match goal {
            Goal::Fit(capacity) => (placed && height <= capacity) || lower > capacity,
            Goal::Minimize => placed && height <= lower,
        }
    }
}

#[cfg(all(test, feature = "std", feature = "gen"))]
mod tests {
    use super::*;
    use crate::deadline::Deadline;
    use crate::gen::{generate_problem, Family, Spec};
    use crate::plan::options::Options;

    /// The heaviest buffers first is taken once, after the coarse level
    /// is, and (below the size where the lanes share one tree) not before
    /// every plain order that fills no holes is claimed, or every plain
    /// order is.
    #[test]
    fn the_heavy_stage_waits_for_the_plain_orders_that_fill_no_holes() {
        let spec = Spec {
            family: Family::Issued,
            ..Spec::new(3_000, 1)
        };
        let problem = generate_problem(spec).unwrap();
        let options = Options::default();
        let work = Work::new(&problem, &options, Deadline::none(), 0, None).unwrap();
        let board = Board::new(&work, work.lower_bound);
        assert!(!board.one_tree);
        let variants = &work.variants;
        let first_dear = variants
            .iter()
            .position(|v| v.strategy.fills_holes())
            .unwrap();
        assert!(first_dear >= 2, "{variants:?}");
        board.next_plain.store(first_dear, Ordering::Relaxed);
        assert!(!board.take_heavy(variants), "before the coarse level");
        board.coarse_taken.store(true, Ordering::Relaxed);
        for next in 0..first_dear {
            board.next_plain.store(next, Ordering::Relaxed);
            assert!(
                !board.take_heavy(variants),
                "{:?} still to run",
                variants[next]
            );
        }
        board.next_plain.store(first_dear, Ordering::Relaxed);
        assert!(board.take_heavy(variants));
        assert!(!board.take_heavy(variants), "taken twice");
        // With every plain order claimed, as on one lane.
        board.heavy_taken.store(false, Ordering::Relaxed);
        board.next_plain.store(variants.len(), Ordering::Relaxed);
        assert!(board.take_heavy(variants), "every plain order claimed");
    }
}
