//! A lane's heaviest buffers first (see [`crate::heuristic::heavy`]): the
//! heaviest 256 buffers (or more, where those hold little of the area)
//! planned as a problem of their own (the objective's own plan one level
//! down, whose exact search places a few hundred buffers at or near their
//! bound), every other buffer placed around that placement; then twice
//! as many heavy buffers, and so on while the placements around them keep
//! getting lower.

use alloc::vec::Vec;
use core::sync::atomic::Ordering;
use core::time::Duration;

use super::board::Incumbent;
use super::lane::Lane;
use crate::deadline::{Poll, Stop};
use crate::heuristic::heavy::Heavy;
use crate::heuristic::{Strategy, Variant};
use crate::plan::options::Source;

/// Heavy buffers in the first heavy problem; each next one has twice as
/// many. Fewer leave the heaviest layer to the plain order around them;
/// many more, and the exact search no longer reaches their bound.
const FIRST_HEAVY: usize = 256;

/// The share of the area the first heavy problem's buffers hold, where
/// a problem of at most [`LARGEST_FIRST_HEAVY`] buffers does: then the
/// plain order around the layer places no more than a quarter of the
/// area. On a large problem the heaviest 256 may hold a small part of
/// it; a layer that thin leaves the height to the plain order, and each
/// step of the series that doubles it costs two placements of the whole
/// problem. A higher share skipped the first step where it was the one
/// that led.
const FIRST_SHARE: f64 = 0.75;

/// The most buffers a first heavy problem takes (where fewer hold
/// [`FIRST_SHARE`] of the area); where even these do not, the layer is
/// not thin and the series starts from [`FIRST_HEAVY`], its cheapest.
const LARGEST_FIRST_HEAVY: usize = 16 * FIRST_HEAVY;

/// Heavy problems in a row whose online placement lowers nothing before
/// the series ends.
const MISSES: u32 = 2;

/// The share of the time left that one heavy problem's plan may take
/// beside other lanes (most end at their bound long before).
const HEAVY_SHARE: u32 = 4;

/// With one lane, the least time one heavy problem's plan may take;
/// beyond it, as long as the plan has run so far. Not a share of the time
/// left: there a larger budget must do all that a smaller one does (see
/// "Dominance" in `schedule`), the same heavy plans included.
const HEAVY_FLOOR: Duration = Duration::from_millis(250);

impl Lane<'_, '_> {
    /// With a timeout and a plan one level down: heavy problems of
    /// [`FIRST_HEAVY`] buffers (or the fewest up to
    /// [`LARGEST_FIRST_HEAVY`] that hold [`FIRST_SHARE`] of the area) and
    /// twice as many each time, each planned
    /// in `1 / HEAVY_SHARE` of the time left (with one lane: for as long
    /// as the plan has run, at least [`HEAVY_FLOOR`]); the rest placed online
    /// around each placement, by online's holes and by coalescing's (a
    /// few holes a buffer, at any size), and where
    /// that is the lowest online placement yet, first-fit too (dearer,
    /// most often lower; cut once it reaches the lowest height known),
    /// each offered. The series ends at once where the first heavy
    /// problem's online placement is no lower than the online strategy's
    /// plain order (a heavy layer is not what decides the height there),
    /// else at the [`MISSES`]th heavy problem in a row whose online
    /// placement is no lower than the lowest before it. A heavy plan
    /// that is itself no lower than that is such a miss without placing
    /// anything around it.
    pub(super) fn heavy(&mut self, poll: &mut Poll<'_>) -> Result<(), Stop> {
        let (Some(solve), Some(_)) = (self.coarse_solve, self.deadline.remaining()) else {
            return Ok(());
        };
        let layout = &self.work.layout;
        // Around the heavy layer: the online and the coalescing choice of
        // holes, those of them the method runs (the online one if none).
        let online = Variant::plain(Strategy::Online);
        let coalescing = Variant::plain(Strategy::Coalescing);
        let mut around: Vec<Variant> = [online, coalescing]
            .into_iter()
            .filter(|v| self.work.variants.contains(v))
            .collect();
        if around.is_empty() {
            around.push(online);
        }
        // The lowest online placement so far: their plain orders (placed
        // first), then around each heavy problem.
        let mut lowest = i64::MAX;
        for (v, h) in self.work.variants.iter().zip(&self.board.plain_heights) {
            if around.contains(v) {
                lowest = lowest.min(h.load(Ordering::Relaxed));
            }
        }
        let sizes = (FIRST_HEAVY, LARGEST_FIRST_HEAVY);
        let first = Heavy::first_size(layout, sizes, FIRST_SHARE, poll)?;
        let (mut k, mut misses) = (first, 0);
        while let Some(heavy) = Heavy::new(self.work.problem, layout, k, poll)? {
            let allowed = match self.lanes {
                1 => self.deadline.elapsed().max(HEAVY_FLOOR),
                _ => self.deadline.remaining().unwrap_or_default() / HEAVY_SHARE,
            };
            let got = solve(&heavy.problem, self.deadline.sooner(allowed), &|_, _| {});
            poll.now()?;
            let Some(placed) = got else {
                return Ok(());
            };
            k = 2 * heavy.len();
            // Around a plan lower than the lowest online placement so far,
            // each placed whole, with no height cut (the online strategies
            // cost the same either way): the series compares the lower.
            // Both the online and the coalescing choice of holes, where
            // the method runs both: which leaves less around a heavy layer
            // differs by problem, and each costs about a plain order.
            // Around any other plan, nothing: the heavy buffers keep their
            // offsets, so no placement there is lower than the plan, and
            // the series counts the miss below as it stands.
            let mut height = i64::MAX;
            let arounds = if placed.height < lowest {
                &around[..]
            } else {
                &[]
            };
            for &variant in arounds {
                let found = heavy.around(layout, variant, &placed.offsets, i64::MAX, poll)?;
                let Some((offsets, placed_height)) = found else {
                    return Ok(());
                };
                height = height.min(placed_height);
                self.offer(Incumbent {
                    offsets,
                    height: placed_height,
                    source: Source::Heaviest,
                });
            }
            // A first heavy problem that does not lower the plain order:
            // a heavy layer is not what decides the height here. Later, a
            // larger one may pack worse (its plan further from its bound)
            // and the next one better again: the series ends at the
            // second in a row that lowers nothing.
            if height >= lowest {
                misses += 1;
                if misses == MISSES || heavy.len() == first {
                    return Ok(());
                }
                continue;
            }
            (lowest, misses) = (height, 0);
            // First-fit only where the lanes may each build a tree: above
            // that size it costs seconds, and the one tree at a time is
            // the plain orders' (see `Board::claim_plain`).
            if !self.board.one_tree {
                // Cut at the lowest height known, not only the lane's own:
                // a heavy placement is worth its cost only where it leads.
                let limit = self.height().min(self.board.height()).saturating_sub(1);
                let first_fit = Variant::plain(Strategy::FirstFit);
                let found = heavy.around(layout, first_fit, &placed.offsets, limit, poll)?;
                if let Some((offsets, height)) = found {
                    self.offer(Incumbent {
                        offsets,
                        height,
                        source: Source::Heaviest,
                    });
                }
            }
        }
        Ok(())
    }
}

#[cfg(all(test, feature = "std", feature = "gen"))]
mod tests {
    extern crate std;

    use super::super::board::Board;
    use super::super::work::{Relay, Work};
    use super::*;
    use crate::deadline::Deadline;
    use crate::gen::{generate_problem, Family, Spec};
    use crate::heuristic::Best;
    use crate::model::buffer::Buffer;
    use crate::model::problem::Problem;
    use crate::model::solution::{validate, Solution};
    use crate::plan::minimize::{minimize_level, one_level_down};
    use crate::plan::options::Options;
    use core::sync::atomic::AtomicUsize;

    /// A clock that reads the work done, not the time (each read moves it
    /// 20 microseconds on), one per test thread: the heavy plans' time
    /// (as long as the plan has run) is then the same on a loaded
    /// machine as on a quiet one, and so is what the series places. One
    /// lane runs on the test's own thread, its plans one level down too.
    fn counting_clock() -> u64 {
        std::thread_local!(static READS: core::cell::Cell<u64> = const { core::cell::Cell::new(0) });
        READS.with(|r| {
            r.set(r.get() + 1);
            r.get() * 20_000
        })
    }

    /// What the heaviest buffers first leaves on the board of a one-lane
    /// plan of `problem` (each heavy plan one level down on one lane
    /// too), the online strategy's plain height it starts from, and how
    /// many heavy problems it planned.
    fn heaviest_first(problem: &Problem) -> (Incumbent, i64, usize) {
        let options = Options {
            threads: 1,
            clock: Some(counting_clock),
            ..Options::default()
        };
        let minute = Some(Duration::from_secs(60));
        let deadline = Deadline::new(Some(counting_clock), minute, None);
        let timed = Deadline::new(Some(counting_clock), minute, None);
        let mut work = Work::new(problem, &options, timed, 0, None).unwrap();
        let online = Variant::plain(Strategy::Online);
        assert_eq!(work.variants.first(), Some(&online));
        let mut poll = Poll::new(&deadline, u64::MAX);
        let plain: Best = crate::heuristic::plain(&work.layout, online, i64::MAX, &mut poll)
            .unwrap()
            .unwrap();
        let plain_height = plain.height;
        work.at_once = Some(plain);
        let planned = AtomicUsize::new(0);
        let solve = |heavy: &Problem, deadline: Deadline<'_>, relay: &Relay<'_>| {
            planned.fetch_add(1, Ordering::Relaxed);
            one_level_down(&work, heavy, (deadline, relay), minimize_level)
        };
        let board = Board::new(&work, work.lower_bound);
        let mut lane = Lane::new(&work, &board, &deadline, 0, 1, Some(&solve));
        lane.heavy(&mut poll).unwrap();
        let best = board.best.with(|b| b.clone()).unwrap();
        let solution = Solution {
            offsets: best.offsets.clone(),
        };
        assert_eq!(validate(problem, &solution), Ok(()));
        (best, plain_height, planned.into_inner())
    }

    /// Where a thin layer of large long-lived buffers decides the height
    /// (sizes independent of lifetimes, buffers issued in program order),
    /// the heaviest buffers first ends below the online strategy's plain
    /// order, which it is measured against, with a valid placement.
    #[test]
    fn the_heaviest_buffers_first_lower_the_online_order_where_they_decide() {
        let spec = Spec {
            family: Family::Issued,
            ..Spec::new(3_000, 1)
        };
        let (best, plain, planned) = heaviest_first(&generate_problem(spec).unwrap());
        assert_eq!(best.source, Source::Heaviest);
        assert!(best.height < plain, "{} against {plain}", best.height);
        assert!(planned >= 2, "{planned}");
    }

    /// Where the online order is already at the max load (one buffer alive
    /// at a time), nothing placed around a heavy problem can be lower, and
    /// the series ends after the first: one heavy plan, not a series of
    /// them spending the lane's time.
    #[test]
    fn the_series_ends_at_once_where_a_heavy_layer_lowers_nothing() {
        let buffers = (0..3_000).map(|i| Buffer::new("", i, i + 1, 10)).collect();
        let problem = Problem::new(i64::MAX, buffers).unwrap();
        let (best, plain, planned) = heaviest_first(&problem);
        assert_eq!((best.height, plain), (10, 10));
        assert_eq!(planned, 1);
    }
}
